// config_index_bitwidth: index arithmetic in 64 bits wherever a value can exceed int32.
#pragma once

#include <vector>

#include "transform/pass.h"

namespace tl {

// What the pass does to a function, and what the call must check.
//   - Integer index arithmetic (expressions of loop, block, thread and let-bound variables,
//     dynamic dimensions, integer scalar parameters and constants: no loads, no calls) whose
//     exact value range exceeds its int32 type is recomputed in int64: `bx * 1024 + i` over a
//     grid of 2^21 blocks becomes `int64(bx) * 1024 + int64(i)`. Loop and let variables whose
//     values no longer fit int32 become int64. Ranges come from the static extents (loop
//     extents, the grid, threads), so this is decided at compile time.
//   - Run-time integers (dynamic dimensions, integer scalar parameters) are assumed to lie in
//     [-limit, limit] (dimensions [0, limit]): the largest limit in 2^31 - 1, 2^30 - 1, ...,
//     2^24 - 1 under which they cause no overflow. A limit below 2^31 - 1 is checked at every
//     call (ArgumentError naming the value and the pass config); when even 2^24 - 1 overflows,
//     the expressions are widened for the full int32 range instead.
//   - tl.config_index_bitwidth = 64: every such expression is computed in int64, no limit.
struct IndexWidthPlan {
  bool widens = false;          // the pass rewrites some expressions
  int64_t runtime_limit = 0;    // 0: no call-time check; else |value| <= runtime_limit
  std::vector<Var> limited;     // the run-time integers the limit applies to
};

IndexWidthPlan plan_index_width(const PrimFunc& f, const AttrMap& configs);

// The rewrite described above (the first pass of every target's pipeline).
PrimFunc config_index_bitwidth(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
