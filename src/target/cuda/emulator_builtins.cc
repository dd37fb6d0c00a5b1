// The cuda emulator's builtin and device calls: barriers, cp.async groups, vector and casting copies,
// device_assert, atomics and tl::allreduce, each modelled by its contract in include/tl/cuda.
#include "target/cuda/emulator_impl.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ir/error.h"
#include "ir/functor.h"

namespace tl::cuda_emu {

Template parse_template(const std::string& callee) {
  Template t;
  auto lt = callee.find('<');
  t.name = callee.substr(0, lt);
  if (lt == std::string::npos) return t;
  std::string inner = callee.substr(lt + 1, callee.rfind('>') - lt - 1);
  std::string cur;
  for (char c : inner) {
    if (c == ',') {
      t.args.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) t.args.push_back(cur);
  return t;
}

void Emulator::barrier(const std::vector<char>& act, const char* what) {
  if (!whole_block(act))
    throw_error<RuntimeError>("emulator: ", what, " reached by only some threads of the block (a hang on the GPU)");
  ++epoch_;
}

Val Emulator::atomic_update(const std::string& kind, const Expr& ref, const Val& v, int64_t t) {
  const auto* l = ref.as<BufferLoadNode>();
  TL_ICHECK(l, "atomic builtins take a BufferLoad");
  DataType at = l->buffer.dtype();
  Val p;
  p.mem = mem_of(l->buffer, t);
  p.off = flat_index(l->buffer, l->indices, t) * at.element_bytes();
  check_range(p.mem, p.off, at.element_bytes(), "atomic");
  Val old = decode(at, p.mem.base + p.off), out = old;
  if (kind == "load") return old;
  if (kind == "store") {
    out = v;
  } else if (at.is_float()) {
    double a = old.f, b = v.f;
    // max/min ignore a NaN operand (fmaxf / fminf)
    if (kind == "add") out.f = round_to(at, a + b);
    else if (kind == "max") out.f = std::isnan(a) ? b : std::isnan(b) ? a : std::max(a, b);
    else out.f = std::isnan(a) ? b : std::isnan(b) ? a : std::min(a, b);
  } else {
    if (kind == "add") out.i = wrap_int(at, old.i + v.i);
    else if (kind == "or") out.i = wrap_int(at, old.i | v.i);
    else if (kind == "and") out.i = wrap_int(at, old.i & v.i);
    else if (kind == "xor") out.i = wrap_int(at, old.i ^ v.i);
    else if (kind == "max") out.i = at.is_uint() ? static_cast<int64_t>(std::max<uint64_t>(old.i, v.i)) : std::max(old.i, v.i);
    else out.i = at.is_uint() ? static_cast<int64_t>(std::min<uint64_t>(old.i, v.i)) : std::min(old.i, v.i);
  }
  encode(at, out, p.mem.base + p.off);
  return old;
}

// The scalar atomic builtin's kind: "add" for tl.atomic_add_scalar, ..., "" for other ops.
static std::string atomic_kind(const std::string& op) {
  if (op == "tl.atomic_add_scalar") return "add";
  if (op == "tl.atomic_max_scalar") return "max";
  if (op == "tl.atomic_min_scalar") return "min";
  if (op == "tl.atomic_or_scalar") return "or";
  if (op == "tl.atomic_and_scalar") return "and";
  if (op == "tl.atomic_xor_scalar") return "xor";
  if (op == "tl.atomic_store") return "store";
  if (op == "tl.atomic_load") return "load";
  return "";
}

// T.wait (include/tl/cuda/dist.h, tl::dist::wait): one look at the flag, which must already compare
// true: the emulator runs one device and nothing else, so a flag that does not would never change.
void Emulator::dist_wait(const CallNode* c, const std::vector<char>& act) {
  TL_ICHECK(c->args.size() == 4, "tl.dist.wait takes 4 arguments");
  const auto* addr = c->args[0].as<CallNode>();
  const auto* flag = addr && !addr->args.empty() ? addr->args[0].as<BufferLoadNode>() : nullptr;
  TL_ICHECK(flag, "tl.dist.wait without its flag's address");
  const DataType ft = flag->buffer.dtype();
  int64_t t = 0;
  while (t < threads_ && !act[static_cast<size_t>(t)]) ++t;
  if (t == threads_) return;
  ++report_.dist_polls;
  const int64_t x = atomic_update("load", addr->args[0], Val(), t).i;
  const int64_t v = wrap_int(ft, eval(c->args[1], t).i);
  const int64_t cmp = get_const_int(c->args[2], "T.wait comparison");
  auto less = [&](int64_t a, int64_t b) {
    return ft.is_uint() ? static_cast<uint64_t>(a) < static_cast<uint64_t>(b) : a < b;
  };
  const bool ok = cmp == 0 ? x == v : cmp == 1 ? x != v : cmp == 2 ? !less(x, v) : cmp == 3 ? less(v, x)
                : cmp == 4 ? !less(v, x) : less(x, v);
  if (!ok) {
    const auto* what = c->args[3].as<StringImmNode>();
    const char* names[] = {"==", "!=", ">=", ">", "<=", "<"};
    throw_error<RuntimeError>("emulator: ", what ? what->value : std::string("T.wait()"), " never completes: ",
                              flag->buffer.name(), "[", flat_index(flag->buffer, flag->indices, t), "] is ", x,
                              ", waiting for ", names[cmp >= 0 && cmp < 6 ? cmp : 5], " ", v,
                              " (the emulator runs one device and nothing else that could set it)");
  }
  // Executed by a block (or the consumers): they meet after the look (block_sync in dist.h).
  if (std::count(act.begin(), act.end(), 1) > 1) barrier(act, "T.wait()");
}

void Emulator::evaluate(const CallNode* c, const std::vector<char>& act, const Span& span) {
  const std::string& op = c->op;
  if (op == "tl.sync_threads") return barrier(act, "__syncthreads()");
  if (op == "tl.dist.wait") return dist_wait(c, act);
  if (op == "tl.dist.barrier") {  // one device: the block meets only itself
    if (dev_.world != 1)
      throw_error<NotImplemented>("emulator: T.barrier of ", dev_.world, " devices (the emulator runs one)");
    return barrier(act, "T.barrier()");
  }
  if (op == "tl.dist.signal" && c->args.size() == 5) {  // to this device only: a store / add by one thread
    barrier(act, "T.signal()");
    int64_t t = 0;
    while (t < threads_ && !act[static_cast<size_t>(t)]) ++t;
    if (t == threads_) return;
    const int64_t pe = eval(c->args[2], t).i;
    if (pe != dev_.rank || dev_.world != 1)
      throw_error<NotImplemented>("emulator: T.signal to device ", pe, " (the emulator runs one device)");
    const auto* addr = c->args[0].as<CallNode>();
    TL_ICHECK(addr && !addr->args.empty(), "tl.dist.signal without its flag's address");
    atomic_update(get_const_int(c->args[3], "T.signal op") ? "add" : "store", addr->args[0], eval(c->args[1], t), t);
    return barrier(act, "T.signal()");
  }
  if (op == "tl.cluster_sync" || op == "cuda.mbarrier_arrive_cluster_warps")
    throw_error<NotImplemented>("emulator: T.cluster_sync and cluster mbarriers (the CTAs of a cluster run together "
                                "on a GPU; the emulator runs one block at a time)");
  if (std::string kind = atomic_kind(op); !kind.empty()) {
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)])
        atomic_update(kind, c->args[0], kind == "load" ? Val() : eval(c->args[1], t), t);
    return;
  }
  if (op == "cuda.tma_store" || op == "cuda.tma_store_commit" || op == "cuda.tma_store_wait" ||
      op == "cuda.fence_proxy_async")
    return bulk_builtin(c, act);
  if (op.rfind("cuda.mbarrier_", 0) == 0 || op == "cuda.tma_load" || op == "cuda.sync_all" ||
      op == "cuda.fence_barrier_init" || op.rfind("cuda.setmaxnreg_", 0) == 0 || op.rfind("cuda.named_barrier_", 0) == 0)
    return async_builtin(c, act);
  if (op == "cuda.cp_async_commit") {
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)]) {
        groups_[static_cast<size_t>(t)].push_back(open_[static_cast<size_t>(t)]);
        open_[static_cast<size_t>(t)].clear();
      }
    return;
  }
  if (op == "cuda.cp_async_wait") {
    int64_t keep = get_const_int(c->args[0], "wait count");
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      auto& gs = groups_[static_cast<size_t>(t)];
      while (static_cast<int64_t>(gs.size()) > keep) {
        for (auto& [b, n] : gs.front())
          for (int64_t x = b; x < b + n; ++x) {
            bytes_[static_cast<size_t>(x)].pending_async = false;
            bytes_[static_cast<size_t>(x)].w_epoch = epoch_;
          }
        gs.erase(gs.begin());
      }
    }
    return;
  }
  if (op == "cuda.copy_vec" || op == "cuda.copy_vec_zfill" || op == "cuda.cp_async") {
    bool async = op == "cuda.cp_async";
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      Val dst = address(c->args[0], t), src = address(c->args[1], t);
      int64_t n = get_const_int(c->args[2], "copy size");
      bool valid = c->args.size() < 4 || eval(c->args[3], t).i != 0;
      if (dst.off % n || (valid && src.off % n && src.mem.space != Space::kGlobal))
        throw_error<RuntimeError>("emulator: misaligned ", n, "-byte copy ('", src.mem.name, "' -> '", dst.mem.name,
                                  "')");
      if (valid && src.mem.space == Space::kGlobal &&
          (reinterpret_cast<uintptr_t>(src.mem.base) + static_cast<uintptr_t>(src.off)) % static_cast<uintptr_t>(n))
        throw_error<RuntimeError>("emulator: misaligned ", n, "-byte read of '", src.mem.name, "'");
      check_range(dst.mem, dst.off, n, "vector write");
      if (valid) {
        check_range(src.mem, src.off, n, "vector read");
        shared_read(src.mem, src.off, n, t);
        std::memmove(dst.mem.base + dst.off, src.mem.base + src.off, static_cast<size_t>(n));
      } else {
        std::memset(dst.mem.base + dst.off, 0, static_cast<size_t>(n));
      }
      shared_write(dst.mem, dst.off, n, t, async);
      if (async && dst.mem.space == Space::kShared)
        open_[static_cast<size_t>(t)].push_back({dst.mem.base - smem_.data() + dst.off, n});
    }
    return;
  }
  if (op == "cuda.copy_cast") {
    DataType dt = address_type(c->args[0]), st = address_type(c->args[1]);
    int64_t n = get_const_int(c->args[2], "copy length");
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      Val dst = address(c->args[0], t), src = address(c->args[1], t);
      int64_t ds = n * dt.element_bytes(), ss = n * st.element_bytes();
      check_range(dst.mem, dst.off, ds, "vector write");
      check_range(src.mem, src.off, ss, "vector read");
      shared_read(src.mem, src.off, ss, t);
      shared_write(dst.mem, dst.off, ds, t, false);
      for (int64_t k = 0; k < n; ++k) {
        Val v = decode(st, src.mem.base + src.off + k * st.element_bytes());
        encode(dt, convert(dt, st, v), dst.mem.base + dst.off + k * dt.element_bytes());
      }
    }
    return;
  }
  if (op == "cuda.stmatrix_x4") {
    // Per warp (all 32 lanes): lane 8 m + i gives the address of row i of matrix m; lane l's
    // registers src[2 m], src[2 m + 1] (converted) are columns 2 (l % 4), + 1 of row l / 4 of matrix m.
    DataType dt = address_type(c->args[0]), st = address_type(c->args[1]);
    const int64_t db = dt.element_bytes(), sb = st.element_bytes();
    for (int64_t w = 0; w * 32 < threads_; ++w) {
      int64_t active = 0;
      for (int64_t t = w * 32; t < std::min<int64_t>(threads_, w * 32 + 32); ++t) active += act[static_cast<size_t>(t)];
      if (active == 0) continue;
      if (active != 32) throw_error<RuntimeError>("emulator: stmatrix with ", active, " of a warp's 32 lanes");
      std::vector<Val> rows(32);
      for (int64_t l = 0; l < 32; ++l) {
        rows[static_cast<size_t>(l)] = address(c->args[0], w * 32 + l);
        const Val& a = rows[static_cast<size_t>(l)];
        if (a.mem.space != Space::kShared || (a.mem.base - smem_.data() + a.off) % 16)
          throw_error<RuntimeError>("emulator: stmatrix row address of lane ", l, " ('", a.mem.name,
                                    "') not 16-byte aligned shared memory");
        check_range(a.mem, a.off, 8 * db, "stmatrix write");
      }
      for (int64_t l = 0; l < 32; ++l) {
        const int64_t t = w * 32 + l;
        Val src = address(c->args[1], t);
        check_range(src.mem, src.off, 8 * sb, "stmatrix register read");
        for (int64_t m = 0; m < 4; ++m) {
          const Val& row = rows[static_cast<size_t>(8 * m + l / 4)];
          const int64_t off = row.off + 2 * (l % 4) * db;
          shared_write(row.mem, off, 2 * db, t, false);
          for (int64_t k = 0; k < 2; ++k) {
            Val v = decode(st, src.mem.base + src.off + (2 * m + k) * sb);
            encode(dt, convert(dt, st, v), row.mem.base + off + k * db);
          }
        }
      }
    }
    return;
  }
  if (op == "cuda.store_exchange") {
    // Lane q of each group of G lanes stores, at its dst, the V-element groups number q
    // (registers src + q * R) of lanes 0 .. G-1 of its group, in lane order (tl::store_exchange).
    DataType dt = address_type(c->args[0]), st = address_type(c->args[1]);
    const int64_t G = get_const_int(c->args[2], "lane group"), V = get_const_int(c->args[3], "group length"),
                  R = get_const_int(c->args[4], "register stride");
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      const int64_t q = eval(c->args[5], t).i;
      if (q != t % G) throw_error<RuntimeError>("emulator: store_exchange lane index ", q, " for thread ", t);
      Val dst = address(c->args[0], t);
      const int64_t ds = G * V * dt.element_bytes();
      check_range(dst.mem, dst.off, ds, "vector write");
      shared_write(dst.mem, dst.off, ds, t, false);
      for (int64_t p = 0; p < G; ++p) {
        const int64_t u = t - q + p;
        if (u >= threads_ || !act[static_cast<size_t>(u)])
          throw_error<RuntimeError>("emulator: store_exchange with lane ", u, " of the group inactive");
        Val src = address(c->args[1], u);
        const int64_t off = src.off + q * R * st.element_bytes();
        check_range(src.mem, off, V * st.element_bytes(), "register read");
        for (int64_t k = 0; k < V; ++k) {
          Val x = decode(st, src.mem.base + off + k * st.element_bytes());
          encode(dt, convert(dt, st, x), dst.mem.base + dst.off + (p * V + k) * dt.element_bytes());
        }
      }
    }
    return;
  }
  if (op == "tl.device_assert") {
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)] && eval(c->args[0], t).i == 0 && report_.device_assert.empty()) {
        const auto* m = c->args.size() > 1 ? c->args[1].as<StringImmNode>() : nullptr;
        report_.device_assert = std::string("device_assert failed at ") + span.str() + " (thread " +
                                std::to_string(t) + ")" + (m ? ": " + m->value : "");
      }
    return;
  }
  if (op == "tl.printf" || op == "tl.print_scalar") return;
  if (op == "cuda.call" || op == "cuda.call_sync") {
    const std::string callee = c->args[0].as<StringImmNode>()->value;
    Template tp = parse_template(callee);
    if (tp.name.rfind("tl::gemm_", 0) == 0) return gemm(c, tp, act);
    if (tp.name.rfind("tl::wgmma_gemm_", 0) == 0) return wgmma_gemm(c, tp, act);
    if (tp.name == "tl::wgmma_drain") {
      wgmma_retire(0);
      return;
    }
    if (tp.name == "tl::wgmma_wait_regs") {
      wgmma_retire(static_cast<size_t>(std::stoll(tp.args.at(0))));
      return;
    }
    if (tp.name == "tl::atomic_add" || tp.name == "tl::atomic_max" || tp.name == "tl::atomic_min") {
      const auto* ad = c->args[1].as<CallNode>();
      TL_ICHECK(ad && ad->op == "cuda.address_of", tp.name + " takes an address_of operand");
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)]) atomic_update(tp.name.substr(11), ad->args[0], eval(c->args[2], t), t);
      return;
    }
    if (tp.name == "tl::print_element" || tp.name == "tl::print_value") return;
    throw_error<NotImplemented>("emulator: device function ", tp.name);
  }
  throw_error<NotImplemented>("emulator: builtin ", op);
}

void Emulator::collective_store(const BufferStoreNode* st, const CallNode* c, const std::vector<char>& act) {
  const std::string callee = c->args[0].as<StringImmNode>()->value;
  Template tp = parse_template(callee);
  if (tp.name != "tl::allreduce") throw_error<NotImplemented>("emulator: value-returning call ", tp.name);
  const DataType t = c->dtype;
  const std::string& opname = tp.args[0];
  int64_t extent = std::stoll(tp.args[1]), stride = std::stoll(tp.args[2]);
  // The groups are formed over the `tid` argument (the block thread, or the thread rotated by a
  // fragment's thread offset: cuda_reduce.cc): in[] and the groups are indexed by it.
  std::vector<Val> in(static_cast<size_t>(threads_));
  std::vector<int64_t> tid_of(static_cast<size_t>(threads_), -1);
  std::vector<char> seen(static_cast<size_t>(threads_), 0);
  for (int64_t x = 0; x < threads_; ++x) {
    if (!act[static_cast<size_t>(x)]) continue;
    const int64_t tid = eval(c->args[2], x).i;
    if (tid < 0 || tid >= threads_ || seen[static_cast<size_t>(tid)]++)
      throw_error<RuntimeError>("emulator: tl::allreduce called with thread index ", tid, " by thread ", x,
                                " (not a permutation of the block's threads)");
    tid_of[static_cast<size_t>(x)] = tid;
    in[static_cast<size_t>(tid)] = eval(c->args[1], x);
  }
  if (c->op == "cuda.call_sync") {
    if (!whole_block(act)) throw_error<RuntimeError>("emulator: a block-wide reduction reached by only some threads");
    // ws[tid] = v; __syncthreads(); ... read ...; __syncthreads()
    if (c->args.size() > 3)
      for (int64_t x = 0; x < threads_; ++x) {
        if (!act[static_cast<size_t>(x)]) continue;
        Val ws = address(c->args[3], x);
        shared_write(ws.mem, ws.off + tid_of[static_cast<size_t>(x)] * t.element_bytes(), t.element_bytes(), x, false);
      }
    ++epoch_;
  }
  for (int64_t x = 0; x < threads_; ++x) {
    if (!act[static_cast<size_t>(x)]) continue;
    const int64_t tid = tid_of[static_cast<size_t>(x)];
    int64_t base = tid - ((tid / stride) % extent) * stride;
    Val r = in[static_cast<size_t>(base)];
    for (int64_t i = 1; i < extent; ++i) {
      const Val& o = in[static_cast<size_t>(base + i * stride)];
      if (opname == "tl::SumOp") {
        if (t.is_float()) r.f = round_to(t, r.f + o.f);
        else r.i = wrap_int(t, r.i + o.i);
      } else if (opname == "tl::MaxOp") {
        if (t.is_float()) r.f = std::isnan(r.f) ? o.f : std::isnan(o.f) ? r.f : std::max(r.f, o.f);
        else r.i = std::max(r.i, o.i);
      } else if (opname == "tl::MaxOpNan" || opname == "tl::MinOpNan") {
        const bool is_max = opname == "tl::MaxOpNan";
        if (t.is_float()) r.f = std::isnan(r.f) ? r.f : std::isnan(o.f) ? o.f : is_max ? std::max(r.f, o.f) : std::min(r.f, o.f);
        else r.i = is_max ? std::max(r.i, o.i) : std::min(r.i, o.i);
      } else {
        if (t.is_float()) r.f = std::isnan(r.f) ? o.f : std::isnan(o.f) ? r.f : std::min(r.f, o.f);
        else r.i = std::min(r.i, o.i);
      }
    }
    store(st->buffer, st->indices, r, x);
  }
  if (c->op == "cuda.call_sync") ++epoch_;
}

}  // namespace tl::cuda_emu
