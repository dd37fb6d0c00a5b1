// The tile order of a persistent warp-specialized kernel whose pipelined loop's length depends on the
// tile (causal attention: q block bx runs min(n_kv, ceil((bx + 1) * block_M / block_N)) KV blocks),
// under TL_ENABLE_PERSISTENT_FLASH.
//
// A static round-robin over the tiles in grid order gives each CTA one residue class of bx (the CTA
// count and the number of q blocks share factors: 132 CTAs, 32 q blocks, bx mod 4), so the busiest
// CTA has 12% more work than the average (B8 H16 S4096: 451 to 576 KV blocks, average 512). A
// globally longest-first order balances but runs the same q block of ~130 different heads at once,
// whose K / V (2 MiB each) do not stay in L2. Here the tiles are paired instead: q blocks bx and g0 - 1 - bx of one head (together g0 + 1
// KV blocks for the causal mask, whatever bx) form a pair, pairs are dealt round-robin to the CTAs,
// and each CTA runs its pair's longer tile (the larger bx) first, then the shorter:
//
//     half = ceil(g0 / 2), pairs = half * g1 * g2, trip = 2 * ceil((pairs - cta) / num_ctas)
//     tile j of CTA cta: p = cta + (j / 2) * num_ctas, side = j % 2, b = p % half, h = p / half
//                        bx = side == 0 ? g0 - 1 - b : b, by = h % g1, bz = h / g1
//
// Consecutive pairs share a head, so the CTAs at work at one time cover ~num_ctas / half heads
// (whose K / V stay in L2), as in grid order. With g0 odd, the middle q block is its own pair: its
// second tile is not run (`valid` is false there). Correct for any dependence of the loop's length
// on the tile: the order only moves the balance.
#pragma once

#include <vector>

#include "ir/stmt.h"

namespace tl {

struct PairedTileOrder {
  std::vector<Stmt> lets;  // per tile: let p, side, b, h, then the kernel's block variables (LetStmts, nop bodies)
  Expr trip;               // tiles of CTA `cta` (its tile loop's extent)
  Expr valid;              // whether tile j is run; undefined where every tile is (g0 even)
};

// The order above for the kernel grid `grid` (1 to 3 extents) and its block variables; `cta`, `iter`:
// the CTA index and the tile loop's counter, `num_ctas`: the number of CTAs.
PairedTileOrder paired_tile_order(const std::vector<Expr>& grid, const std::vector<Var>& block_vars, const Var& cta,
                                  const Var& iter, const Expr& num_ctas);

}  // namespace tl
