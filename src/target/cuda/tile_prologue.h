// Per-tile prologue loads of a persistent warp-specialized kernel (TL_ENABLE_PERSISTENT_FLASH).
//
// A warp-specialized kernel's copies before its pipelined loop (attention's Q, warp_specialize's
// plan_prologue) are the producer's TMA loads, each on an mbarrier of its own. One CTA per tile
// loads them once (phase 0). In the persistent form each CTA loops over tiles, and the producer
// loads the next tile's Q while the consumers still finish the current tile, so each such copy gets
// a second barrier, `empty`, and the two run as a ring of one stage whose phase is the CTA's tile
// counter `tile_iter`:
//
//     producer, per tile:  wait(empty, (tile_iter & 1) ^ 1); arrive_expect_tx(full, bytes); copy
//     consumers, per tile: wait(full, tile_iter & 1) before the loop ... after the last read of the
//                          tile's buffer (attention: the last Q K^T, before the last P V):
//                          one arrival per warp on empty (the barrier counts the consumer warps)
//
// The first wait on `empty` (parity 1 of a fresh barrier) passes at once. Without a tile counter
// (one CTA per tile) only the loads and the phase-0 waits are made, as before. Where the statements
// go is warp_specialize's choice: the producer's in the tile's first iteration after the first
// group's loads (attention: after the first K, whose stage the consumers free earlier than Q), the
// release after the tile's last read of the buffers.
#pragma once

#include <vector>

#include "ir/stmt.h"

namespace tl {

struct TilePrologueCopy {
  Stmt copy;          // the copy, already marked {tma, mbarrier = full}
  int64_t bytes = 0;  // bytes the copy brings (the full barrier's transaction count)
  Expr full, empty;   // addresses of its two barriers (empty unused without a tile counter)
};

struct TilePrologue {
  std::vector<Stmt> producer;  // before the producer's loop, per tile
  std::vector<Stmt> wait;      // the consumers', just before their loop
  std::vector<Stmt> release;   // the consumers', after their last read of the buffers (empty without a counter)
};

// The statements of the protocol above for `copies`; `tile_iter` is the persistent tile loop's
// counter, or undefined for one CTA per tile.
TilePrologue tile_prologue_protocol(const std::vector<TilePrologueCopy>& copies, const Expr& tile_iter);

}  // namespace tl
