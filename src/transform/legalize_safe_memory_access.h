// Pass "legalize_safe_memory_access": guards accesses to global tensors whose indices may fall
// outside the tensor. A guarded load reads 0 (the convention T.copy uses for tails), a guarded
// store is skipped. Accesses proven in bounds — from kernel/thread/loop variable ranges, let
// values and enclosing conditions (if, select, && / ||) — are left alone, so kernels whose sizes
// divide their tiles pay nothing. This makes the TileLang idiom of element-wise T.Parallel loops
// over global tensors safe on tails (non-divisible sizes, dynamic M) on every target.
// Runs after lower_tile_ops (tile ops lower to accesses that are guarded already or provably
// safe) and before flattening. Off with pass config TL_DISABLE_SAFE_MEMORY_LEGALIZE.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc legalize_safe_memory_access(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
