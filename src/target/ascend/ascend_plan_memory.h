// Gives every on-chip buffer (L1, L0A, L0B, L0C, UB) a 32-byte aligned byte address, emitted as a
// T.annotate_address op at the top of the buffer's allocation. Buffers pinned by the user with
// T.annotate_address keep their address (checked for alignment and capacity; pinned buffers may
// alias on purpose). A T.reinterpretcast view takes its source's address and keeps the source
// alive for as long as the view is used. With TL_ASCEND_MEMORY_PLANNING the others are placed by a linear scan over
// their lifetimes (ascend_liveness.h), first fit, so buffers with disjoint lifetimes share memory;
// without it, each gets its own region in allocation order. A buffer the kernel never accesses takes
// no memory (TileLang-Ascend's programs allocate tiles they use only for some dtypes). A kernel that does not fit is refused
// with a ResourceError listing the memory's buffers and sizes. The function gets the attributes
// "ascend.peak_bytes" ([L1, L0A, L0B, L0C, UB]) and "ascend.memory_planning".
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_plan_memory(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
