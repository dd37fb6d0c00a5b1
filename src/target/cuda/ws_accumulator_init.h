// GEMM accumulator initializations folded into the GEMM in warp_specialize's loop body
// (warp_specialize.h; off with TL_DISABLE_WGMMA_ZERO_INIT).
//
// An initialization of a GEMM's accumulator `c` in the loop body just before the GEMM that the GEMM
// can do itself: T.clear / T.fill(c, 0) of the whole of c, or a T.Parallel nest over all of c storing
// select(cond, 0, -inf) (or +inf) into each element (attention's causal mask). The GEMM takes the
// init's place with clear_accum (its wgmma starts from zero, scale-d = 0, instead of the registers
// being cleared or masked first: 32 CS2R per KV block in causal attention's unmasked blocks), and the
// mask, if any, runs in the GEMM's place on its result: select(cond, c, -inf), or, where more GEMMs
// accumulate into c right after it (no other consumer statement between), after the last of them (MLA
// decoding's two score GEMMs stay adjacent: one group for the overlap, ws_overlap.h). Equal values:
// 0 + x = x, -inf + x = -inf for finite x (only a non-finite product differs: inf or NaN there gives
// -inf instead of NaN).
#pragma once

#include <set>
#include <vector>

#include "transform/plan_pipeline.h"

namespace tl {

// Folds each foldable accumulator initialization directly before a T.gemm of the loop body `items`
// (producer copies, the items at `is_producer`, may lie between) into the GEMM, as above.
void fold_gemm_accumulator_inits(std::vector<BodyItem>* items, const std::set<size_t>& is_producer);

}  // namespace tl
