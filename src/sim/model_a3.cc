// Ascend A3 (910C) as data, per die: the A3 package holds two 910B-class dies of the same "220x"
// architecture, and one die is what a kernel launched on one device sees. Every published per-die
// figure we have equals A2's: 24 AIC / 48 AIV at 1.85 GHz (public figures disagree,
// reference/tilelang-ascend.md §2.4), the same per-core memories, pipes and costs, and 64 GB of HBM
// at ~1.6 TB/s per die (package: 128 GB, 3.2 TB/s). So the A3 model is the A2 model (model_a2.cc)
// under its own name; a figure that differs on A3 is overridden here.
#include "sim/machine_model.h"

namespace tl::sim {

static MachineModel make_a3() {
  MachineModel m = model_a2();
  m.name = "A3";
  return m;
}

const MachineModel& model_a3() {
  static const MachineModel m = make_a3();
  return m;
}

}  // namespace tl::sim
