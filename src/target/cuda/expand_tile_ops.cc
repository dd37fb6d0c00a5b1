#include "target/cuda/expand_tile_ops.h"

#include "target/cuda/cuda_ops.h"
#include "transform/lower_tile_ops.h"

namespace tl {

PrimFunc expand_cuda_tile_ops(const PrimFunc& f, const PassContext& ctx) {
  // Keep the ops cuda lowers (returning them unchanged), expand the others to loops.
  return lower_tile_ops(f, ctx, [](const TileOpNode& op, const LowerContext&) -> Stmt {
    if (!find_cuda_tile_op_lowering(op)) return Stmt();
    return make_tile_op(op.op, op.args, op.attrs, op.span);
  });
}

TL_REGISTER_PASS("cuda.expand_tile_ops", expand_cuda_tile_ops);

}  // namespace tl
