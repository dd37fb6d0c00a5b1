// Developer-mode cube/vector split (TL_ASCEND_AUTO_CV_COMBINE; always on for target "npuir").
//
// After scope inference a Developer kernel may use one buffer on both cores (a T.gemm result read by
// T.exp, a T.Parallel result fed to T.gemm) and copy between memories of different cores (L0C -> UB,
// UB -> L1), neither of which the hardware has. This pass:
//   1. gives every cube buffer (L0C / L1) that vector work touches a UB twin `<name>_ub`; vector
//      statements use the twin, cube statements the original;
//   2. tracks, in program order, on which core each such buffer holds its current value (loops to a
//      fixed point, branches joined) and inserts a copy between the two versions wherever a
//      statement reads a version that is stale: L0C -> UB (a gemm result for the vector core) or
//      UB -> L1 (a vector result for the cube); GM copies of such a buffer use a current version,
//      and a GM tile loaded into an L1 buffer that vector work also reads is loaded into both;
//   2b. a gemm accumulating (initC=False) into an L0C buffer whose current value the vector core
//      computed computes into a fresh L0C accumulator `<name>_part` (initC=True) instead, and the
//      vector core adds it to its copy (`<name>_ub += <name>_part`, via `<name>_part_ub`); every gemm
//      into such a buffer does so (initC=True ones are copied instead of added), so its value lives
//      on the vector side only (the walk is repeated until these decisions are stable);
//   3. rewrites every L0C -> UB and UB -> L1 copy (inserted or written by the user) into a round trip
//      through a GM workspace `cv_ws<i>`: a GM buffer that is no parameter, allocated by the
//      runtime (the simulator gives each core group its own, Program::workspace_bytes) and invisible
//      to the caller (declared by name in "ascend.cv_workspaces", which the IR verifier accepts in
//      place of an allocation). The cross-core flags between the two halves are added after core placement by
//      ascend_cross_sync (function attribute "ascend.cv_workspaces" lists the workspaces).
// The function gets "enable_auto_sync": the intra-core syncs around the new copies are inserted by
// ascend_insert_sync. Fails closed with a typed error naming the buffer and the statement on
// anything it cannot place: L0A/L0B buffers used by vector work, an accumulation as in 2b whose initC
// is decided at run time, an L1 value (not loaded from GM) needed by the vector core, workspaces of
// dynamic size.
// A no-op when the split is off (Expert-mode rules in ascend_check then reject such kernels).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_cv_split(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
