// legalize_cpu_loops: the cpu meaning of each loop kind, made explicit for codegen.
#pragma once

#include "transform/pass.h"

namespace tl {

// On cpu a block is one task on one worker thread, so:
//  - T.Pipelined and T.Persistent loops run as plain serial loops (their annotations are dropped:
//    there is no asynchronous copy to overlap, and a persistent wave loop already carries its tile
//    arithmetic in its body);
//  - T.Parallel and T.vectorized are SIMD hints: the innermost such loop (one with no loop inside)
//    becomes `vectorized`, which codegen emits with `#pragma GCC ivdep`; an outer one becomes
//    serial (a hint on an outer loop would vectorize across rows instead of along them), and so
//    does one with a store to an element that does not depend on the loop variable (an
//    accumulator: a dependence across iterations). With tir.disable_vectorize the innermost ones
//    become serial too;
//  - serial and unrolled loops are kept.
// After this pass only serial, unrolled and vectorized loops remain.
PrimFunc legalize_cpu_loops(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
