// insert_thread_sync: places __syncthreads() (tl.sync_threads) between shared-memory accesses of
// different threads that could otherwise race, on thread-level cuda IR (after
// cuda.lower_tile_ops and plan_shared_memory).
//
// One effect model covers every shared-memory access: loads and stores, the address_of operands
// of device calls (with their read/write mode: gemm operands, vector copies), and cp.async writes.
// Two accesses conflict when their byte ranges in the planned shared-memory block overlap (two
// buffers that plan_shared_memory placed on the same bytes conflict), at least one writes, and no
// barrier separates them. Scanning in program order with the accesses pending since the last
// barrier, a barrier goes right before the first access that conflicts with a pending one. Loops
// are scanned twice (the second time with the state at the end of the body merged in) so that
// conflicts carried from one iteration to the next are seen. Calls that synchronize internally
// (cuda.call_sync: cross-warp reductions) and explicit barriers clear the state.
//
// Global memory is tracked too, by buffer: each tile op (T.Parallel, T.copy, ...) of a block has
// its own thread mapping, so an element one op writes may be read by another thread in the next
// op. A later op's read after a write, or write after a read, of the same global buffer gets a
// barrier (a read-modify-write such as an atomic counts as both); writes after writes do not (a
// tile op stores each element once, and a persistent loop stores a new tile each iteration).
// Accesses of one tile op never conflict with each other (each thread owns its elements), and
// a global-memory conflict inside a thread-dependent condition is not an error.
//
// Asynchronous copies (cp.async, issued by inject_pipeline or T.async_copy) count as writes against
// earlier pending accesses (a barrier goes before a cp.async that would overwrite data still being
// read); their own writes become pending at the next cp_async_wait (the pipeline places a barrier
// right after its waits; after a T.ptx_wait_group of the program, the first read by another
// thread gets one here).
//
// No barrier is ever placed under a condition that depends on the thread: when a branch of such
// an `if` needs one, it goes before the `if`; a conflict inside one branch of a thread-dependent
// condition cannot be synchronized and raises SyncError. A condition depends on the thread when it
// uses a thread index, a value derived from one, or a per-thread buffer whose contents differ
// between threads (transform/thread_uniformity.h: a replicated fragment loaded from one global
// address, such as a block-sparse mask, is the same in every thread). The pass config
// TL_DISABLE_THREAD_STORAGE_SYNC turns the pass off.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc insert_thread_sync(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
