// T.copy(src, dst): element-wise copy between two tiles of the same (squeezed) shape, converting
// to dst's dtype. Out-of-bounds tails of *global* tensors are guarded using the buffer's shape:
// reads outside fill the `pad_value` attribute (T.annotate_safe_value; default 0), writes outside
// are dropped (non-divisible sizes, dynamic dimensions).
// With transpose=True (TileLang-Ascend's L1 -> L0B form) both tiles are 2-D and dst[i, j] = src[j, i].
#include "ir/error.h"
#include "layout/infer_layout.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

void check_copy(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.copy(src, dst)");
  if (attr_bool(op.attrs, "transpose", false)) {
    const BufferRegion& src = region_arg(op, 0, "src");
    const BufferRegion& dst = region_arg(op, 1, "dst");
    check_region_well_formed(op, src, "src");
    check_region_well_formed(op, dst, "dst");
    auto se = src.squeezed_extents(), de = dst.squeezed_extents();
    if (se.size() != 2 || de.size() != 2 || !extents_may_equal(se[0], de[1]) || !extents_may_equal(se[1], de[0]))
      throw_op_error_value(op, "transpose=True needs 2-D tiles with dst [n, m] for src [m, n]; got src " +
                                   describe_region(src) + " and dst " + describe_region(dst));
  } else {
    check_same_shape_tiles(op, 0, "src", 1, "dst");
  }
  for (const TileArg& a : op.args)
    if (a.region.buffer.dtype().is_handle())
      throw_op_error_type(op, "cannot copy buffer '" + a.region.buffer.name() + "' of dtype handle");
}

AccessRegions access_copy(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  a.write(op, 1);
  return a;
}

Stmt lower_copy(const TileOpNode& op, const LowerContext& ctx) {
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  bool transpose = attr_bool(op.attrs, "transpose", false);
  LoopNest nest = make_loop_nest(transpose ? dst.squeezed_extents() : common_extents(src, dst), "i");
  std::vector<Expr> pos = nest.indices();
  std::vector<Expr> src_idx = region_indices(src, transpose ? std::vector<Expr>{pos[1], pos[0]} : pos);
  std::vector<Expr> dst_idx = region_indices(dst, pos);
  Expr value = make_load(src.buffer, src_idx);
  std::vector<Expr> read_guards = global_bounds_guards(src.buffer, src_idx, ctx, &nest);
  if (!read_guards.empty())
    value = make_select(conjunction(read_guards), value, copy_fill_value(op, src.buffer.dtype()));
  Stmt store = make_store(dst.buffer, dst_idx, make_cast(dst.buffer.dtype(), value), op.span);
  return nest.wrap(store, ForKind::kParallel, global_bounds_guards(dst.buffer, dst_idx, ctx, &nest));
}

}  // namespace

void CopyOp::verify(const TileOpNode& op) const { check_copy(op); }
AccessRegions CopyOp::effects(const TileOpNode& op) const { return access_copy(op); }
Stmt CopyOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_copy(op, ctx); }

namespace {
TileOpRegistration reg_copy(std::make_unique<CopyOp>());
}  // namespace

// Layout inference: a whole-fragment to whole-fragment copy gives both sides one layout; any of its
// fragments may take the default layout.
bool CopyOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  if (stage == LayoutStage::kFree) return ctx.set_default_fragment(op);
  if (stage != LayoutStage::kPropagate) return false;
  if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region()) return false;
  LayoutRegion src = layout_region(op.args[0].region), dst = layout_region(op.args[1].region);
  if (!is_fragment_buffer(src.buffer) || !is_fragment_buffer(dst.buffer) || !src.full || !dst.full) return false;
  if (const_shape(src.buffer, "fragment") != const_shape(dst.buffer, "fragment")) return false;
  const Fragment* s = ctx.fragment(src.buffer);
  const Fragment* d = ctx.fragment(dst.buffer);
  if (s) ctx.set_fragment(dst.buffer, *s, op_error_prefix(op) + "a register-to-register copy");
  else if (d) ctx.set_fragment(src.buffer, *d, op_error_prefix(op) + "a register-to-register copy");
  return s || d;
}

}  // namespace tl
