// check_cpu_constructs: rejects, early and by name, what the cpu target cannot run.
#pragma once

#include "transform/pass.h"

namespace tl {

// Analysis only (returns f unchanged). Raises NotImplemented, with the statement's source
// location, for: Ascend memories (L1, UB, L0*) and cuda barriers; Ascend core scopes (T.Scope)
// and Ascend synchronisation builtins. (Code using thread indices is handled by
// serialize_threads.)
PrimFunc check_cpu_constructs(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
