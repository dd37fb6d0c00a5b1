// What the files of warp_specialize (warp_specialize.h) share: the producer groups of the stage ring
// and the consumers' release of a stage, and two small questions about regions and expressions.
//
// The pass is split by concept: warp_specialize.cc is the driver (the conditions, the producer
// groups, the producer and consumer loops and the kernel body); ws_persistent.h decides the
// persistent tile schedule and wraps the roles in the tile loop; ws_overlap.h plans and emits FA3's
// overlap of the consumers' two GEMMs; ws_prologue.h picks the copies before the loop that the
// producer makes with TMA; ws_deferred_row_sum.h defers attention's row sums past the loop;
// ws_accumulator_init.h folds GEMM accumulator initializations into the GEMMs.
#pragma once

#include <cstdint>
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

// The consumers' release of a stage of group `g`: one arrival per warp on its empty barrier (per
// thread ran 2-3% slower on an H100, bench/gpu_hopper_variants.py), or, when the group holds
// multicast copies, one per warp on that barrier in every CTA of the cluster of `cluster` CTAs (each
// CTA's producer writes the stage in all of them).
Stmt release_stage(const ProducerGroup& g, const Expr& empty_bar, int64_t cluster);

// Whether `r` covers the whole of its buffer (constant shape).
bool whole_buffer(const BufferRegion& r);

// Whether `e` uses a variable of `vars`.
bool uses_any_var(const Expr& e, const std::set<const VarNode*>& vars);

}  // namespace tl
