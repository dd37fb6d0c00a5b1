// T.copy from a global tensor into a whole shared tile through Hopper's bulk tensor copy engine
// (TMA): the plan of the boxes (shared by src/target/cuda/ws_tma_copies.cc, which decides, and the
// copy lowering, which emits), and the lowering itself.
//
// A tensor map describes the whole global tensor (its shape and strides, read at launch) and a
// box; one TMA instruction copies one box at given element coordinates into shared memory, laid
// out densely, innermost dimension first, with the map's swizzle applied to the shared addresses.
// Elements outside the tensor arrive as zeros. A shared tile in a gmma layout of width W
// (src/layout/swizzle.h: panels of W bytes, each panel's rows W bytes apart, W-byte swizzle) is
// exactly a sequence of boxes of W / elem_bytes innermost elements with the W-byte swizzle mode,
// one per panel; a row-major tile is one box without swizzle.
//
// Stores (shared -> global, the epilogue form) use the same tensor maps: lower_cuda_tma_store.
//
// Lowered form (one statement per box):
//   cuda.tma_load(tensor[0, ..., 0], address_of(dst), address_of(mbarrier), swizzle, rank,
//                 box_0, ..., box_{rank-1}, coord_0, ..., coord_{rank-1})
// where the first argument names the global tensor (a load never evaluated), box_0 / coord_0 are
// the innermost dimension, and the copy completes box bytes on the mbarrier. The code generator
// gives every distinct (tensor, swizzle, box) a tensor-map kernel parameter (CudaLaunchInfo).
// A copy marked {multicast: c} (thread-block clusters of c CTAs) loads 1/c of each box's rows, at
// this CTA's cluster rank, into every CTA of the cluster: its boxes have box_1 / c rows and the
// statement takes one more argument, the CTA mask.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.h"
#include "target/cuda/lower_context.h"

namespace tl {

struct TmaBoxPlan {
  int swizzle = 0;                 // 0 (none), 32, 64 or 128 bytes
  std::vector<int64_t> box;        // per global dimension, innermost first
  int64_t panels = 1;              // boxes along the innermost dimension
  int64_t panel_elems = 0;         // shared elements from one panel to the next
  int64_t bytes = 0;               // bytes of the whole tile (what the mbarrier expects)
};

// Whether a copy of the global region `src` into a whole shared tile of shape `tile` (without a
// stage dimension) laid out with `swizzle` (0: row-major; 32/64/128: the gmma layout of that
// width) can go through TMA. On success fills `plan`; otherwise `why` says what prevents it.
bool plan_tma_box(const BufferRegion& src, const std::vector<int64_t>& tile, int swizzle, TmaBoxPlan* plan,
                  std::string* why);

// The CUtensorMapDataType of an element type (cuTensorMapEncodeTiled), or -1.
int tma_data_type(DataType t);

// Lowers a copy marked {tma, mbarrier} by warp_specialize: one cuda.tma_load per box.
Stmt lower_cuda_tma_copy(const TileOpNode& op, CudaLowerCtx& ctx);

// Lowers a copy of a whole shared tile into a global region marked {tma_store} by warp_specialize
// (ws_tma_store.h): every thread fences its shared stores for the async proxy, the threads meet at a
// block barrier (the consumers' named barrier in a warp-specialized kernel), and thread 0 issues
// one bulk tensor store per box and commits them as one bulk group:
//   cuda.fence_proxy_async(); tl.sync_threads();
//   if (tid == 0) { cuda.tma_store(tensor[0, ..., 0], address_of(src), swizzle, rank, box_0, ...,
//                                  box_{rank-1}, coord_0, ..., coord_{rank-1}) ...; cuda.tma_store_commit() }
// Whoever writes the tile again first waits (cuda.tma_store_wait) until the stores have read it.
Stmt lower_cuda_tma_store(const TileOpNode& op, CudaLowerCtx& ctx);

}  // namespace tl
