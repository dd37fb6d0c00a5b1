// Proxy fences that warp_specialize's wgmma GEMMs (warp_specialize.h) can skip: TMA and wgmma are
// both the async proxy, so a GEMM whose shared operands only the producer's TMA copies write needs
// no fence.proxy.async before its wgmma (1-4% of a 4096^3 GEMM on an H100).
#pragma once

#include <set>
#include <vector>

#include "ir/stmt.h"
#include "target/cuda/ws_overlap.h"
#include "target/cuda/ws_prologue.h"
#include "transform/plan_pipeline.h"

namespace tl {

// Sets "async_proxy_operands" on each wgmma T.gemm of the loop body `items` whose shared operands (A
// unless it is a fragment, and B) are filled by the producer's TMA copies (the loop's, the items at
// `is_producer`, or the prologue's, `pre`) and written by nothing else in the kernel: no statement
// outside the loop (`top`, the loop at `loop_at`) and no other statement of the loop writes them.
// Returns the loop body items whose copies in the overlapped form's steady loop (`ov`) skip the fence
// as well: each GEMM of the first group where an operand is written by thread stores only before the
// loop (causal attention's Q, copied by the consumers): the peeled first iteration's wgmma fences
// after those stores and the block barrier, nothing writes the operand again (one MEMBAR +
// FENCE.VIEW.ASYNC per KV block fewer). None where `configs` has TL_DISABLE_LOOP_PROXY_FENCE_ELISION.
std::set<size_t> mark_async_proxy_gemms(const std::vector<BodyItem>& top, size_t loop_at, std::vector<BodyItem>* items,
                                        const std::set<size_t>& is_producer, const std::vector<PrologueCopy>& pre,
                                        const OverlapPlan& ov, const AttrMap& configs);

}  // namespace tl
