// T.reduce_* on target cuda.
//
// From a fragment: each thread combines the registers it holds for each output element, then
// tl::allreduce combines across the thread groups of the source layout (Fragment::reduce lists
// them: butterflies inside a warp, shared memory across warps or for odd extents; every member
// ends with the same bits). With clear=False the old destination value is combined last, once.
// From shared or global memory: each thread computes the destination elements it holds by a
// serial loop over the reduced dimension.
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ir/tile_op.h"
#include "op/op_util.h"
#include "target/cuda/cuda_ops.h"

namespace tl {

namespace {

bool is_frag(const Buffer& b) { return b.scope() == MemScope::kFragment; }

// A reduction type: sum, max, min, abssum or absmax, with the suffix "_nan" for nan_propagate.
bool propagates_nan(const std::string& type) { return type.size() > 4 && type.compare(type.size() - 4, 4, "_nan") == 0; }

Expr identity(const std::string& type_in, DataType t) {
  const std::string type = propagates_nan(type_in) ? type_in.substr(0, type_in.size() - 4) : type_in;
  if (type == "sum" || type == "abssum" || type == "absmax") return make_const(t, 0);
  bool is_max = type == "max";
  if (t.is_float()) return make_float(is_max ? -INFINITY : INFINITY, t);
  if (t.is_bool()) return make_bool(!is_max);
  int64_t lo = 0, hi = 0;
  if (t.is_uint()) {
    lo = 0;
    hi = t.bits >= 64 ? -1 : (int64_t(1) << t.bits) - 1;
  } else {
    lo = t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1));
    hi = t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1;
  }
  return make_int(is_max ? lo : hi, t);
}

Expr combine(const std::string& type, const Expr& a, const Expr& b) {
  if (type == "sum" || type == "abssum") return a + b;
  if (type == "max" || type == "absmax") return max(a, b);
  if (type == "max_nan" || type == "absmax_nan") return max_propagating_nan(a, b);
  if (type == "min_nan") return min_propagating_nan(a, b);
  return min(a, b);
}

Expr prepare(const std::string& type, const Expr& v) {
  if (type == "abssum" || type == "absmax" || type == "absmax_nan") return make_call(v.dtype(), "abs", {v});
  return v;
}

const char* op_struct(const std::string& type) {
  if (type == "sum" || type == "abssum") return "tl::SumOp";
  if (type == "max" || type == "absmax") return "tl::MaxOp";
  if (type == "max_nan" || type == "absmax_nan") return "tl::MaxOpNan";
  if (type == "min_nan") return "tl::MinOpNan";
  return "tl::MinOp";
}

bool allreduce_in_warp(int64_t extent, int64_t stride) { return extent * stride <= 32 && 32 % (extent * stride) == 0; }
bool needs_workspace(int64_t extent, int64_t stride) { return extent > 1 && !allreduce_in_warp(extent, stride); }

// The thread index tl::allreduce groups by, for a fragment on threads [offset, offset + n): the
// block thread rotated by the offset, so that the groups (relative to the fragment's first thread)
// start where the fragment does, and every thread of the block still has a distinct workspace slot.
// The shuffle forms exchange physical lanes, so they need the offset to keep the groups whole:
// inside a warp, a multiple of the group's span; across warps, a multiple of 32.
Expr group_tid(const TileOpNode& op, const CudaLowerCtx& ctx, const Fragment& f, int64_t extent, int64_t stride) {
  const int64_t off = f.thread_offset();
  if (off == 0 || extent <= 1) return ctx.tid;
  const int64_t n = ctx.num_threads;
  const int64_t span = extent * stride;
  auto reject = [&](const std::string& need) {
    throw_error<LayoutError>(op_error_prefix(op), "reducing over ", extent, " threads ", stride == 1 ? std::string() :
                             "of stride " + std::to_string(stride) + " ", "of a fragment on threads [", off, ", ",
                             f.thread_end(), ") needs a warp-aligned participating thread range: ", need,
                             "; let the fragment start at a multiple of 32 threads");
  };
  if (n % span != 0) reject("the block of " + std::to_string(n) + " threads is not whole groups of " + std::to_string(span));
  if (allreduce_in_warp(extent, stride)) {
    if (off % span != 0) reject("its groups of " + std::to_string(span) + " lanes would straddle the offset " +
                                std::to_string(off));
    if (n % 32 != 0) reject("the block has a partial warp (" + std::to_string(n) + " threads)");
  } else if (32 % stride == 0 && span % 32 == 0 && n % 32 == 0) {
    if (off % 32 != 0) reject("the offset " + std::to_string(off) + " is not a multiple of 32, so whole warps "
                              "would mix participating and idle lanes");
  }
  const DataType it = ctx.tid.dtype();
  return floormod(ctx.tid + make_int(n - off, it), make_int(n, it));
}

// The shared workspace of the cross-warp reductions: one element per thread, per type.
Buffer workspace(CudaLowerCtx& ctx, DataType t) {
  for (const Buffer& b : ctx.extra_shared)
    if (b.dtype() == t && b.name().rfind("red_buf", 0) == 0) return b;
  Buffer b(ctx.fresh("red_buf"), t, {make_int(ctx.num_threads)}, MemScope::kShared);
  ctx.extra_shared.push_back(b);
  ctx.flat_shared[b] = b;
  return b;
}

Stmt reduce_fragment(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& src, const BufferRegion& dst,
                     const std::string& type, int dim, bool clear) {
  const Fragment& ls = ctx.layout_of(src.buffer);
  const Fragment& ld = ctx.layout_of(dst.buffer);
  // The squeezed dimension `dim` of the source region is a buffer dimension.
  int bdim = -1, seen = 0;
  for (size_t d = 0; d < src.region.size(); ++d) {
    if (is_one(src.region[d].extent)) continue;
    if (seen++ == dim) bdim = static_cast<int>(d);
  }
  if (bdim < 0) bdim = dim;
  std::vector<ThreadGroup> groups;
  Fragment want = ls.reduce(bdim, &groups);
  if (!want.same_as(ld))
    throw_error<LayoutError>(op_error_prefix(op), "the destination '", dst.buffer.name(), "' has layout ", ld.str(),
                             " but reducing '", src.buffer.name(), "' over dimension ", dim, " gives ", want.str(),
                             "; reduce into a fresh fragment and copy from it through shared memory");
  std::vector<int64_t> reg_map = ls.reduce_reg_map(bdim);
  const Buffer& sregs = ctx.regs_of(src.buffer);
  const Buffer& dregs = ctx.regs_of(dst.buffer);
  DataType t = dregs.dtype();
  // Each partial starts from its first element, not from the identity: max(-inf, x) and 0 + x are
  // instructions the compiler must keep (they differ from x for NaN and -0).
  std::vector<Expr> partial(static_cast<size_t>(ld.num_regs()));
  const bool padded = ls.padded();
  std::vector<Stmt> out;
  // One temporary per destination register, reduced across the thread groups in place.
  Buffer tmp(ctx.fresh("red"), t, {make_int(ld.num_regs())}, MemScope::kLocal);
  // The NaN-propagating combination names each operand three times: its partials are stored
  // register by register (a nested expression would grow exponentially with the registers).
  const bool stepwise = propagates_nan(type);
  std::vector<char> started(static_cast<size_t>(ld.num_regs()), 0);
  for (int64_t r = 0; r < ls.num_regs(); ++r) {
    Expr v = prepare(type, make_cast(t, make_load(sregs, {make_int(r)})));
    if (padded) {
      Expr valid = ctx.simplify_cond(ls.is_valid(ctx.tid, make_int(r), ctx.num_threads));
      if (!is_one(valid)) v = make_select(valid, v, identity(type, t));
    }
    const int64_t d = reg_map[static_cast<size_t>(r)];
    if (stepwise) {
      Expr cur = make_load(tmp, {make_int(d)});
      out.push_back(make_store(tmp, {make_int(d)}, started[static_cast<size_t>(d)]++ ? combine(type, cur, v) : v));
      continue;
    }
    Expr& p = partial[static_cast<size_t>(d)];
    p = p.defined() ? combine(type, p, v) : v;
  }
  for (int64_t d = 0; d < ld.num_regs(); ++d) {
    if (stepwise && started[static_cast<size_t>(d)]) continue;
    Expr& p = partial[static_cast<size_t>(d)];
    if (!p.defined()) p = identity(type, t);
    out.push_back(make_store(tmp, {make_int(d)}, p));
  }
  // thread_partial (warp_specialize's deferred row sum): each thread keeps its own partial; a
  // T.finalize_reducer of the value it is accumulated into combines the threads later.
  if (attr_bool(op.attrs, "thread_partial", false)) groups.clear();
  for (const ThreadGroup& g : groups) {
    bool ws = needs_workspace(g.extent, g.stride);
    Buffer wsb = ws ? workspace(ctx, t) : Buffer();
    std::string callee = std::string("tl::allreduce<") + op_struct(type) + ", " + std::to_string(g.extent) + ", " +
                         std::to_string(g.stride) + ", " + std::to_string(ctx.num_threads) + ">";
    for (int64_t d = 0; d < ld.num_regs(); ++d) {
      std::vector<Expr> args = {make_load(tmp, {make_int(d)}),
                                make_cast(DataType::Int32(), group_tid(op, ctx, ls, g.extent, g.stride))};
      if (ws) args.push_back(ctx.address_of(wsb, {make_int(0)}, 3));
      args.insert(args.begin(), make_string(callee));
      Expr call = make_call(t, ws ? "cuda.call_sync" : "cuda.call", args);
      out.push_back(make_store(tmp, {make_int(d)}, call));
    }
  }
  for (int64_t d = 0; d < ld.num_regs(); ++d) {
    Expr v = make_load(tmp, {make_int(d)});
    if (!clear) v = combine(type, make_load(dregs, {make_int(d)}), v);
    out.push_back(make_store(dregs, {make_int(d)}, v));
  }
  return make_allocate(tmp, make_seq(out), op.span);
}

// Source in shared/global memory: every destination element the thread holds is computed by a
// serial loop (replicas compute it redundantly).
Stmt reduce_memory(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& src, const BufferRegion& dst,
                   const std::string& type, int dim, bool clear) {
  std::vector<int64_t> se = const_extents(src, op_error_prefix(op) + "src");
  if (dim < 0 || dim >= static_cast<int>(se.size()))
    throw_error<ValueError>(op_error_prefix(op), "reduction dimension ", dim, " out of range");
  std::vector<int64_t> de = se;
  de.erase(de.begin() + dim);
  if (de.empty()) de.push_back(1);
  Fragment layout;
  Buffer regs;
  bool to_frag = is_frag(dst.buffer);
  if (to_frag) {
    for (size_t d = 0; d < dst.region.size(); ++d)
      if (!is_zero(dst.region[d].min) || !is_const_value(dst.region[d].extent, const_shape(dst.buffer, "fragment")[d]))
        throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reducing into part of fragment '",
                                    dst.buffer.name(), "' on target cuda");
    layout = ctx.layout_of(dst.buffer);
    regs = ctx.regs_of(dst.buffer);
  } else {
    layout = default_fragment(de, ctx.num_threads, 1);
  }
  DataType t = dst.buffer.dtype();
  std::vector<Stmt> out;
  Expr writer = make_bool(true);
  if (!to_frag && layout.replicate() > 1) writer = eq(layout.replica_of(ctx.tid), make_int(0));
  for (int64_t r = 0; r < layout.num_regs(); ++r) {
    std::vector<Expr> didx = layout.index_of(ctx.tid, make_int(r));
    Expr valid = ctx.simplify_cond(layout.is_valid(ctx.tid, make_int(r), ctx.num_threads) && writer);
    // Destination position (squeezed) -> source position with the reduced index inserted.
    std::vector<Expr> dpos;
    if (to_frag) {
      for (size_t d = 0; d < didx.size(); ++d)
        if (!is_one(dst.region[d].extent)) dpos.push_back(is_zero(dst.region[d].min) ? didx[d] : didx[d] - dst.region[d].min);
    } else {
      dpos = didx;
    }
    if (dpos.empty()) dpos.push_back(make_int(0));
    Var kv(ctx.fresh("k"));
    std::vector<Expr> spos = dpos;
    if (se.size() == 1) spos = {kv};
    else spos.insert(spos.begin() + dim, kv);
    Buffer acc(ctx.fresh("acc"), t, {make_int(1)}, MemScope::kLocal);
    Expr cur = make_load(acc, {make_int(0)});
    Expr v = prepare(type, make_cast(t, ctx.load(src.buffer, region_point(src, spos))));
    std::vector<Expr> sg = ctx.bounds_guards(src.buffer, region_point(src, spos));
    Stmt step = make_store(acc, {make_int(0)}, combine(type, cur, v));
    if (!sg.empty()) step = guarded(all_of(sg), step);
    Stmt loop = make_for(kv, make_int(0), make_int(se[static_cast<size_t>(dim)]), ForKind::kSerial, step);
    Expr result = cur;
    Stmt write;
    if (to_frag) {
      if (!clear) result = combine(type, make_load(regs, {make_int(r)}), result);
      write = make_store(regs, {make_int(r)}, result);
    } else {
      std::vector<Expr> dptr = region_point(dst, dpos);
      if (!clear) result = combine(type, make_cast(t, ctx.load(dst.buffer, dptr)), result);
      write = guarded(all_of(ctx.bounds_guards(dst.buffer, dptr)), ctx.store(dst.buffer, dptr, result));
    }
    Stmt body = make_seq({make_store(acc, {make_int(0)}, identity(type, t)), loop, write});
    out.push_back(guarded(valid, make_allocate(acc, body)));
  }
  return make_seq(out, op.span);
}

}  // namespace

Stmt lower_cuda_reduce(const TileOpNode& op, CudaLowerCtx& ctx) {
  if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region())
    throw_error<TypeError>(op_error_prefix(op), "expects a source and a destination region");
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  std::string type = attr_str(op.attrs, "type", "sum");
  if (type != "sum" && type != "max" && type != "min" && type != "abssum" && type != "absmax")
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reduction '", type, "' on target cuda");
  if (attr_bool(op.attrs, "nan_propagate", false) && (type == "max" || type == "min" || type == "absmax"))
    type += "_nan";
  int dim = static_cast<int>(attr_int(op.attrs, "dim", 0));
  bool clear = attr_bool(op.attrs, "clear", true);
  if (is_frag(src.buffer)) {
    if (!is_frag(dst.buffer))
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reducing fragment '", src.buffer.name(),
                                  "' into ", scope_name(dst.buffer.scope()), " memory on target cuda; reduce into a "
                                  "fragment and copy it");
    return reduce_fragment(op, ctx, src, dst, type, dim, clear);
  }
  return reduce_memory(op, ctx, src, dst, type, dim, clear);
}



// T.finalize_reducer: the reducer's layout holds each element on several threads (the replica
// thread modes of its fragment), each copy a partial result; all-reduce each register over them.
Stmt lower_cuda_finalize_reducer(const TileOpNode& op, CudaLowerCtx& ctx) {
  const Buffer& b = op.args[0].region.buffer;
  const Fragment& f = ctx.layout_of(b);
  const Buffer& regs = ctx.regs_of(b);
  std::string type = attr_str(op.attrs, "op", "sum");
  DataType t = regs.dtype();
  std::vector<Stmt> out;
  for (const FragmentMode& m : f.modes()) {
    if (!m.is_replica() || !m.on_threads() || m.extent <= 1) continue;
    bool ws = needs_workspace(m.extent, m.thread_stride);
    Buffer wsb = ws ? workspace(ctx, t) : Buffer();
    std::string callee = std::string("tl::allreduce<") + op_struct(type) + ", " + std::to_string(m.extent) + ", " +
                         std::to_string(m.thread_stride) + ", " + std::to_string(ctx.num_threads) + ">";
    for (int64_t d = 0; d < f.num_regs(); ++d) {
      std::vector<Expr> args = {make_string(callee), make_load(regs, {make_int(d)}),
                                make_cast(DataType::Int32(), group_tid(op, ctx, f, m.extent, m.thread_stride))};
      if (ws) args.push_back(ctx.address_of(wsb, {make_int(0)}, 3));
      out.push_back(make_store(regs, {make_int(d)}, make_call(t, ws ? "cuda.call_sync" : "cuda.call", args)));
    }
  }
  return out.empty() ? make_nop() : make_seq(out, op.span);
}

}  // namespace tl
