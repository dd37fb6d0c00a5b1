// Vid reduction: the 1:2 cube:vector ratio of Developer kernels, done by the compiler.
//
// Applies to a kernel with two vector cores that does not address them itself: the Developer form
// `T.Kernel(n, threads=2, is_npu=True) as cid`, or (with the cube/vector split on: TL_ASCEND_AUTO_CV_
// COMBINE, target "npuir") `T.Kernel(n, is_npu=True) as cid` / `as (cid, vid)` whose body never uses
// vid and writes no T.Scope. Each vector core then takes half of every row-split UB tile:
//   - every UB buffer of rank >= 2 is split: dim 0 halved (it must be a static even extent);
//     a rank-1 UB buffer is split when it is a row vector (indexed by the row variable of a T.Parallel
//     nest, the result of a row reduction, or, without evidence either way, of the row extent),
//     and kept whole on both cores when it is a column vector (indexed by a column variable: a bias,
//     LayerNorm's gamma); rank-1 buffers joined by element-wise ops share the decision;
//   - tile-op regions of split buffers must cover dim 0 and become the first half;
//   - GM <-> UB copies of split buffers move the GM region by vid * rows/2 along the GM dimension
//     that maps to UB dim 0 (GM workspaces of ascend_cv_split alike: each vector core moves its half);
//   - T.Parallel nests over split buffers halve the row loop and offset its uses in whole buffers;
//   - a sequential loop whose variable walks the rows of split buffers (`for h in range(rows):
//     T.tile.sub(x[h, :], x[h, :], m[h])`, TileLang-Ascend's per-row form) is halved when it runs
//     over exactly their rows and uses the row nowhere else;
//   - T.tile.createvecindex on a split tile counts on from vid * (elements of a half); T.tile.gather
//     (byte offsets over the whole tile) and a T.reinterpretcast between a split and a whole buffer
//     are NotImplemented (a vector-only kernel then runs on one vector core, below);
//   - the kernel gets its vid variable (Developer form: a new one, block var 1, attribute npu_vid).
// A vector-only kernel (no cube memory, no gemm) with no UB tile to split runs on one vector core per
// block instead (threads=1, vid dropped): otherwise both cores would do the whole work twice.
// Fails closed (typed error naming the buffer and the statement): a dim-0 region that is not the
// whole tile, a reduction over dim 0 of a split buffer, scalar accesses of a split buffer outside
// T.Parallel, a rank-1 buffer indexed both as a row and as a column, UB <-> UB copies between a split
// and a whole buffer, a whole UB buffer written to GM (both cores would write it).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_vid_reduction(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
