// TMA-store epilogues of warp_specialize's kernels (warp_specialize.h): the copy of a tile to a global
// tensor after the pipelined loop (the README GEMM's `T.copy(C_local, C[by * BM, bx * BN])`, or
// `T.copy(C_shared, C[...])` where the program staged the tile itself) becomes a bulk tensor store
// (cp.async.bulk.tensor shared -> global) that one consumer thread issues, instead of every consumer
// thread storing its registers to global memory while the tensor cores idle.
//
// Form, per chunk c of the tile (columns [c * W, (c + 1) * W) into staging buffer c % B; one chunk of
// the whole tile where it fits):
//   if (tid == 0) tma_store_wait<B - 1>();  sync_block();   // the store that last read the buffer is done
//                                                          // reading (persistent kernels and c >= B only)
//   T.copy(C_local[:, chunk], C_stage[c % B])                 // registers -> shared (st.shared, 128-byte swizzle)
//   T.copy(C_stage[c % B], C[...chunk]) {tma_store}           // lowered (cuda_tma.h): fence.proxy.async;
//                                                          // sync_block(); if (tid == 0) { tma_store; commit }
// and, after the consumers' tile loop, `if (tid == 0) tma_store_wait<0>()` (the shared memory must
// stay valid until the last store has read it). In the persistent form a tile's stores run under the
// next tile's main loop: the staging buffers are allocated at the kernel's top, so they never share
// bytes with the pipeline's stages (every shared buffer of a persistent kernel is live across its
// tile loop). Where the program staged the tile itself, its shared buffer is the staging buffer (row
// major or a gmma layout), and the wait goes before the first statement after the loop that uses it.
//
// Eligible: a top-level T.copy after the pipelined loop from a whole fragment (or a shared buffer used
// only after the loop) into a region of a global tensor of 2 to 5 dimensions that is a kernel
// parameter, with constant extents of which only the last (columns) and at most one other (rows) are
// not 1 (attention's `Output[b, rows, h, :]`), whose type has a tensor-map type and whose row stride is provably a multiple
// of 16 bytes (cuTensorMapEncodeTiled), rows at most 256 (box limit), and nothing after the copy that
// touches the tensor (in the persistent form nothing else in the kernel: `C += A @ B`, which reads C
// before the loop, keeps the register store there). Partial tiles at the tensor's edges need nothing: TMA drops what falls outside.
// The staging bytes are budgeted against the architecture's shared memory (with the kernel's other
// shared buffers, the stages counted `num_stages` times): the whole tile in one buffer, else 128-byte
// column chunks in two buffers, else one; otherwise the copy keeps the register store. Off with
// TL_DISABLE_TMA_STORE (and TL_DISABLE_TMA_LOWER, which turns warp specialization off), and in kernels
// with distributed operators (a peer may read the tile once the kernel signals: the stores would
// still be in flight).
#pragma once

#include <map>
#include <vector>

#include "ir/stmt.h"
#include "layout/infer_layout.h"
#include "transform/pass.h"
#include "transform/pass_config.h"
#include "transform/plan_pipeline.h"

namespace tl {

struct TmaStoreEpilogue {
  std::map<size_t, Stmt> rewritten;  // index in the kernel's top-level items -> the statements replacing it
  std::vector<BodyItem> allocs;      // the staging buffers (kernel-level allocations)
  Stmt drain;                        // after the consumers' tile loop (undefined: no TMA store)
  bool on() const { return !rewritten.empty(); }
};

// Plans the TMA-store epilogues of kernel `k` (top-level items `top`, pipelined loop at `loop_at`, its
// layouts `lm`, parameters `params`, its consumer threads' index `tid`), `shared_bytes` being what the
// kernel's other shared buffers take and `persistent` whether its tiles loop in one CTA.
TmaStoreEpilogue plan_tma_store_epilogue(const KernelLaunchNode& k, const std::vector<BodyItem>& top, size_t loop_at,
                                         const LayoutMap& lm, const std::vector<Param>& params,
                                         const PassContext& ctx, bool persistent, int64_t shared_bytes);

// The bytes plan_shared_memory will give the shared allocations among `items` (each versioned buffer
// `S` times) plus `extra`, each slot aligned as plan_shared_memory aligns it: an upper bound for a
// kernel whose shared buffers are all live at once.
int64_t shared_bytes_estimate(const std::vector<BodyItem>& items, const std::vector<Buffer>& versioned, int64_t S,
                              int64_t extra);

}  // namespace tl
