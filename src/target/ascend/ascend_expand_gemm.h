// Expands T.gemm_v0 (and a generic T.gemm on L1 operands) into the real sequence of the
// tilelang-ascend macro, so the simulator and the sync pass see what the hardware does:
//
//   set/wait MTE2->MTE1 0      (the L1 operands written by earlier copies are complete)
//   set/wait FIX->M 0          (earlier L0C->GM copies have read the accumulator)
//   set M->MTE1 0, 1           (both halves of L0A/L0B free)
//   for kk in chunks of K (128, fewer when a half of L0A/L0B cannot hold the chunk):
//     wait M->MTE1 kk%2; copy L1 chunk -> L0A half kk%2, L1 chunk -> L0B half kk%2
//     set/wait MTE1->M kk%2; pipe_barrier(M); mma(init = init && kk == 0); set M->MTE1 kk%2
//   wait M->MTE1 0, 1; set/wait MTE1->M 0; set/wait M->FIX 0; set/wait MTE1->MTE2 0
//
// The halves are the whole L0A and L0B (pinned at byte 0 and 32768), and the event ids are 0 and
// 1, as in the real macro: a user buffer in L0A/L0B or a user flag on these ids collides with it.
// A T.gemm on L0A/L0B operands becomes one T.mma. A generic T.gemm on L1 operands in a kernel under
// automatic sync (TL_ASCEND_AUTO_SYNC, enable_auto_sync, T.Pipelined; Developer mode) keeps only the
// L0 ping-pong and the closing MTE1 -> M pair: its L1 / L0C hazards with the surrounding copies are
// left to ascend_insert_sync, which rotates them over multi-versioned L1 tiles so that the next
// tile's GM -> L1 load overlaps this gemm (T.gemm_v0 always keeps the macro's full sequence).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_expand_gemm(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
