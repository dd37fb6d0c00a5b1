// The prologue copies of warp_specialize (warp_specialize.h): copies before the pipelined loop that
// the producer makes with TMA, each on an mbarrier of its own that the consumers wait for just before
// the loop (attention's Q: FA3 and TileLang load it so; thread copies cost the consumers the load, a
// block barrier and a proxy fence before the first wgmma). In the persistent form they load per tile
// (tile_prologue.h). Off with TL_DISABLE_PROLOGUE_TMA.
#pragma once

#include <utility>
#include <vector>

#include "ir/stmt.h"
#include "layout/infer_layout.h"
#include "target/cuda/cuda_tma.h"
#include "transform/plan_pipeline.h"

namespace tl {

// A top-level item of the kernel that the producer copies before its loop, and its TMA box.
using PrologueCopy = std::pair<size_t, TmaBoxPlan>;

// The prologue copies of kernel `k` (parameters `params`, top-level items `top`, the pipelined loop
// `loop` at `loop_at` with body `items`, layouts `lm`). A top-level copy qualifies when the kernel is
// one CTA per tile (or `persistent` with `persistent_flash`, TL_ENABLE_PERSISTENT_FLASH) without
// clusters (`cluster` 1) or distributed operators (`has_dist`) whose loop runs the same iterations in
// every block (unless persistent), it copies a kernel parameter into a whole shared tile that TMA can
// fill (same type, zero padding), nothing else in the kernel writes that tile or the source tensor,
// no statement between it and the loop touches the tile, and its source position reads no memory.
// None where `configs` has TL_DISABLE_PROLOGUE_TMA.
std::vector<PrologueCopy> plan_prologue(const KernelLaunchNode& k, const std::vector<Param>& params,
                                        const std::vector<BodyItem>& top, size_t loop_at, const ForNode& loop,
                                        const std::vector<BodyItem>& items, const LayoutMap& lm, const AttrMap& configs,
                                        bool persistent, bool persistent_flash, int64_t cluster, bool has_dist);

}  // namespace tl
