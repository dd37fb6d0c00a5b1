// Ascend A3 (910C) per die as data: the A3 package is two 910B-class dies; one die is what a kernel
// launched on one device sees. Per-die core counts and clock are taken equal to A2 (the public
// figures disagree; see reference/tilelang-ascend.md §2.4), HBM per die 64 GB at ~1.6 TB/s
// (package: 128 GB, 3.2 TB/s). Every other constant is the 220x-architecture figure of model_a2.cc.
#include "sim/machine_model.h"

namespace tl::sim {

static MachineModel make_a3() {
  MachineModel m = model_a2();
  m.name = "A3";
  m.clock_hz = 1.85e9;
  m.num_cube_cores = 24;
  m.vector_per_cube = 2;
  m.hbm_bytes = 64ll << 30;
  m.mem_bytes[static_cast<int>(Mem::kGM)] = m.hbm_bytes;
  m.hbm_bytes_per_s = 1.6e12;
  m.l2_bytes = 192ll << 20;
  return m;
}

const MachineModel& model_a3() {
  static const MachineModel m = make_a3();
  return m;
}

}  // namespace tl::sim
