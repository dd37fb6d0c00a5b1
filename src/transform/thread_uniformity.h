// thread_uniformity: which per-thread buffers (`local`, `local.var`) of a lowered cuda kernel hold
// the same contents in every thread of the block.
//
// A per-thread buffer is uniform when every write to it stores the same value at the same index
// in every thread: a store whose index and value are uniform, under no condition or loop bound
// that depends on the thread, or a whole-tile copy (cuda.copy_vec / copy_cast / copy_vec_zfill)
// from a uniform address. Memory read at a uniform address (global or shared) is uniform: threads
// of one block read the same element (a concurrent writer would be a race the barriers exclude).
// Values that depend on the thread: thread variables, lets and loop variables bound to such values,
// loads of non-uniform per-thread buffers, and atomics (each thread gets a different old value).
// Anything else that writes a per-thread buffer (mma fragments, reductions, unknown calls) makes it
// non-uniform.
//
// This is what lets `if (block_mask[k])` on a fully replicated fragment (TileLang's block-sparse
// attention) hold barriers inside: the condition has one value for the whole block.
#pragma once

#include <set>

#include "ir/stmt.h"

namespace tl {

// The per-thread buffers allocated in `kernel_body` whose contents may differ between threads;
// `thread_vars` are the kernel's thread index variables.
std::set<const BufferNode*> thread_varying_buffers(const Stmt& kernel_body, const std::set<const VarNode*>& thread_vars);

}  // namespace tl
