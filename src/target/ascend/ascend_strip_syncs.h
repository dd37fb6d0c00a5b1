// Removes the intra-core synchronisation of a kernel (set_flag, wait_flag, pipe_barrier,
// barrier_all), keeping cross-core flags and sync_all. Used to check that TL_ASCEND_AUTO_SYNC alone
// makes hand-synchronised kernels race-free (tests, tl-opt); not part of the pipeline.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc ascend_strip_syncs(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
