// cuda.expand_tile_ops: checks every tile op (TileOpDef::check) and replaces the ops that have no
// cuda lowering of their own (tile.transpose, tile.broadcast, ...) by their target-neutral loop
// form (TileOpDef::lower_loops). Runs before layout inference, so those loops are laid out and
// spread over the threads like any T.Parallel nest. The ops cuda lowers itself stay tile ops.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc expand_cuda_tile_ops(const PrimFunc& f, const PassContext& ctx);

// True for the tile ops src/target/cuda/lower_tile_ops_cuda.cc lowers itself.
bool cuda_lowers_tile_op(const std::string& op);

}  // namespace tl
