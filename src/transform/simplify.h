// Pass "simplify": simplifies every expression of a function with what is known at its position,
// and removes control flow that the simplification decides.
//
// - Variable ranges: kernel block indices in [0, grid[i]), thread indices in [0, threads[i]), loop
//   variables in [min, min + extent), let variables equal to their values, dynamic dimensions
//   (T.dynamic) in [0, +inf). Inside `if (c)` the then-branch assumes c and the else-branch !c;
//   the same holds for select and the operands of && / ||.
// - Expressions everywhere: indices, values, conditions, loop bounds, kernel extents, tile-op
//   regions and scalar arguments, expression-valued annotations (Analyzer::simplify; rules in
//   docs/ARITH.md).
// - Control flow:
//     if (true) A else B -> A;  if (false) A else B -> B;  if (c) {} else B -> if (!c) B;
//     a loop whose extent is provably <= 0 is removed; a loop with an empty body is removed;
//     a loop of extent 1 is replaced by its body with the variable set to the loop's min when
//     its kind is serial, unrolled or vectorized (and no allocation inside has a shape that
//     mentions the variable). Parallel loops stay (layout inference maps a
//     T.Parallel nest onto threads and fragments, so the nest shape is meaningful), and so do
//     pipelined and persistent loops (their annotations drive later passes);
//     `evaluate` of an expression without side effects is removed.
// Buffer shapes are not rewritten (buffers are shared by identity).
#pragma once

#include "arith/analyzer.h"
#include "transform/pass.h"

namespace tl {

PrimFunc simplify(const PrimFunc& f, const PassContext& ctx);

// The same rewriting on a statement, with what `analyzer` knows about the enclosing scope (for
// passes that build new code and want it tidy).
Stmt simplify_stmt(const Stmt& s, Analyzer& analyzer);

}  // namespace tl
