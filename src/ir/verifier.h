// Structural checks of a function, run after the frontend and after every pass (PassRunner):
//   - every variable used is defined: parameters, dynamic dims (variables in parameter
//     shapes/strides), for/let/kernel variables, in the scopes of ir/scope_walk.h; the index
//     variables an attribute map lists under "vars" (T.annotate_layout) count as defined for
//     that map;
//   - every buffer used (loads, stores, tile-op regions, buffer attributes) is a parameter or
//     allocated by an enclosing `alloc`;
//   - loads/stores have one index per dimension (or a single flat index); tile-op regions have
//     one range per dimension;
//   - tile ops registered in the op registry pass their `check` (their own typed errors
//     propagate unchanged); unknown ops are allowed;
//   - no T.Kernel inside another T.Kernel;
//   - break/continue only inside a loop, and not directly inside a parallel/vectorized one.
// A violation raises VerifyError "file:line:col: IR verification failed: <what> ... in `<stmt>`".
// Linear in the size of the function.
#pragma once

#include "ir/stmt.h"

namespace tl {

void verify(const PrimFunc& f);

}  // namespace tl
