// flatten_buffer_access: multi-dimensional buffer accesses to linear element offsets.
#pragma once

#include "transform/pass.h"

namespace tl {

// Rewrites every load and store with one index per dimension into a single index, the element
// offset from the buffer's strides (explicit strides of T.StridedTensor, else row-major). Buffers
// keep their shapes (the runtime checks arguments against them); only the accesses change.
// Offsets into a global tensor are computed in int64 when the tensor may hold 2^31 elements or
// more (a dynamic dimension, a large shape) or when tl.config_index_bitwidth is 64; other offsets
// keep their index type. Tile ops must have been lowered before.
PrimFunc flatten_buffer_access(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
