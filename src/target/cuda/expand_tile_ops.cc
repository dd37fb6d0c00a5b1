#include "target/cuda/expand_tile_ops.h"

#include <set>

#include "transform/lower_tile_ops.h"

namespace tl {

bool cuda_lowers_tile_op(const std::string& op) {
  static const std::set<std::string> own = {
      "copy", "gemm", "reduce", "fill", "atomic_add", "atomic_max", "atomic_min", "cumsum", "finalize_reducer", "print", "dump_tensor", "annotate_layout",
      "annotate_address", "tile.exp", "tile.ln", "tile.log", "tile.abs", "tile.reciprocal", "tile.sqrt",
      "tile.rsqrt", "tile.relu", "tile.sigmoid", "tile.silu", "tile.sin", "tile.cos", "tile.neg", "tile.exp2",
      "tile.tanh", "tile.add", "tile.sub", "tile.mul", "tile.div", "tile.max", "tile.min", "tile.pow",
      "tile.axpy", "tile.cast", "tile.compare", "tile.select"};
  return own.count(op) != 0;
}

PrimFunc expand_cuda_tile_ops(const PrimFunc& f, const PassContext& ctx) {
  // Keep the ops cuda lowers (returning them unchanged), expand the others to loops.
  return lower_tile_ops(f, ctx, [](const TileOpNode& op, const LowerContext&) -> Stmt {
    if (!cuda_lowers_tile_op(op.op)) return Stmt();
    return make_tile_op(op.op, op.args, op.attrs, op.span);
  });
}

TL_REGISTER_PASS("cuda.expand_tile_ops", expand_cuda_tile_ops);

}  // namespace tl
