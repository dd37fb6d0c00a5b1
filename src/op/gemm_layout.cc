// T.gemm's layout constraints on cuda (TileOp::propose_layout / infer_layout of GemmOp; the driver
// is layout/infer_layout.cc): which instruction runs it (wgmma on sm_90a when every GEMM of the
// kernel can, else mma.sync, else the SIMT fallback), the register layouts that instruction fixes for
// its accumulator and register operands, and the swizzled or gmma layouts of its shared operands.
#include <map>
#include <string>

#include "ir/error.h"
#include "layout/infer_layout.h"
#include "layout/swizzle.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

bool plan_wgmma(const TileOpNode& op, LayoutInference& ctx, GemmPlan* plan,
              std::map<Buffer, Layout, BufferLess>* layouts, std::string* why) {
  auto no = [&](const std::string& w) {
    *why = op_error_prefix(op) + w;
    return false;
  };
  if (op.args.size() < 3 || !op.args[0].is_region() || !op.args[1].is_region() || !op.args[2].is_region())
    return no("operands");
  LayoutRegion a = layout_region(op.args[0].region), b = layout_region(op.args[1].region),
             c = layout_region(op.args[2].region);
  for (const LayoutRegion* r : {&a, &b, &c})
    if (r->extents.size() != 2 || r->extents[0] <= 0 || r->extents[1] <= 0) return no("non-2-d tiles");
  bool ta = attr_bool(op.attrs, "transpose_A", false), tb = attr_bool(op.attrs, "transpose_B", false);
  int64_t m = c.extents[0], n = c.extents[1];
  int64_t k = ta ? a.extents[0] : a.extents[1];
  if ((ta ? a.extents[1] : a.extents[0]) != m || (tb ? b.extents[0] : b.extents[1]) != n ||
      (tb ? b.extents[1] : b.extents[0]) != k)
    return no("shapes do not agree");
  if (!is_fragment_buffer(c.buffer) || !c.full) return no("the accumulator is not a whole fragment");
  DataType at = a.buffer.dtype(), bt = b.buffer.dtype(), ct = c.buffer.dtype();
  const bool f8 = at.is_fp8() && bt.is_fp8();
  if ((at != bt && !f8) || !(at == DataType::Float(16) || at == DataType::BFloat16() || f8) ||
      ct != DataType::Float32())
    return no("wgmma here takes f16/bf16/fp8 operands with float accumulators, not " + at.str() + " x " + bt.str() +
              " -> " + ct.str());
  if (ctx.num_threads() % 128) return no("the block is not whole warpgroups (" + std::to_string(ctx.num_threads()) + " threads)");
  const int64_t kinst = f8 ? 32 : 16;
  if (k % kinst) return no("K = " + std::to_string(k) + " is not a multiple of " + std::to_string(kinst));
  if (f8 && (ta || !tb || is_fragment_buffer(a.buffer)))
    return no("fp8 wgmma reads both operands K-major from shared memory (A [M, K], B [N, K] with transpose_B)");
  WarpgroupPartition wp;
  GemmWarpPolicy policy = parse_gemm_warp_policy(attr_str(op.attrs, "policy", "Square"));
  if (!compute_warpgroup_partition(m, n, static_cast<int>(ctx.num_threads() / 128), policy, &wp))
    return no("[" + std::to_string(m) + ", " + std::to_string(n) + "] does not split into 64-row tiles over " +
              std::to_string(ctx.num_threads() / 128) + " warpgroups");
  bool a_reg = is_fragment_buffer(a.buffer);
  if (is_fragment_buffer(b.buffer)) return no("B is in registers");
  if (a_reg && (ta || !a.full)) return no("a transposed or partial register operand A");
  const int64_t nw = n / wp.wg_n;
  for (int which = 0; which < 2; ++which) {
    const BufferRegion& r = op.args[which].region;
    const Buffer& buf = r.buffer;
    if (which == 0 && a_reg) continue;
    if (buf.scope() != MemScope::kShared) return no("operand '" + buf.name() + "' is not in shared memory");
    std::vector<int64_t> shape = const_shape(buf, "shared buffer");
    size_t nd = shape.size();
    if (nd < 2) return no("operand '" + buf.name() + "' is not a 2-d tile");
    for (size_t d = nd - 2; d < nd; ++d)
      if (!is_zero(r.region[d].min) || !is_const_value(r.region[d].extent, shape[d]))
        return no("operand '" + buf.name() + "' is part of its buffer's rows or columns");
    int eb = buf.dtype().element_bytes();
    int swz = gmma_swizzle_bytes(shape[nd - 1], eb);
    if (!swz || shape[nd - 2] % 8) return no("no gmma layout for '" + buf.name() + "'");
    bool mn_major = which == 0 ? ta : !tb;
    // An MN-major B slice of one warpgroup must start at a panel.
    if (mn_major && which == 1 && wp.wg_n > 1 && (nw * eb) % swz) return no("B slices cross swizzle panels");
    Layout l = make_gmma_layout(shape, eb, swz);
    const Layout* have = ctx.shared_layout(buf);
    if (have && !have->same_map(l)) return no("'" + buf.name() + "' already has layout " + (*have)->name);
    auto pending = layouts->find(buf);
    if (pending != layouts->end() && pending->second->name != l->name) return no("'" + buf.name() + "' is read "
                                                                                   "by GEMMs in two layouts");
    (*layouts)[buf] = l;
  }
  plan->use_wgmma = true;
  plan->warpgroups = wp;
  return true;
}

void apply_wgmma(const TileOpNode& op, LayoutInference& ctx, const GemmPlan& plan) {
  LayoutRegion a = layout_region(op.args[0].region), c = layout_region(op.args[2].region);
  bool ta = attr_bool(op.attrs, "transpose_A", false);
  int64_t m = c.extents[0], n = c.extents[1], k = ta ? a.extents[0] : a.extents[1];
  ctx.set_fragment(c.buffer, make_wgmma_c_fragment(m, n, plan.warpgroups), op_error_prefix(op) + "the wgmma accumulator");
  if (is_fragment_buffer(a.buffer))
    ctx.set_fragment(a.buffer, make_wgmma_a_fragment(m, k, plan.warpgroups, a.buffer.dtype()),
                 op_error_prefix(op) + "wgmma operand A");
  ctx.set_gemm_plan(op, plan);
}

void plan_gemm(const TileOpNode& op, LayoutInference& ctx) {
  if (op.args.size() < 3 || !op.args[0].is_region() || !op.args[1].is_region() || !op.args[2].is_region())
    throw_error<LayoutError>(op_error_prefix(op), "expects three buffer regions A, B, C");
  LayoutRegion a = layout_region(op.args[0].region), b = layout_region(op.args[1].region),
             c = layout_region(op.args[2].region);
  bool ta = attr_bool(op.attrs, "transpose_A", false), tb = attr_bool(op.attrs, "transpose_B", false);
  auto dims_ok = [](const LayoutRegion& r) {
    return r.extents.size() == 2 && r.extents[0] > 0 && r.extents[1] > 0;
  };
  if (!dims_ok(a) || !dims_ok(b) || !dims_ok(c))
    throw_error<LayoutError>(op_error_prefix(op), "A, B and C must be two-dimensional tiles of constant size");
  int64_t m = c.extents[0], n = c.extents[1];
  int64_t k = ta ? a.extents[0] : a.extents[1];
  int64_t am = ta ? a.extents[1] : a.extents[0];
  int64_t bk = tb ? b.extents[1] : b.extents[0];
  int64_t bn = tb ? b.extents[0] : b.extents[1];
  if (am != m || bn != n || bk != k)
    throw_error<LayoutError>(op_error_prefix(op), "shapes do not agree: A ", shape_str(a.extents),
                             ta ? " (transposed)" : "", ", B ", shape_str(b.extents), tb ? " (transposed)" : "",
                             ", C ", shape_str(c.extents));
  if (!is_fragment_buffer(c.buffer))
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: a T.gemm accumulator in ",
                                scope_name(c.buffer.scope()), " memory on target cuda; use T.alloc_fragment for C");
  if (!c.full)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: a T.gemm accumulating into part of "
                                "fragment '", c.buffer.name(), "' on target cuda; give C its own fragment");
  GemmPlan plan;
  DataType at = a.buffer.dtype(), bt = b.buffer.dtype(), ct = c.buffer.dtype();
  auto simt = [&](std::string why) {
    plan.use_mma = false;
    plan.why_simt = std::move(why);
  };
  bool types_ok = false;
  if (at == bt) {
    if (at == DataType::Float(16) && (ct == DataType::Float32() || ct == DataType::Float(16)))
      types_ok = true;
    else if (at == DataType::BFloat16() && ct == DataType::Float32())
      types_ok = true;
    else if (at == DataType::Float32() && ct == DataType::Float32())
      types_ok = true;  // tf32
    else if ((at == DataType::Int(8) || at == DataType::UInt(8)) && ct == DataType::Int32())
      types_ok = true;
    else if (at.is_fp8() && ct == DataType::Float32() && ctx.target().is_cuda() && ctx.target().sm() >= 89)
      types_ok = true;
  }
  if (!types_ok) {
    simt("no mma.sync for " + at.str() + " x " + bt.str() + " -> " + ct.str());
  } else if (ctx.num_threads() % 32 != 0) {
    simt("the block has " + std::to_string(ctx.num_threads()) + " threads, not whole warps");
  } else {
    int64_t kk = mma_k(at);
    if (m % 16 || n % 8 || k % kk) {
      simt("M, N, K = " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
           " are not multiples of 16, 8, " + std::to_string(kk));
    } else {
      try {
        plan.warps = compute_warp_partition(m, n, static_cast<int>(ctx.num_threads() / 32),
                                            parse_gemm_warp_policy(attr_str(op.attrs, "policy", "Square")));
        plan.use_mma = true;
      } catch (const LayoutError& e) {
        simt(e.what());
      }
    }
  }
  bool a_reg = is_fragment_buffer(a.buffer), b_reg = is_fragment_buffer(b.buffer);
  if (plan.use_mma && a_reg && ta) simt("a transposed register operand A");
  if (plan.use_mma && b_reg && tb) simt("a transposed register operand B");
  if (!plan.use_mma && (a_reg || b_reg))
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.gemm with operand in a fragment when "
                                "mma.sync cannot be used (", plan.why_simt, ") on target cuda; keep A and B in "
                                "shared memory (T.alloc_shared)");
  std::string who = op_error_prefix(op) + "the mma.sync accumulator";
  if (plan.use_mma) {
    ctx.set_fragment(c.buffer, make_mma_c_fragment(m, n, plan.warps), who);
    if (a_reg) {
      if (!a.full) throw_error<NotImplemented>(op_error_prefix(op), "not implemented: A as part of a fragment");
      ctx.set_fragment(a.buffer, make_mma_a_fragment(m, k, plan.warps, at), op_error_prefix(op) + "operand A");
    }
    if (b_reg) {
      if (!b.full) throw_error<NotImplemented>(op_error_prefix(op), "not implemented: B as part of a fragment");
      ctx.set_fragment(b.buffer, make_mma_b_fragment(k, n, plan.warps, bt), op_error_prefix(op) + "operand B");
    }
    // Shared operands read with ldmatrix: swizzle them when the layout allows (bank-conflict free).
    for (const LayoutRegion* r : {&a, &b}) {
      const Buffer& buf = r->buffer;
      if (buf.scope() != MemScope::kShared || ctx.shared_layout(buf) || buf.dtype().bits != 16) continue;
      std::vector<int64_t> shape = const_shape(buf, "shared buffer");
      int64_t rows = r->extents[0], cols = r->extents[1];
      int64_t eb = buf.dtype().element_bytes();
      // The tile must be the buffer's last two dimensions, and a whole number of swizzle
      // periods (8 lines of 128 bytes) so every stage slice has the same phase.
      if (shape.size() < 2 || shape[shape.size() - 1] != cols || shape[shape.size() - 2] != rows) continue;
      if ((rows * cols * eb) % 1024 != 0 || !swizzle_applicable(shape, static_cast<int>(eb))) continue;
      ctx.set_shared_layout(buf, make_swizzled_layout(shape, static_cast<int>(eb)));
    }
  } else {
    // The SIMT accumulator takes the default layout (or whatever others fix).
  }
  if (ctx.wgmma_allowed()) plan.why_not_wgmma = ctx.why_not_wgmma();
  ctx.set_gemm_plan(op, plan);
}

}  // namespace

KernelChoice GemmOp::propose_layout(const TileOpNode& op, LayoutInference& ctx) const {
  GemmPlan plan;
  std::string why;
  if (!plan_wgmma(op, ctx, &plan, &ctx.proposed_shared_layouts(), &why)) {
    ctx.refuse_wgmma(why);
    return KernelChoice::kRefuse;
  }
  ctx.propose_wgmma(op, plan);
  return KernelChoice::kAccept;
}

bool GemmOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  if (stage != LayoutStage::kStrict) return false;
  if (ctx.wgmma_granted()) apply_wgmma(op, ctx, ctx.proposed_wgmma(op));
  else plan_gemm(op, ctx);
  return true;
}

}  // namespace tl
