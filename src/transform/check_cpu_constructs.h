// check_cpu_constructs: rejects, early and by name, what the cpu target cannot run.
#pragma once

#include "transform/pass.h"

namespace tl {

// Analysis only (returns f unchanged). Raises NotImplemented, with the statement's source
// location, for: a thread index used in the kernel body (T.get_thread_binding: on cpu a block is
// one task and T.Parallel carries the element-wise work); Ascend memories (L1, UB, L0*) and cuda
// barriers; Ascend core scopes (T.Scope) and Ascend synchronisation builtins.
PrimFunc check_cpu_constructs(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
