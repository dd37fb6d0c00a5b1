// reroll_loops: runs of statements that differ only in integer constants become unrolled loops.
#pragma once

#include "transform/pass.h"

namespace tl {

// Lowering spells many loops out statement by statement (one copy of a T.Parallel body per
// register of its layout, one vector copy per chunk of a tile, one store per register of a
// fragment clear). Where such a run is regular — k consecutive groups of p statements, group j
// equal to a template with an integer `r` replaced by j, every integer constant of the template
// an affine function of r — the run becomes `for r in unroll(k): template` (ForKind::kUnrolled,
// `#pragma unroll` in cuda code), which the device compiler unrolls again: registers indexed by
// r stay registers. Groups whose constants are not affine in r (register numbers that a layout
// permutes) stay spelled out. Every rerolled loop is checked: substituting r = j in the template
// (constants folded) gives group j, structurally. Only runs of at least 4 groups are rerolled.
PrimFunc reroll_loops(const PrimFunc& f, const PassContext& ctx);

// The same on a statement (tests).
Stmt reroll_stmt(const Stmt& s);

}  // namespace tl
