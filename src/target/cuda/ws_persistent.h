// The persistent tile schedule of warp_specialize (warp_specialize.h): one CTA per SM loops over the
// kernel's tiles, the stages and phases of the ring continuing from tile to tile.
//
// CTA `cta` of cuda.num_ctas() runs tiles cta, cta + num_ctas, ... of the original grid (rasterized
// as the kernel's T.use_swizzle asks), each under lets that rebind the kernel's block variables.
// Where the pipelined loop's trip count depends on the tile (causal attention), only with
// TL_ENABLE_PERSISTENT_FLASH: the tiles then run in pairs of complementary lengths
// (persistent_order.h), and the ring's position is a per-thread running sum of the earlier tiles'
// iterations (`base`). Off with TL_DISABLE_PERSISTENT.
#pragma once

#include <vector>

#include "ir/stmt.h"
#include "transform/plan_pipeline.h"

namespace tl {

struct PersistentPlan {
  bool on = false;
  Var cta, iter;         // the CTA index (the kernel's block variable) and the tile loop's counter
  Expr tiles;            // number of tiles (the original grid's size)
  std::vector<Stmt> tile_lets;  // per tile: let t, the original block variables (rasterized)
  Expr trip;             // iterations of the tile loop
  // Where the pipelined loop's trip count depends on the tile (TL_ENABLE_PERSISTENT_FLASH only):
  Expr valid;            // whether the tile loop's iteration runs a tile (persistent_order.h)
  Buffer base;           // per thread: [0] the pipelined iterations of the CTA's earlier tiles, [1] their number
  Expr extent;           // the pipelined loop's trip count (added to base after each tile)
};

// Whether the loop's bounds depend on the block index (through the kernel's lets `top`), as a causal
// attention's do.
bool trip_depends_on_tile(const KernelLaunchNode& k, const std::vector<BodyItem>& top, const ForNode& loop);

// Decides the persistent form of kernel `k` (top-level items `top`, pipelined loop `loop`): every
// tile's pipelined loop runs the same iterations (its bounds do not depend on the block index), so a
// static round-robin over the tiles is balanced. Where they do (causal attention), only with
// `persistent_flash` (TL_ENABLE_PERSISTENT_FLASH): then the tiles run in pairs of complementary
// lengths (persistent_order.h), and the ring's position is a running sum. `on` is false where
// `configs` has TL_DISABLE_PERSISTENT or the grid is not 1 to 3 extents.
PersistentPlan plan_persistent(const KernelLaunchNode& k, const std::vector<BodyItem>& top, const ForNode& loop,
                               const AttrMap& configs, bool persistent_flash);

// `body` inside the tile loop of `p` (persistent form) after the tile's bindings and `lets`;
// unchanged where `p` is off. With `fresh`, the loop and its bindings get new variables (the
// producer's copy: the emulator runs the two roles interleaved, so they must not share bound
// variables).
Stmt persistent_tile_loop(const PersistentPlan& p, const std::vector<BodyItem>& lets, const Stmt& body,
                          const Span& span, bool fresh);

}  // namespace tl
