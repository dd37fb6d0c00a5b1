// FA3's intra-warpgroup overlap of warp_specialize's consumer loop (warp_specialize.h), for a loop
// body of a first GEMM group, element-wise work, and a second GEMM (attention: S = Q K^T; softmax of S
// into P; O = O * scale + P V). The first group is one GEMM, or several consecutive GEMMs (no other
// consumer item between them) accumulating into the same fragment (MLA decoding: S = Q c_kv^T +
// Q_pe k_pe^T). The body splits into
//   A1 = items [0, g1]           (up to and including the first group's last GEMM),
//   A2 = items (g1, split)       (the work that ends writing the second GEMM's A operand, P),
//   C  = items [split, g2]       (what follows: the rescale of O and the second GEMM).
// Iteration k runs A1(k), C(k - 1), A2(k): the first group's GEMMs of k and the second GEMM of k - 1
// are only issued (wgmma, kPending = -1), so the second runs on the tensor cores while A2(k) (the
// softmax) runs on the other units. A wait for the first group (wgmma.wait_group 1: everything but
// the newest group, the second GEMM) precedes A2; the wait for the second GEMM precedes the first
// item of A2 that touches its operands (P's cast to registers, or P's store to shared memory). P may
// be a fragment (register A operand) or a shared buffer: where an item of A2 writes a shared buffer
// that the second GEMM reads, a barrier of the consumers follows that wait, since every warpgroup's
// wgmma of k - 1 may read the bytes another warpgroup writes for k (the cross-warpgroup reductions
// of A2 are no such barrier: they run before the wait, while the wgmma still reads). A stage read by
// both a first-group GEMM and the second GEMM (MLA's c_kv, K and V at once) is released after the
// later reader, the second GEMM of k - 1, has completed; a stage last read by the first group after
// the wait for it. Legal when A1 and C touch no common buffer with a write (they trade places).
// Refused where a stage read in A1 is read in C as well (MLA's c_kv) and the loop has fewer than 3
// stages: such a stage is held from A1(k) to A2(k + 1), one iteration longer than in the plain loop,
// so with 2 stages the producer cannot load block k + 1 while iteration k runs and each first group
// waits for a load's full latency. Measured on an H100 (2026-11-27, bench/gpu_hopper_variants.py mla,
// B132 H128 kv 8192, block_N 64, 2 stages, shared memory full): overlapped 356-419 TFLOPS per round,
// the plain loop 390-484 (docs/PERFORMANCE.md). MLA at 3 or more stages (block_N 32) keeps it.
// Iteration min runs A1, A2 alone, the last iteration's C runs after the loop. Off with
// TL_DISABLE_WGMMA_OVERLAP.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "ir/stmt.h"
#include "layout/infer_layout.h"
#include "target/cuda/warp_specialize_common.h"
#include "transform/plan_pipeline.h"

namespace tl {

struct OverlapPlan {
  bool on = false;
  size_t g1_first = 0;                          // the first group's first GEMM (g1 its last)
  size_t g1 = 0, g2 = 0, split = 0, wait0 = 0;  // item indices (see above); wait0 in (g1, split)
  bool sync_after_wait0 = false;                // A2 writes shared memory the second GEMM reads (P)
  Buffer acc1, acc2;                            // the first group's and the second GEMM's accumulators
};

// Decides the overlap for the loop body `items` (the producer copies at `is_producer`) of a kernel of
// `nc` consumer threads with layouts `lm`: off where `pingpong` (warpgroup ping-pong) is on, a GEMM is
// left in flight across iterations (`async_at` < items.size()), the loop's `gemm_count` GEMMs are not
// all body items (fewer than 2, or one nested in another statement), `configs` has
// TL_DISABLE_WGMMA_OVERLAP, or the conditions above fail (`groups`: the producer groups, by item
// index of their first and last use; `num_stages`: the ring's stages).
OverlapPlan plan_overlap(const std::vector<BodyItem>& items, const std::set<size_t>& is_producer, size_t async_at,
                         int gemm_count, const LayoutMap& lm, int64_t nc, const AttrMap& configs, bool pingpong,
                         const std::vector<ProducerGroup>& groups, int64_t num_stages);

// The consumers' loop in the overlapped form of `ov` (`groups`: the producer groups, `versions`: the
// multi-versioned buffers, `cluster`: CTAs per cluster). `mid_release`: statements to run once every
// first GEMM has completed (the persistent form's release of the prologue's buffers). The first
// GEMM's copies in the steady loop skip fence.proxy.async where `steady_fence_free` holds its item.
Stmt overlapped_consumer(const OverlapPlan& ov, const ForNode& loop, const std::vector<BodyItem>& items,
                         const std::set<size_t>& is_producer, const std::vector<ProducerGroup>& groups,
                         const std::map<const BufferNode*, Buffer>& versions, const StageRing& ring,
                         const std::vector<Stmt>& mid_release, const std::set<size_t>& steady_fence_free,
                         int64_t cluster);

}  // namespace tl
