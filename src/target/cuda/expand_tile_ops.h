// cuda.expand_tile_ops: checks every tile op (TileOp::verify) and replaces the ops that have no
// cuda lowering of their own (tile.transpose, tile.broadcast, ...) by their target-neutral loop
// form (TileOp::lower_loops). Runs before layout inference, so those loops are laid out and
// spread over the threads like any T.Parallel nest. The ops cuda lowers itself stay tile ops.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc expand_cuda_tile_ops(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
