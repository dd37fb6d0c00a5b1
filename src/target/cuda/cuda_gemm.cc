// T.gemm on target cuda: one call of tl::gemm_ss / gemm_rs / gemm_sr (include/tl/cuda/gemm.h) with
// the warp partition and operand layouts layout inference chose, or the SIMT fallback (each thread
// accumulates the C elements it holds from shared/global A and B).
#include <sstream>

#include "ir/error.h"
#include "ir/tile_op.h"
#include "target/cuda/cuda_ops.h"

namespace tl {

namespace {

bool is_frag(const Buffer& b) { return b.scope() == MemScope::kFragment; }

struct Operand {
  Expr pointer;       // address of the tile's first element
  bool in_regs = false;
  bool swizzled = false;
  int64_t cols = 0;   // elements per row of the shared tile
};

Operand shared_operand(const TileOpNode& op, const CudaLowerCtx& ctx, const BufferRegion& r, const char* role) {
  Operand o;
  const Buffer& b = r.buffer;
  if (is_frag(b)) {
    o.in_regs = true;
    o.pointer = ctx.reg_address(b, make_int(0), 1);
    return o;
  }
  if (b.scope() != MemScope::kShared)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: operand ", role, " in ", scope_name(b.scope()),
                                " memory for mma.sync on target cuda; copy it to shared memory first");
  std::vector<int64_t> shape = const_shape(b, "shared buffer");
  size_t n = shape.size();
  bool whole_tile = n >= 2;
  for (size_t d = n >= 2 ? n - 2 : 0; whole_tile && d < n; ++d)
    whole_tile = is_zero(r.region[d].min) && is_const_value(r.region[d].extent, shape[d]);
  if (!whole_tile)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: operand ", role, " as part of the rows or "
                                "columns of shared buffer '", b.name(), "' on target cuda; the tile must span the "
                                "buffer's last two dimensions (a leading stage index is fine)");
  auto it = ctx.layouts.shared.find(b);
  if (it != ctx.layouts.shared.end()) {
    if (it->second->name != "swizzled")
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: mma.sync on shared buffer '", b.name(),
                                  "' with a custom layout");
    o.swizzled = true;
  }
  std::vector<Expr> start;
  for (const Range& rg : r.region) start.push_back(rg.min);
  o.pointer = ctx.address_of(b, start, 1);
  o.cols = shape[n - 1];
  return o;
}

const char* b2s(bool b) { return b ? "true" : "false"; }

Stmt simt_gemm(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& a, const BufferRegion& b,
               const BufferRegion& c, bool ta, bool tb, int64_t k) {
  const Fragment& lc = ctx.layout_of(c.buffer);
  const Buffer& regs = ctx.regs_of(c.buffer);
  DataType ct = regs.dtype();
  std::vector<Stmt> out;
  for (int64_t r = 0; r < lc.num_regs(); ++r) {
    std::vector<Expr> ij = lc.index_of(ctx.tid, make_int(r));
    Expr valid = ctx.simplify_cond(lc.is_valid(ctx.tid, make_int(r), ctx.num_threads));
    Var kv(ctx.fresh("k"));
    std::vector<Expr> apos = ta ? std::vector<Expr>{kv, ij[0]} : std::vector<Expr>{ij[0], kv};
    std::vector<Expr> bpos = tb ? std::vector<Expr>{ij[1], kv} : std::vector<Expr>{kv, ij[1]};
    Expr av = make_cast(ct, ctx.load(a.buffer, region_point(a, apos)));
    Expr bv = make_cast(ct, ctx.load(b.buffer, region_point(b, bpos)));
    Expr acc = make_load(regs, {make_int(r)});
    Stmt body = make_store(regs, {make_int(r)}, acc + av * bv);
    out.push_back(guarded(valid, make_for(kv, make_int(0), make_int(k), ForKind::kSerial, body)));
  }
  return make_seq(out, op.span);
}

// The swizzle width of a shared operand's gmma layout (layout inference gave it one).
int gmma_width(const TileOpNode& op, const CudaLowerCtx& ctx, const Buffer& b) {
  auto it = ctx.layouts.shared.find(b);
  TL_ICHECK(it != ctx.layouts.shared.end() && it->second->name.rfind("gmma", 0) == 0, op_error_prefix(op),
            "wgmma operand '", b.name(), "' without a gmma layout");
  return std::stoi(it->second->name.substr(4));
}

// tl::wgmma_gemm_ss / wgmma_gemm_rs (include/tl/cuda/wgmma.h).
// `clear`: clear_accum, where the wgmma itself starts from zero (scale-d = 0; ss form only), else undefined.
Stmt wgmma_gemm(const TileOpNode& op, CudaLowerCtx& ctx, const GemmPlan& plan, const BufferRegion& a,
                const BufferRegion& b, const BufferRegion& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                const Expr& clear) {
  auto tile_start = [&](const BufferRegion& r) {
    std::vector<Expr> start;
    for (const Range& rg : r.region) start.push_back(rg.min);
    return ctx.address_of(r.buffer, start, 1);
  };
  std::string t = cuda_type_name(a.buffer.dtype());
  std::ostringstream callee;
  Expr pa;
  // In a pipelined loop the GEMM may leave its instructions in flight for one iteration
  // ("wgmma_async", kPending = 1); in a warp-specialized loop whose GEMMs overlap the work between
  // them it is only issued ("wgmma_issue", kPending = -1) and a later cuda.wgmma_wait waits for it.
  const bool issue_only = attr_bool(op.attrs, "wgmma_issue", false);
  const bool async = !issue_only && attr_bool(op.attrs, "wgmma_async", false) && !is_frag(a.buffer);
  if (async) ctx.async_mma_accumulators.push_back(ctx.regs_of(c.buffer));
  const std::string pend = issue_only ? "-1" : async ? "1" : "0";
  const std::string pending = pend == "0" ? "" : ", " + pend;
  // Operands only TMA writes (warp_specialize marks them): no fence.proxy.async before the wgmma.
  const bool no_fence = attr_bool(op.attrs, "async_proxy_operands", false);
  if (is_frag(a.buffer)) {
    pa = ctx.reg_address(a.buffer, make_int(0), 1);
    callee << "tl::wgmma_gemm_rs<" << m << ", " << n << ", " << k << ", " << plan.warpgroups.wg_m << ", "
           << plan.warpgroups.wg_n << ", " << b2s(tb) << ", " << gmma_width(op, ctx, b.buffer) << ", " << t
           << (issue_only ? (no_fence ? ", false, -1" : ", true, -1") : no_fence ? ", false" : "") << ">";
  } else {
    pa = tile_start(a);
    // fp8: B's type may differ from A's (e4m3 x e5m2); it follows kPending.
    std::string bt = cuda_type_name(b.buffer.dtype());
    std::string tail = bt == t && !no_fence ? pending : ", " + pend + ", " + bt;
    if (no_fence) tail += ", false";
    callee << "tl::wgmma_gemm_ss<" << m << ", " << n << ", " << k << ", " << plan.warpgroups.wg_m << ", "
           << plan.warpgroups.wg_n << ", " << b2s(ta) << ", " << b2s(tb) << ", " << gmma_width(op, ctx, a.buffer)
           << ", " << gmma_width(op, ctx, b.buffer) << ", " << t << tail << ">";
  }
  std::vector<Expr> args = {pa, tile_start(b), ctx.reg_address(c.buffer, make_int(0), 3)};
  if (clear.defined())
    args.push_back(is_const_value(clear, 1) ? make_int(0)
                                            : make_select(make_cast(DataType::Bool(), clear), make_int(0), make_int(1)));
  return call_stmt(callee.str(), args);
}

}  // namespace

Stmt lower_cuda_gemm(const TileOpNode& op, CudaLowerCtx& ctx) {
  auto pit = ctx.layouts.gemms.find(&op);
  TL_ICHECK(pit != ctx.layouts.gemms.end(), "gemm without a plan");
  const GemmPlan& plan = pit->second;
  const BufferRegion& a = op.args[0].region;
  const BufferRegion& b = op.args[1].region;
  const BufferRegion& c = op.args[2].region;
  bool ta = attr_bool(op.attrs, "transpose_A", false), tb = attr_bool(op.attrs, "transpose_B", false);
  std::vector<int64_t> ae = const_extents(a, op_error_prefix(op) + "A");
  std::vector<int64_t> ce = const_extents(c, op_error_prefix(op) + "C");
  int64_t m = ce[0], n = ce[1], k = ta ? ae[0] : ae[1];

  std::vector<Stmt> out;
  // clear_accum (may be a run-time condition): zero the accumulators first.
  Expr clear = make_bool(false);
  if (auto it = op.attrs.find("clear_accum"); it != op.attrs.end() && !it->second.is_none())
    clear = it->second.as_expr();
  // wgmma with A in shared memory: the instructions start from zero themselves (scale-d = 0)
  // instead of the registers being cleared first (TL_DISABLE_WGMMA_ZERO_INIT: cleared first).
  const bool zero_init = plan.use_wgmma && !is_frag(a.buffer) && !is_zero(clear) &&
                         !ctx.disable_wgmma_zero_init;
  if (!is_zero(clear) && !zero_init) {
    const Buffer& regs = ctx.regs_of(c.buffer);
    std::vector<Stmt> zeros;
    for (int64_t r = 0; r < ctx.layout_of(c.buffer).num_regs(); ++r)
      zeros.push_back(make_store(regs, {make_int(r)}, make_const(regs.dtype(), 0)));
    out.push_back(guarded(make_cast(DataType::Bool(), clear), make_seq(zeros)));
  }
  if (plan.use_wgmma) {
    out.push_back(wgmma_gemm(op, ctx, plan, a, b, c, ta, tb, m, n, k, zero_init ? clear : Expr()));
    return make_seq(out, op.span);
  }
  if (!plan.use_mma) {
    out.push_back(simt_gemm(op, ctx, a, b, c, ta, tb, k));
    return make_seq(out, op.span);
  }
  Operand oa = shared_operand(op, ctx, a, "A"), ob = shared_operand(op, ctx, b, "B");
  Expr pc = ctx.reg_address(c.buffer, make_int(0), 3);
  std::string at = cuda_type_name(a.buffer.dtype()), bt = cuda_type_name(b.buffer.dtype()),
              ct = cuda_type_name(c.buffer.dtype());
  std::ostringstream callee;
  if (oa.in_regs && ob.in_regs) {
    callee << "tl::gemm_rr<" << m << ", " << n << ", " << k << ", " << plan.warps.warps_m << ", "
           << plan.warps.warps_n << ", " << at << ", " << bt << ", " << ct << ">";
  } else if (oa.in_regs) {
    callee << "tl::gemm_rs<" << m << ", " << n << ", " << k << ", " << plan.warps.warps_m << ", "
           << plan.warps.warps_n << ", " << b2s(tb) << ", " << b2s(ob.swizzled) << ", " << ob.cols << ", " << at
           << ", " << bt << ", " << ct << ">";
  } else if (ob.in_regs) {
    callee << "tl::gemm_sr<" << m << ", " << n << ", " << k << ", " << plan.warps.warps_m << ", "
           << plan.warps.warps_n << ", " << b2s(ta) << ", " << b2s(oa.swizzled) << ", " << oa.cols << ", " << at
           << ", " << bt << ", " << ct << ">";
  } else {
    callee << "tl::gemm_ss<" << m << ", " << n << ", " << k << ", " << plan.warps.warps_m << ", "
           << plan.warps.warps_n << ", " << b2s(ta) << ", " << b2s(tb) << ", " << b2s(oa.swizzled) << ", "
           << b2s(ob.swizzled) << ", " << oa.cols << ", " << ob.cols << ", " << at << ", " << bt << ", " << ct << ">";
  }
  out.push_back(call_stmt(callee.str(), {oa.pointer, ob.pointer, pc}));
  return make_seq(out, op.span);
}

}  // namespace tl
