// What the files of warp_specialize (warp_specialize.h) share: the producer groups of the stage ring
// and the consumers' release of a stage, and two small questions about regions and expressions.
//
// The pass is split by concept: warp_specialize.cc is the driver (the conditions, the producer
// groups, the mbarriers and the kernel body); ws_roles.h emits the producer's loop and the
// consumers' plain loop over the stage ring, ws_overlap.h plans and emits FA3's overlap of the
// consumers' two GEMMs; ws_persistent.h decides the persistent tile schedule and wraps the roles in
// the tile loop; ws_prologue.h picks the copies before the loop that the producer makes with TMA
// (loaded per tile by tile_prologue.h's protocol when persistent); ws_tma_copies.h says whether TMA
// can make a copy and which copies a cluster multicasts; ws_proxy_fence.h marks the GEMMs that need
// no proxy fence; ws_deferred_row_sum.h defers attention's row sums past the loop;
// ws_accumulator_init.h folds GEMM accumulator initializations into the GEMMs; ws_distributed.h
// says where a kernel's distributed operators run; ws_tma_store.h turns the output tile's copy after
// the loop into a TMA-store epilogue.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include "ir/stmt.h"

namespace tl {

// One group of producer copies (first used by the same consumer statement).
struct ProducerGroup {
  std::vector<size_t> copies;  // body item indices
  size_t first_use = 0, last_use = 0;
  int64_t bytes = 0;
  bool late_release = false;   // its last use is a GEMM left in flight: release the previous stage
  bool multicast = false;      // a copy is shared by the CTAs of the cluster: every CTA's consumers release it
};

// The stage ring as the driver numbers it: the full / empty barrier of group g at stage s, the
// iteration number over the whole kernel of a loop counter value, its stage and its parity.
struct StageRing {
  std::function<Expr(int64_t, const Expr&)> full, empty;
  std::function<Expr(const Expr&)> iter, stage, parity;
};

// The consumers' release of a stage of group `g`: one arrival per warp on its empty barrier (per
// thread ran 2-3% slower on an H100, bench/gpu_hopper_variants.py), or, when the group holds
// multicast copies, one per warp on that barrier in every CTA of the cluster of `cluster` CTAs (each
// CTA's producer writes the stage in all of them).
Stmt release_stage(const ProducerGroup& g, const Expr& empty_bar, int64_t cluster);


// Whether `e` uses a variable of `vars`.
bool uses_any_var(const Expr& e, const std::set<const VarNode*>& vars);

}  // namespace tl
