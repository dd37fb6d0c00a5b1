// inject_pipeline: software pipelining of T.Pipelined loops at tile level (cuda: cp.async).
//
// With the producers plan_pipeline picks, a loop `for k in T.Pipelined(n, num_stages=S)` becomes
//
//     prologue:  for s in 0 .. S-2:  [if s < n] producers(k = s) into version s;  commit
//     for k in 0 .. n-1:
//         cp_async_wait(S-2); sync_threads          // version k % S has landed, for all threads
//         [if k+S-1 < n] producers(k + S - 1) into version (k + S - 1) % S;  commit
//         the other statements of iteration k, reading version k % S
//     cp_async_wait(0)
//
// Destination buffers get a leading stage dimension of extent S; the producer copies are marked
// {async = true} so the cuda lowering emits cp.async (a copy that cannot be asynchronous, e.g.
// with a type conversion, stays a synchronous copy and insert_thread_sync orders it). One group
// is committed per iteration even when empty, so wait counts are exact. The barrier after the
// wait also separates iteration k-1's reads of a version from iteration k's refill of it.
// Loops without producers, and num_stages < 2, become plain serial loops. Buffers allocated inside
// the loop body are allocated around the loop (they live across iterations once pipelined).
//
// sm_90a, S >= 3: when the body's only T.gemm reads two producer stages into an accumulator that
// nothing else in the body touches, the GEMM is marked {wgmma_async}: its wgmma instructions stay
// in flight until the next iteration's GEMM has issued its own (wgmma.wait_group 1). The refill
// then targets the stage read two iterations ago (prefetch distance S - 2, cp_async_wait(S - 3)),
// and the loop is annotated {cuda.async_mma} so the lowering waits for the last GEMM after it.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc inject_pipeline(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
