// plan_shared_memory: places every shared-memory buffer of a kernel in one dynamic shared-memory
// block, reusing the space of buffers whose live ranges do not overlap.
//
// Liveness is measured in program order over the kernel's statements; an access inside a loop
// keeps the buffer live for the whole loop (so a buffer reused across iterations is never
// overwritten by another one in between). The branches of a warp-specialized kernel run at the
// same time and are measured from the same position. Buffers are placed first-fit in order of first use at
// 128-byte aligned offsets. The pass config TL_DISABLE_SHARED_MEMORY_REUSE gives every buffer its
// own space. A total above the device limit of the target (sm_80: 163 KiB, sm_86/sm_89: 99 KiB,
// sm_90: 227 KiB per block) raises ResourceError listing the buffers and their sizes.
//
// Output: each shared allocation is wrapped in `attr "smem_offset" = <bytes>`; the kernel gets the
// attribute "dyn_smem_bytes". Two buffers may now share bytes: insert_thread_sync treats accesses
// to overlapping byte ranges as accesses to the same memory.
#pragma once

#include <cstdint>

#include "transform/pass.h"

namespace tl {

PrimFunc plan_shared_memory(const PrimFunc& f, const PassContext& ctx);

// Bytes of dynamic shared memory one block may use on a cuda architecture ("sm_80", ...).
int64_t max_shared_bytes_per_block(const std::string& arch);

}  // namespace tl
