// serialize_threads: runs per-thread code (code using T.get_thread_binding) on a cpu block.
#pragma once

#include "transform/pass.h"

namespace tl {

// On cpu a block is one task on one worker thread. A kernel whose body uses a thread index runs
// that code for every thread of the block in turn:
//  - the body's leading block-level allocations (shared, fragment) and lets stay as they are;
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
// Raises NotImplemented (naming the statement) for what this cannot schedule: a tile op under
// thread-dependent control (tile ops are collective), a barrier inside control flow, a dynamic thread
// count with per-thread buffers. Kernels that use no thread index are unchanged.
PrimFunc serialize_threads(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
