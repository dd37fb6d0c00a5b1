// bound_parallel_extents: a T.Parallel loop whose extent is known only at run time but has a
// constant upper bound (`for i in T.Parallel(T.min(valid_len, 512))`) becomes a loop over that
// bound with the body guarded by `i < extent`, so targets that lay T.Parallel loops out over
// threads (cuda) can place it. Loops whose extent has no constant bound are left unchanged (the
// layout inference reports them).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc bound_parallel_extents(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
