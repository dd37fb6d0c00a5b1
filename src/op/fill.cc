// T.fill(dst, value) / T.clear(dst) / T.tile.fill(dst, value): every element of the tile becomes
// value cast to dst's dtype. Writes outside a global tensor are dropped.
#include "ir/error.h"
#include "ir/printer.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

void check_fill(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.fill(dst, value)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  check_region_well_formed(op, dst, "dst");
  const Expr& v = expr_arg(op, 1, "value");
  if (!(v.dtype().is_float() || v.dtype().is_integer() || v.dtype().is_bool()) || v.dtype().lanes != 1)
    throw_op_error_type(op, "value " + print_expr(v) + " of type " + v.dtype().str() + " cannot fill buffer '" +
                                dst.buffer.name() + "' of dtype " + dst.buffer.dtype().str());
}

AccessRegions access_fill(const TileOpNode& op) { return dst_first_access(op); }

Stmt lower_fill(const TileOpNode& op, const LowerContext& ctx) {
  const BufferRegion& dst = op.args[0].region;
  LoopNest nest = make_loop_nest(dst.squeezed_extents(), "i");
  std::vector<Expr> idx = region_indices(dst, nest.indices());
  Stmt store = make_store(dst.buffer, idx, make_cast(dst.buffer.dtype(), op.args[1].expr), op.span);
  return nest.wrap(store, ForKind::kParallel, global_bounds_guards(dst.buffer, idx, ctx, &nest));
}

}  // namespace

void FillOp::verify(const TileOpNode& op) const { check_fill(op); }
AccessRegions FillOp::effects(const TileOpNode& op) const { return access_fill(op); }
Stmt FillOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_fill(op, ctx); }

namespace {
TileOpRegistration reg_fill(std::make_unique<FillOp>("fill", false));
TileOpRegistration reg_tile_fill(std::make_unique<FillOp>("tile.fill", true));
}  // namespace

}  // namespace tl
