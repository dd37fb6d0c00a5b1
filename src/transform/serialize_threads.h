// serialize_threads: runs per-thread code (code using T.get_thread_binding) on a cpu block.
#pragma once

#include "transform/pass.h"

namespace tl {

// On cpu a block is one task on one worker thread. A kernel whose body uses a thread index runs
// that code for every thread of the block in turn:
//  - the body's leading block-level allocations (shared, fragment) and lets stay as they are;
//  - allocations that follow other top-level statements are first moved to the front (the buffer
//    is unused before its allocation);
//  - its per-thread allocations (T.alloc_local / T.alloc_var) get one copy per thread (a leading
//    dimension per thread index);
//  - the remaining top-level statements are taken in order; a run of statements that use a
//    thread index (or a per-thread buffer) becomes one loop nest over the thread indices, split at
//    each T.sync_threads() (every thread finishes the code before a barrier before any runs the
//    code after it: a valid schedule of the block); statements that use no thread index are
//    block-level code and run once (T.Parallel loops, tile ops); a thread-dependent statement that
//    contains tile ops (e.g. `if tx == 0: T.atomic_add(...)` inside a T.Persistent loop) is entered
//    when its own loop bounds / condition / let value do not depend on the thread, and the thread
//    loops are placed around the per-thread statements inside it.
//  - a barrier inside a loop whose bounds (an if whose condition, a let whose value) are the same
//    in every thread is scheduled inside it the same way (thread loops split at the barrier in
//    each iteration; a per-thread buffer allocated there gets its per-thread copy); a per-thread
//    let around a barrier whose value reads no memory is substituted into its uses.
// Raises NotImplemented (naming the statement) for what this cannot schedule: a tile op under
// thread-dependent control (tile ops are collective), a barrier under thread-dependent control, a
// dynamic thread count with per-thread buffers. Kernels that use no thread index are unchanged.
PrimFunc serialize_threads(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
