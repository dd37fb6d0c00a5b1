// T.atomic_add / T.atomic_max / T.atomic_min(dst, value): element-wise dst = dst (+|max|min) value,
// atomic with respect to other blocks (on cpu the blocks of a grid run on several worker threads).
// value is a tile of dst's (squeezed) shape or a scalar. Each element becomes the builtin
// tl.atomic_<op>_scalar(dst[idx], v), which every target implements with its own atomics. Writes
// outside a global tensor are dropped.
#include "ir/error.h"
#include "layout/infer_layout.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

void check_atomic(const TileOpNode& op) {
  check_num_args(op, 2, 2, (std::string("T.") + op.op + "(dst, value)").c_str());
  const BufferRegion& dst = region_arg(op, 0, "dst");
  check_region_well_formed(op, dst, "dst");
  DataType t = dst.buffer.dtype();
  if (!(t.is_float() || t.is_integer()))
    throw_op_error_type(op, "dst buffer '" + dst.buffer.name() + "' has dtype " + t.str() +
                                "; " + op.op + " needs an integer or floating-point buffer");
  if (op.args[1].is_region()) {
    const BufferRegion& src = op.args[1].region;
    check_region_well_formed(op, src, "value");
    check_same_extents(op, dst, "dst", src, "value");
  }
}

AccessRegions access_atomic(const TileOpNode& op) {
  AccessRegions a;
  a.write(op, 0);
  a.read(op, 0);
  if (op.args[1].is_region()) a.read(op, 1);
  return a;
}

Stmt lower_atomic(const TileOpNode& op, const LowerContext& ctx) {
  const BufferRegion& dst = op.args[0].region;
  LoopNest nest = make_loop_nest(dst.squeezed_extents(), "i");
  std::vector<Expr> idx = region_indices(dst, nest.indices());
  Expr value = op.args[1].is_region() ? region_load(op.args[1].region, nest.indices()) : op.args[1].expr;
  DataType t = dst.buffer.dtype();
  Expr call = make_call(t, "tl." + op.op + "_scalar", {make_load(dst.buffer, idx), make_cast(t, value)});
  return nest.wrap(make_evaluate(call, op.span), ForKind::kParallel, global_bounds_guards(dst.buffer, idx, ctx, &nest));
}

}  // namespace

void AtomicOp::verify(const TileOpNode& op) const { check_atomic(op); }
AccessRegions AtomicOp::effects(const TileOpNode& op) const { return access_atomic(op); }
// Layout inference: an atomic works element by element, so its fragments may take the default layout.
bool AtomicOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  return stage == LayoutStage::kFree && ctx.set_default_fragment(op);
}
Stmt AtomicOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_atomic(op, ctx); }

namespace {
TileOpRegistration reg_atomic_add(std::make_unique<AtomicOp>("add"));
TileOpRegistration reg_atomic_max(std::make_unique<AtomicOp>("max"));
TileOpRegistration reg_atomic_min(std::make_unique<AtomicOp>("min"));
}  // namespace

}  // namespace tl
