// Structural checks of a function: every variable used is defined (params, loop/let/kernel vars,
// dynamic dims), every buffer used is a parameter or allocated in an enclosing scope, index counts
// match buffer ranks, tile-op arguments are well formed (op registry), no T.Kernel nesting.
// Violations raise VerifyError naming the construct and its source location.
#pragma once

#include "ir/stmt.h"

namespace tl {

void verify(const PrimFunc& f);

}  // namespace tl
