// Automatic cross-core synchronisation (TL_ASCEND_AUTO_CV_SYNC; always for the GM workspaces of
// ascend_cv_split; target "npuir" implies it). Runs after ascend_place_cores, when every copy sits
// in a T.Scope("C") or T.Scope("V") (or is placed by its memories).
//
// A GM tensor that one core kind writes (cube: L0C -> GM on FIX; vector: UB -> GM on MTE3) and the
// other reads (GM -> L1 / UB on MTE2) carries data between the cores. For each such read, paired
// with the last write of the other core before it in program order:
//   - L = the deepest loop containing both (none when they share no loop);
//   - the writer sets cross flag f (mode 2, on the writer's pipe) after its write — or after the
//     outermost loop/branch inside L that contains it, so that sets and waits balance per iteration
//     of L — and the reader waits on f before its read (same rule);
//   - inside L the next iteration's write must not overtake this iteration's read (the workspace is
//     reused): the reader sets back flag b after its read, the writer waits on b before its write;
//     b is pre-armed by the reader before L and drained by the writer after L.
// When L is a T.Pipelined loop (num_stages = k, serial after ascend_multi_version) and the tensor is
// a workspace of ascend_cv_split, the workspace gets k versions indexed by (iteration - min) % k and
// the back flag is pre-armed and drained k times: the writer runs up to k iterations ahead (CV
// pipelining; k is at most the model's 15 pending sets). With cross_interval = n dividing k, sets
// happen once per group of n iterations (at (i - min) % n == n - 1 or the last iteration) and waits
// at (i - min) % n == 0, with k / n pre-armed back flags.
// With several vector cores mode 2 makes the cube's counter rise once every vector core has set,
// and a cube set reach all of them, so the same flags serve the 1:2 ratio.
// Flag ids start above the largest id the kernel uses itself; more than the model's 16 is a
// ResourceError listing the pairs. A read with no earlier write of the other core (a dependence
// only through a loop back edge), a write feeding several reads, or TL_ASCEND_AUTO_CV_SYNC without
// TL_ASCEND_AUTO_CV_COMBINE is refused with a typed error. The number of flag operations inserted
// is the function attribute "ascend.cross_syncs_inserted".
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_cross_sync(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
