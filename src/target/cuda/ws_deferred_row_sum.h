// Deferred row sums in warp_specialize's consumer loop (warp_specialize.h): attention's running row
// sum, FA3's way.
//
// The loop body's `T.reduce_sum(P, s)` followed by `l[i] = l[i] * a[i] + s[i]` (or `l[i] + s[i]`)
// keeps per-thread partial sums (the reduce skips its quad shuffles: "thread_partial"), and one
// T.finalize_reducer(l) after the loop sums the threads' copies of l. Equal in exact arithmetic
// (a[i] is the same on every thread holding row i, and l starts from 0 on each), the fp32 additions
// only grouped differently (each thread's partial first, then across threads). Only where s is used
// by nothing else, l by nothing else in the loop and only by a T.fill(l, 0) before it, and the
// reduce's thread groups are the replicas of l's layout inside one warp. 8 shuffles (and their adds)
// per KV block fewer. Off with TL_DISABLE_DEFERRED_ROW_SUM.
#pragma once

#include <set>
#include <vector>

#include "ir/stmt.h"
#include "layout/infer_layout.h"
#include "transform/plan_pipeline.h"

namespace tl {

// Marks each such reduce of the loop body `items` (the producer copies at `is_producer` aside;
// `top`: the kernel's top-level items, the loop at `loop_at`; `lm`: the kernel's layouts) as
// thread_partial, and returns the T.finalize_reducer statements to run right after the loop (none
// where `configs` has TL_DISABLE_DEFERRED_ROW_SUM).
std::vector<Stmt> plan_deferred_row_sums(const std::vector<BodyItem>& top, size_t loop_at, std::vector<BodyItem>* items,
                                         const std::set<size_t>& is_producer, const LayoutMap& lm,
                                         const AttrMap& configs);

}  // namespace tl
