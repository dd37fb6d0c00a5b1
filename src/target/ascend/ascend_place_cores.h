// Places statements written outside any T.Scope on the core whose memories they use, as
// tilelang-ascend Expert kernels expect: a UB->GM copy left after a T.Scope("V") block runs on the
// vector cores. Maximal runs of cube-only (L1/L0*, pipes mte1/m/fix) or vector-only (UB, pipes
// v/mte3) statements are wrapped in T.Scope("C") / T.Scope("V"); loops and branches whose bodies
// use both kinds stay unscoped and are entered. Scalar code (lets, loop control, GM/scalar
// locals, flags on s/mte2 only) runs on every core and stays unscoped.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_place_cores(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
