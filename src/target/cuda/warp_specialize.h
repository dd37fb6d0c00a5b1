// warp_specialize: Hopper (sm_90a) producer/consumer form of a kernel's T.Pipelined loop, with
// TMA copies into a ring of shared-memory stages guarded by mbarriers.
//
// A kernel of NC threads (T.Kernel(threads=NC), NC a multiple of 128) whose one T.Pipelined loop
// (at the top of the kernel body) has producers (plan_pipeline.h) that TMA can copy
// (op/cuda_tma.h: global tiles into whole shared tiles that are row-major or in a gmma layout,
// predicted by running layout inference) and whose GEMMs all run on wgmma becomes
//
//     mbarriers full[g][s], empty[g][s]        (g: producer group, s < S = num_stages)
//     if tid == 0: init full (1 arrival) and empty (NC arrivals); fence; __syncthreads (cuda.sync_all)
//     attr cuda.warp_specialize NC:
//       if tid < NC:   attr cuda.warp_role "consumer":   (the original statements of the kernel)
//           setmaxnreg_inc; ...
//           for k:  for each group g first used by the next statement:  wait(full[g][s], parity)
//                   the statement (reading stage s = (k - min) % S, parity = ((k - min) / S) & 1)
//                   after a group's last use: arrive(empty[g][s]); after a GEMM left in flight
//                   ({wgmma_async}, the loop's only GEMM): arrive(empty[g][s of k - 1]) if k > min
//           ...
//       else:          attr cuda.warp_role "producer":   (one more warpgroup, 128 threads)
//           setmaxnreg_dec; if tid == NC:
//             for k: for each group g: wait(empty[g][s], parity ^ 1); arrive_expect_tx(full[g][s], bytes);
//                    its copies as {tma, mbarrier = full[g][s]} into stage s
//
// Copies before the loop that TMA can make (attention's Q; plan_prologue in ws_prologue.h says when) are
// the producer's too: it issues them first, each on an mbarrier of its own, and the consumers wait
// for those barriers just before the loop (TL_DISABLE_PROLOGUE_TMA: they stay the consumers' copies).
//
// The copy of the output tile to a global tensor after the loop becomes a TMA store that one consumer
// thread issues from a shared staging buffer (plan_tma_store_epilogue in ws_tma_store.h says when;
// TL_DISABLE_TMA_STORE keeps the register store).
//
// A producer group is the set of copies whose buffers are first used by the same statement (a
// GEMM's two operands form one group; flash attention's K and V two, so Q K^T starts before V
// lands). The kernel gets the attribute cuda.producer_threads = 128: the launch has NC + 128
// threads, layouts stay those of the NC consumer threads, and the consumers' barriers are a named
// barrier over NC threads (tl::sync_block). Statements of the kernel body are moved after its
// let bindings and allocations (lets that read memory after a statement disqualify the kernel).
//
// Off with TL_DISABLE_WARP_SPECIALIZED or TL_DISABLE_TMA_LOWER (then inject_pipeline uses
// cp.async), and for kernels outside the conditions above; the reason is recorded in the kernel
// attribute cuda.why_not_warp_specialized (shown by TL_PASS_VERBOSE / IR dumps).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc warp_specialize(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
