// check_cpu_constructs: rejects, early and by name, what the cpu target cannot run.
#pragma once

#include <cstdint>

#include "transform/pass.h"

namespace tl {

// Most bytes of constant-shape block-local buffers (shared, fragment, local) one block may declare on
// cpu. Blocks run concurrently on every hardware thread, so this bounds their memory; it also keeps
// every element offset of such a buffer within int32.
inline constexpr int64_t kCpuMaxBlockLocalBytes = int64_t(256) << 20;

// Analysis only (returns f unchanged). Raises, with the statement's source location:
// NotImplemented for Ascend memories (L1, UB, L0*) and cuda barriers, Ascend core scopes (T.Scope)
// and Ascend synchronisation builtins; ResourceError when a kernel's constant-shape block-local
// buffers exceed kCpuMaxBlockLocalBytes; ValueError for an integer division or remainder by the
// constant 0 (undefined behaviour that the C++ compiler turns into a trap). (Code using thread
// indices is handled by serialize_threads.)
PrimFunc check_cpu_constructs(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
