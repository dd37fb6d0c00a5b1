// The producer's TMA copies in warp_specialize (warp_specialize.h): whether TMA can make a copy (its
// box), and which copies the CTAs of a thread-block cluster share by multicast.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "layout/infer_layout.h"
#include "target/cuda/cuda_tma.h"
#include "transform/plan_pipeline.h"

namespace tl {

// Whether TMA can make the global -> shared copy `op` (no disable_tma, zero padding, no type
// conversion, a kernel parameter of `params` as source, a row-major or gmma-swizzled tile as laid out
// by `lm`): fills `box`, or says in `why` what prevents it. For the loop's producers and the
// prologue's copies.
bool tma_box_for(const TileOpNode& op, const LayoutMap& lm, const std::vector<Param>& params, TmaBoxPlan* box,
                 std::string* why);

// The producer copies (items `producers` of the loop body `items`, TMA boxes `boxes`) that the
// `cluster` CTAs of a cluster of kernel `k` (top-level items `top`) can share: the source region does
// not depend on the block's x index (the CTAs of a cluster differ only there), and the box splits
// along its rows into `cluster` shares that keep the shared layout's swizzle pattern (each share a
// multiple of 1024 bytes) and are contiguous in shared memory (no box dimension beyond the rows).
std::set<size_t> plan_multicast(const KernelLaunchNode& k, const std::vector<BodyItem>& top,
                                const std::vector<BodyItem>& items, const std::vector<size_t>& producers,
                                const std::map<size_t, TmaBoxPlan>& boxes, int64_t cluster);

}  // namespace tl
