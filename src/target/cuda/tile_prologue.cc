// The per-tile prologue protocol of warp_specialize's persistent form (tile_prologue.h).
#include "target/cuda/tile_prologue.h"

namespace tl {

namespace {

Stmt builtin(const std::string& op, std::vector<Expr> args) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
}

}  // namespace

TilePrologue tile_prologue_protocol(const std::vector<TilePrologueCopy>& copies, const Expr& tile_iter) {
  TilePrologue out;
  const bool per_tile = tile_iter.defined();
  const DataType dt = per_tile ? tile_iter.dtype() : DataType::Int32();
  const Expr parity = per_tile ? floormod(tile_iter, make_int(2, dt)) : make_int(0, dt);
  for (const TilePrologueCopy& c : copies) {
    // The consumers of the previous tile have released the buffer (their arrivals complete the
    // empty barrier's phase of that tile); the first tile's wait passes on the fresh barrier.
    if (per_tile) out.producer.push_back(builtin("cuda.mbarrier_wait", {c.empty, make_int(1, dt) - parity}));
    out.producer.push_back(builtin("cuda.mbarrier_expect_tx", {c.full, make_int(c.bytes)}));
    out.producer.push_back(c.copy);
    out.wait.push_back(builtin("cuda.mbarrier_wait", {c.full, parity}));
    if (per_tile) out.release.push_back(builtin("cuda.mbarrier_arrive_warp", {c.empty}));
  }
  return out;
}

}  // namespace tl
