// The cuda lowerings of the tile ops (called by src/target/cuda/lower_tile_ops_cuda.cc with the
// kernel's layouts). Each returns thread-level IR: every thread runs the returned statement.
#pragma once

#include "target/cuda/lower_context.h"

namespace tl {

// T.copy between any of global / shared / fragment / local (src/op/cuda_copy.cc): vectorized
// 16-byte accesses where alignment is provable, zero-filled reads and dropped writes outside
// global tensors, cp.async for copies the pipeliner marked async.
Stmt lower_cuda_copy(const TileOpNode& op, CudaLowerCtx& ctx);
// T.gemm (src/op/cuda_gemm.cc): ldmatrix + mma.sync through tl::gemm_ss / gemm_rs / gemm_sr, or
// the SIMT fallback.
Stmt lower_cuda_gemm(const TileOpNode& op, CudaLowerCtx& ctx);
// T.reduce_* (src/op/cuda_reduce.cc): per-thread partials, then tl::allreduce over the thread
// groups of the source layout.
Stmt lower_cuda_reduce(const TileOpNode& op, CudaLowerCtx& ctx);
Stmt lower_cuda_finalize_reducer(const TileOpNode& op, CudaLowerCtx& ctx);
// T.fill, T.atomic_add, T.cumsum, T.print, element-wise tile.* ops (src/op/cuda_misc.cc).
Stmt lower_cuda_fill(const TileOpNode& op, CudaLowerCtx& ctx);
Stmt lower_cuda_atomic(const TileOpNode& op, CudaLowerCtx& ctx);  // atomic_add / atomic_max / atomic_min
Stmt lower_cuda_cumsum(const TileOpNode& op, CudaLowerCtx& ctx);
Stmt lower_cuda_print(const TileOpNode& op, CudaLowerCtx& ctx);
Stmt lower_cuda_elementwise(const TileOpNode& op, CudaLowerCtx& ctx);
// The tile.<fn> functions lower_cuda_elementwise implements (the others take their loop form).
bool cuda_lowers_elementwise(const std::string& fn);

// cuda's lowering hook for one tile op: the entry of the table (by TileOpKind, in
// lower_tile_ops_cuda.cc) of the operators cuda lowers itself; nullptr for an op that cuda leaves
// to its target-neutral loop form (cuda.expand_tile_ops expands those first).
using CudaTileOpLowering = Stmt (*)(const TileOpNode& op, CudaLowerCtx& ctx);
CudaTileOpLowering find_cuda_tile_op_lowering(const TileOpNode& op);

}  // namespace tl
