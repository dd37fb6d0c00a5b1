// Running a piece of the compiler on a thread with a large stack. The compiler's walkers recurse
// over expressions (bounded by kMaxExprDepth, ir/expr.h) and statements; NVRTC's front end recurses
// too. Running lowering, code generation and NVRTC on a 256 MiB stack (address space reserved,
// pages touched only as used) keeps them clear of the caller's stack limit, whichever thread —
// a Python thread with a small stack included — asked for the kernel.
#pragma once

#include <cstddef>
#include <functional>

namespace tl {

// Runs `fn` on a fresh thread with a `stack_bytes` stack and waits for it; an exception thrown by
// `fn` is rethrown here. If no such thread can be created, `fn` runs on the calling thread.
void run_with_large_stack(const std::function<void()>& fn, size_t stack_bytes = size_t(256) << 20);

}  // namespace tl
