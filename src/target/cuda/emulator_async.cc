// The cuda emulator's warp-specialized kernels (src/transform/warp_specialize.h): the consumer and
// producer roles run as coroutines, mbarriers complete phases from arrivals and transaction bytes,
// and TMA copies move boxes of global tensors into swizzled shared memory (include/tl/cuda/tma.h).
//
// Ordering checks, on top of the barrier-epoch race checker of emulator_memory.cc:
//   - a read of shared bytes a TMA copy wrote must come after a wait that saw the mbarrier phase
//     the copy completed on (by the reading thread; for a wgmma, by the thread that issued it);
//   - a TMA copy may overwrite bytes other threads read only after those threads released them:
//     each thread counts its mbarrier arrivals (its clock); a phase remembers the clocks of its
//     arrivals, and a thread that waits for the phase learns them; the thread issuing the copy
//     must have learnt, for every reader, a clock at or after its read;
//   - a TMA copy into bytes an in-flight wgmma still reads is a race (as for any write);
//   - an mbarrier wait that can never complete (both roles blocked with no progress, or the
//     other role finished) is an error: the kernel would hang;
//   - a TMA store (shared -> global, the epilogue form) reads its tile when issued: bytes that
//     threads stored must have been fenced for the async proxy by the storing thread
//     (fence.proxy.async) and, when another thread stored them, ordered by a barrier; until its
//     issuing thread's cp.async.bulk.wait_group.read retires its bulk group, a write of those bytes
//     is a race, and the retirement counts as that thread's read (other threads' writes need a
//     barrier after it); a block that ends with stores not waited for is an error.
#include <cstring>
#include <set>
#include <thread>

#include "ir/error.h"
#include "ir/functor.h"
#include "target/cuda/emulator_impl.h"

namespace tl::cuda_emu {

namespace {

struct AbortRole {};  // unwinds a role when the other one failed

}  // namespace

bool Emulator::whole_block(const std::vector<char>& act) const {
  if (sched_ && cur_role_ >= 0) return act == sched_->masks[cur_role_];
  for (char a : act)
    if (!a) return false;
  return true;
}

void Emulator::run_roles(const IfThenElseNode& roles, const std::vector<char>& act) {
  if (sched_) throw_error<NotImplemented>("emulator: nested warp specialization");
  sched_ = std::make_unique<RoleScheduler>();
  RoleScheduler& sc = *sched_;
  sc.masks[0].assign(act.size(), 0);
  sc.masks[1].assign(act.size(), 0);
  for (int64_t t = 0; t < threads_; ++t)
    if (act[static_cast<size_t>(t)]) sc.masks[eval(roles.cond, t).i ? 0 : 1][static_cast<size_t>(t)] = 1;
  const Stmt bodies[2] = {roles.then_case, roles.else_case};
  // The roles run interleaved over one variable table: they must not bind the same variables.
  std::set<const VarNode*> bound[2];
  for (int r = 0; r < 2; ++r)
    post_order_visit(bodies[r], [&](const Stmt& x) {
      if (const auto* f = x.as<ForNode>()) bound[r].insert(f->var.get());
      if (const auto* l = x.as<LetStmtNode>()) bound[r].insert(l->var.get());
    });
  for (const VarNode* v : bound[0])
    if (bound[1].count(v))
      throw_error<NotImplemented>("emulator: both warp roles bind variable '", v->name, "'");
  auto role = [&](int r) {
    {
      std::unique_lock<std::mutex> lock(sc.mu);
      sc.cv.wait(lock, [&] { return sc.running == r; });
    }
    try {
      if (!sc.abort) exec(bodies[r], sc.masks[r]);
    } catch (const AbortRole&) {
    } catch (...) {
      if (!sc.error) sc.error = std::current_exception();
      sc.abort = true;
    }
    std::lock_guard<std::mutex> lock(sc.mu);
    sc.done[r] = true;
    sc.running = sc.done[1 - r] ? -1 : 1 - r;
    cur_role_ = sc.running;
    sc.cv.notify_all();
  };
  std::thread consumer(role, 0), producer(role, 1);
  {
    std::unique_lock<std::mutex> lock(sc.mu);
    sc.running = 1;  // the producer first: it runs ahead until the stages are full
    cur_role_ = 1;
    sc.cv.notify_all();
    sc.cv.wait(lock, [&] { return sc.done[0] && sc.done[1]; });
  }
  consumer.join();
  producer.join();
  std::exception_ptr err = sc.error;
  sched_.reset();
  cur_role_ = -1;
  if (err) std::rethrow_exception(err);
}

void Emulator::handoff(int to) {
  RoleScheduler& sc = *sched_;
  const int me = cur_role_;
  std::unique_lock<std::mutex> lock(sc.mu);
  sc.running = to;
  cur_role_ = to;
  sc.cv.notify_all();
  sc.cv.wait(lock, [&] { return sc.running == me; });
  cur_role_ = me;
  if (sc.abort) throw AbortRole();
}

void Emulator::block_until(const std::function<bool()>& ready, const char* what) {
  if (ready()) return;
  if (!sched_ || cur_role_ < 0)
    throw_error<RuntimeError>("emulator: ", what, " that never completes (no other warp role runs): the kernel hangs");
  RoleScheduler& sc = *sched_;
  const int me = cur_role_, other = 1 - me;
  while (!ready()) {
    if (sc.done[other] || (sc.blocked_at[me] == sc.progress && sc.blocked_at[other] == sc.progress))
      throw_error<RuntimeError>("emulator: ", what, " that never completes (the ", me ? "producer" : "consumers",
                                " wait while the ", me ? "consumers" : "producer",
                                sc.done[other] ? " finished" : " wait too): the kernel hangs");
    sc.blocked_at[me] = sc.progress;
    handoff(other);
  }
  sc.blocked_at[me] = -1;
}

MBarrier& Emulator::mbarrier_at(const Expr& addr, const std::vector<char>& act, int64_t* key) {
  int64_t k = -1;
  for (int64_t t = 0; t < threads_; ++t) {
    if (!act[static_cast<size_t>(t)]) continue;
    Val a = address(addr, t);
    if (a.mem.space != Space::kShared) throw_error<RuntimeError>("emulator: an mbarrier outside shared memory");
    int64_t abs = (a.mem.base - smem_.data()) + a.off;
    if (abs % 8) throw_error<RuntimeError>("emulator: an mbarrier at shared byte ", abs, ", not 8-byte aligned");
    if (k >= 0 && k != abs) throw_error<NotImplemented>("emulator: threads name different mbarriers in one operation");
    k = abs;
  }
  *key = k;
  auto it = mbars_.find(k);
  if (it == mbars_.end()) throw_error<RuntimeError>("emulator: mbarrier at shared byte ", k, " used before its init");
  return it->second;
}

void Emulator::mbarrier_arrive(MBarrier& b, int64_t t, int64_t tx) {
  b.tx += tx;
  if (t >= 0) {
    b.arrivals.push_back({static_cast<int32_t>(t), clock_[static_cast<size_t>(t)]});
    ++clock_[static_cast<size_t>(t)];
    if (--b.pending < 0) throw_error<RuntimeError>("emulator: more mbarrier arrivals than its count");
  }
  if (sched_) ++sched_->progress;
  if (b.pending == 0 && b.tx == 0) {
    b.released[b.phase] = std::move(b.arrivals);
    b.arrivals.clear();
    b.released.erase(b.released.begin(), b.released.lower_bound(b.phase - 4));
    ++b.phase;
    b.pending = b.expected;
  }
}

void Emulator::async_builtin(const CallNode* c, const std::vector<char>& act) {
  const std::string& op = c->op;
  auto first_active = [&] {
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)]) return t;
    return int64_t(-1);
  };
  if (op == "cuda.sync_all") return barrier(act, "__syncthreads()");
  if (op == "cuda.fence_barrier_init" || op == "cuda.setmaxnreg_inc" || op == "cuda.setmaxnreg_dec") return;
  if (op == "cuda.mbarrier_init") {
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      Val a = address(c->args[0], t);
      int64_t abs = (a.mem.base - smem_.data()) + a.off;
      MBarrier b;
      b.expected = b.pending = eval(c->args[1], t).i;
      mbars_[abs] = b;
    }
    return;
  }
  if (op == "cuda.tma_load") return tma_load(c, act);
  if (op == "cuda.named_barrier_sync" || op == "cuda.named_barrier_arrive") {
    // Lockstep execution cannot show the order a named barrier imposes between warpgroups (the
    // ping-pong barriers only order work, the data each warpgroup touches is its own); what is
    // checked is that every generation of the barrier gets exactly its thread count.
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      const int64_t id = eval(c->args[0], t).i, count = eval(c->args[1], t).i;
      int64_t& n = named_bars_[id];
      if (++n == count) n = 0;
    }
    return;
  }
  int64_t key = -1;
  MBarrier& b = mbarrier_at(c->args[0], act, &key);
  if (op == "cuda.mbarrier_arrive" || op == "cuda.mbarrier_expect_tx") {
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)])
        mbarrier_arrive(b, t, op == "cuda.mbarrier_expect_tx" ? eval(c->args[1], t).i : 0);
    return;
  }
  if (op == "cuda.mbarrier_arrive_warp") {
    // One arrival per warp; every lane's accesses before it are ordered by the warp's __syncwarp.
    for (int64_t w = 0; w * 32 < threads_; ++w) {
      int64_t active = 0;
      for (int64_t t = w * 32; t < std::min<int64_t>(threads_, w * 32 + 32); ++t) active += act[static_cast<size_t>(t)];
      if (active == 0) continue;
      if (active != std::min<int64_t>(32, threads_ - w * 32))
        throw_error<RuntimeError>("emulator: a warp arrives on an mbarrier with ", active, " of its lanes");
      for (int64_t t = w * 32 + 1; t < std::min<int64_t>(threads_, w * 32 + 32); ++t) {
        b.arrivals.push_back({static_cast<int32_t>(t), clock_[static_cast<size_t>(t)]});
        ++clock_[static_cast<size_t>(t)];
      }
      mbarrier_arrive(b, w * 32, 0);
    }
    return;
  }
  if (op == "cuda.mbarrier_wait") {
    const int64_t t0 = first_active();
    const int64_t parity = eval(c->args[1], t0).i & 1;
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)] && (eval(c->args[1], t).i & 1) != parity)
        throw_error<NotImplemented>("emulator: threads wait for different mbarrier phases in one operation");
    block_until([&] { return (b.phase & 1) != parity; }, "an mbarrier wait");
    // The latest completed phase of this parity (none yet: the wait on a fresh barrier's parity 1).
    const int64_t j = ((b.phase - 1) & 1) == parity ? b.phase - 1 : b.phase - 2;
    if (j < 0) return;
    auto rel = b.released.find(j);
    for (int64_t t = 0; t < threads_; ++t) {
      if (!act[static_cast<size_t>(t)]) continue;
      int64_t& s = seen_[static_cast<size_t>(t)][key];
      s = std::max(s, j + 1);
      if (rel == b.released.end()) continue;
      std::vector<int32_t>& k = known_[static_cast<size_t>(t)];
      for (const auto& [u, cu] : rel->second) k[static_cast<size_t>(u)] = std::max(k[static_cast<size_t>(u)], cu);
    }
    return;
  }
  throw_error<NotImplemented>("emulator: builtin ", op);
}

Emulator::TmaBox Emulator::tma_box(const CallNode* c, size_t rank_at, const char* op) const {
  const auto* tl = c->args[0].as<BufferLoadNode>();
  TL_ICHECK(tl, std::string(op) + " without its tensor");
  TmaBox b;
  b.g = &tl->buffer;
  b.swz = get_const_int(c->args[rank_at - 1], "swizzle");
  b.rank = get_const_int(c->args[rank_at], "rank");
  b.eb = b.g->dtype().element_bytes();
  if (b.rank != static_cast<int64_t>(b.g->ndim()))
    throw_error<RuntimeError>("emulator: TMA rank differs from the tensor's");
  b.box.resize(static_cast<size_t>(b.rank));
  for (int64_t d = 0; d < b.rank; ++d) {
    b.box[static_cast<size_t>(d)] = get_const_int(c->args[rank_at + 1 + static_cast<size_t>(d)], "box");
    b.total *= b.box[static_cast<size_t>(d)];
  }
  b.coord_at = rank_at + 1 + static_cast<size_t>(b.rank);
  if ((b.box[0] * b.eb) % 16 || (b.swz && b.box[0] * b.eb > b.swz))
    throw_error<RuntimeError>("emulator: TMA box rows of ", b.box[0] * b.eb, " bytes with a ", b.swz, "-byte swizzle");
  return b;
}

Emulator::TmaPlace Emulator::tma_place(const CallNode* c, const TmaBox& b, const Val& smem, int64_t t,
                                       const char* what) {
  if (smem.mem.space != Space::kShared) throw_error<RuntimeError>("emulator: ", what, " not in shared memory");
  TmaPlace p;
  p.shared = (smem.mem.base - smem_.data()) + smem.off;
  const int64_t align = b.swz ? 8 * b.swz : 128;
  if (p.shared % align)
    throw_error<RuntimeError>("emulator: ", what, " '", smem.mem.name, "' at shared byte ", p.shared,
                              ", not a multiple of ", align);
  const auto r = static_cast<size_t>(b.rank);
  p.coord.resize(r);
  p.dims.resize(r);
  p.strides.resize(r);
  std::vector<Expr> st = b.g->effective_strides();
  for (size_t d = 0; d < r; ++d) {
    p.coord[d] = eval(c->args[b.coord_at + d], t).i;
    p.dims[d] = eval(b.g->shape()[r - 1 - d], t).i;
    p.strides[d] = eval(st[r - 1 - d], t).i;
  }
  return p;
}

int64_t Emulator::tma_element(const TmaBox& b, const TmaPlace& p, int64_t e, int64_t* goff, bool* in) {
  int64_t rest = e;
  *goff = 0;
  *in = true;
  for (size_t d = 0; d < b.box.size(); ++d) {
    const int64_t i = rest % b.box[d] + p.coord[d];
    rest /= b.box[d];
    *in = *in && i >= 0 && i < p.dims[d];
    *goff += i * p.strides[d];
  }
  int64_t a = p.shared + e * b.eb;  // the 16-byte chunk within each 128-byte row, swizzled
  const int64_t sw_bits = b.swz == 128 ? 3 : b.swz == 64 ? 2 : b.swz == 32 ? 1 : 0;
  if (sw_bits) a ^= ((a >> 7) & ((int64_t(1) << sw_bits) - 1)) << 4;
  return a;
}

void Emulator::tma_load(const CallNode* c, const std::vector<char>& act) {
  const TmaBox b = tma_box(c, 4, "cuda.tma_load");
  const int64_t eb = b.eb;
  for (int64_t t = 0; t < threads_; ++t) {
    if (!act[static_cast<size_t>(t)]) continue;
    int64_t key = -1;
    std::vector<char> one(act.size(), 0);
    one[static_cast<size_t>(t)] = 1;
    MBarrier& bar = mbarrier_at(c->args[2], one, &key);
    Val dst = address(c->args[1], t);
    const TmaPlace p = tma_place(c, b, dst, t, "TMA destination");
    check_range(dst.mem, dst.off, b.total * eb, "TMA write");
    const Mem& gm = global_.at(b.g->get());
    for (int64_t e = 0; e < b.total; ++e) {
      int64_t goff = 0;
      bool in = true;
      const int64_t a = tma_element(b, p, e, &goff, &in);
      uint8_t* out = smem_.data() + a;
      if (in) {
        check_range(gm, goff * eb, eb, "TMA read");
        std::memcpy(out, gm.base + goff * eb, static_cast<size_t>(eb));
      } else {
        std::memset(out, 0, static_cast<size_t>(eb));
      }
      for (int64_t x = a; x < a + eb; ++x) tma_write(dst.mem, x, t, key, bar.phase);
    }
    mbarrier_arrive(bar, -1, -b.total * eb);
  }
}

void Emulator::tma_write(const Mem& m, int64_t abs, int64_t t, int64_t bar, int64_t phase) {
  for (const auto& [lo, hi] : wgmma_inflight_)
    if (abs < hi && lo <= abs)
      race("a TMA copy (thread " + std::to_string(t) + ") writes '" + m.name + "' (shared byte " +
           std::to_string(abs) + ") that an in-flight wgmma still reads");
  ByteState& s = bytes_[static_cast<size_t>(abs)];
  for (const auto& [r, cr] : s.readers)
    if (r != t && known_[static_cast<size_t>(t)][static_cast<size_t>(r)] < cr) {
      race("a TMA copy (thread " + std::to_string(t) + ") overwrites '" + m.name + "' (shared byte " +
           std::to_string(abs) + ") that thread " + std::to_string(r) +
           " read without releasing it (an mbarrier arrival the producer waited for)");
      break;
    }
  s.readers.clear();
  s.tma_bar = bar;
  s.tma_phase = phase;
  s.w_thread = static_cast<int32_t>(t);
  s.w_epoch = -1;
  s.r_epoch = -1;
  s.pending_async = false;
}

void Emulator::ws_read_check(ByteState& s, int64_t b, const Mem& m, int64_t t) {
  const int64_t r = t >= 0 ? t : wgmma_issuer_;
  if (r < 0) return;
  if (s.tma_bar >= 0) {
    auto it = seen_[static_cast<size_t>(r)].find(s.tma_bar);
    if (it == seen_[static_cast<size_t>(r)].end() || it->second <= s.tma_phase)
      race("thread " + std::to_string(r) + " reads '" + m.name + "' (shared byte " + std::to_string(b) +
           ") before waiting for the mbarrier phase its TMA copy completes");
  }
  const int32_t now = clock_[static_cast<size_t>(r)];
  for (auto& rc : s.readers)
    if (rc.first == r) {
      rc.second = now;
      return;
    }
  s.readers.push_back({static_cast<int32_t>(r), now});
}

void Emulator::bulk_recompute() {
  bulk_pending_.clear();
  for (int64_t t = 0; t < threads_; ++t) {
    for (const BulkRead& r : bulk_open_[static_cast<size_t>(t)]) bulk_pending_.emplace_back(r.lo, r.lo + r.n, t);
    for (const auto& g : bulk_groups_[static_cast<size_t>(t)])
      for (const BulkRead& r : g) bulk_pending_.emplace_back(r.lo, r.lo + r.n, t);
  }
}

void Emulator::bulk_builtin(const CallNode* c, const std::vector<char>& act) {
  const std::string& op = c->op;
  if (op == "cuda.tma_store") return tma_store(c, act);
  if (op == "cuda.fence_proxy_async") {
    // Every byte the fencing threads stored last is now visible to the async proxy.
    for (ByteState& s : bytes_)
      if (s.w_thread >= 0 && s.w_thread < threads_ && act[static_cast<size_t>(s.w_thread)]) s.proxy_fenced = true;
    return;
  }
  for (int64_t t = 0; t < threads_; ++t) {
    if (!act[static_cast<size_t>(t)]) continue;
    auto& open = bulk_open_[static_cast<size_t>(t)];
    auto& groups = bulk_groups_[static_cast<size_t>(t)];
    if (op == "cuda.tma_store_commit") {
      groups.push_back(std::move(open));
      open.clear();
      continue;
    }
    // cuda.tma_store_wait(N): the stores of all but the newest N groups have read their tiles.
    const int64_t keep = get_const_int(c->args[0], "wait count");
    while (static_cast<int64_t>(groups.size()) > keep) {
      for (const BulkRead& r : groups.front()) shared_read(r.mem, r.off, r.n, t);  // the retirement: t's read, now
      groups.erase(groups.begin());
    }
  }
  bulk_recompute();
}

void Emulator::tma_store(const CallNode* c, const std::vector<char>& act) {
  const TmaBox b = tma_box(c, 3, "cuda.tma_store");
  const int64_t eb = b.eb;
  for (int64_t t = 0; t < threads_; ++t) {
    if (!act[static_cast<size_t>(t)]) continue;
    Val src = address(c->args[1], t);
    const TmaPlace p = tma_place(c, b, src, t, "TMA store source");
    check_range(src.mem, src.off, b.total * eb, "TMA store read");
    const Mem& gm = global_.at(b.g->get());
    for (int64_t e = 0; e < b.total; ++e) {
      int64_t goff = 0;
      bool in = true;
      const int64_t a = tma_element(b, p, e, &goff, &in);
      const ByteState& s = bytes_[static_cast<size_t>(a)];
      if (s.tma_bar < 0 && s.w_thread >= 0 && !s.proxy_fenced)
        race("a TMA store (thread " + std::to_string(t) + ") reads '" + src.mem.name + "' (shared byte " +
             std::to_string(a) + ") that thread " + std::to_string(s.w_thread) +
             " stored without fence.proxy.async after it");
      const int64_t moff = a - (src.mem.base - smem_.data());
      shared_read(src.mem, moff, eb, t);
      if (!in) continue;  // clipped: TMA writes nothing outside the tensor
      check_range(gm, goff * eb, eb, "TMA store write");
      std::memcpy(gm.base + goff * eb, smem_.data() + a, static_cast<size_t>(eb));
    }
    BulkRead r;
    r.mem = src.mem;
    r.off = src.off;
    r.n = b.total * eb;
    r.lo = p.shared;
    bulk_open_[static_cast<size_t>(t)].push_back(r);
  }
  bulk_recompute();
}

}  // namespace tl::cuda_emu
