// Ascend A2 (910B, "220x" architecture) as data. Sources: spec/ASCEND_MODEL.md and the figures
// collected in reference/tilelang-ascend.md §2 (PTO a2a3 cost model, CANN platform ini, vendor docs).
// Constants marked "calibrated" were fitted so that a tuned Expert GEMM lands near the published
// hardware points (docs/PERFORMANCE.md, "Ascend model (simulated)").
#include "sim/machine_model.h"

namespace tl::sim {

static MachineModel make_a2() {
  MachineModel m;
  m.name = "A2";
  m.clock_hz = 1.85e9;          // cube_freq = 1850 MHz
  m.num_cube_cores = 24;        // 24 AIC / 48 AIV (910B1/B2)
  m.vector_per_cube = 2;
  m.hbm_bytes = 64ll << 30;     // 64 GiB HBM

  // Bytes per core: the physical sizes (spec/ASCEND_MODEL.md). TileLang-Ascend's codegen reserves
  // 256 B of L1/UB for its TBuf constant, but its own vec_add fills UB exactly (3 x 64 KiB) and runs
  // on hardware, so the reservation is not a user-visible limit.
  m.mem_bytes[static_cast<int>(Mem::kGM)] = m.hbm_bytes;
  m.mem_bytes[static_cast<int>(Mem::kL1)] = 524288;
  m.mem_bytes[static_cast<int>(Mem::kL0A)] = 65536;
  m.mem_bytes[static_cast<int>(Mem::kL0B)] = 65536;
  m.mem_bytes[static_cast<int>(Mem::kL0C)] = 131072;
  m.mem_bytes[static_cast<int>(Mem::kUB)] = 196608;
  m.alignment = 32;
  m.fractal_bytes = 512;

  // Per-core copy bandwidths in GiB/s (PTO kA2A3ArchConfig).
  auto set_path = [&](CopyPath p, double gib, double start) {
    m.copy_gib_per_s[static_cast<int>(p)] = gib;
    m.copy_start_cycles[static_cast<int>(p)] = start;
  };
  // Fixed start latencies (cycles) are calibrated: GM round trips are long, on-chip moves short.
  set_path(CopyPath::kGmToL1, 135.0, 120);
  set_path(CopyPath::kGmToUb, 100.9, 120);
  set_path(CopyPath::kUbToGm, 188.5, 80);
  set_path(CopyPath::kL0cToGm, 70.0, 60);
  set_path(CopyPath::kL1ToL0A, 441.0, 16);
  set_path(CopyPath::kL1ToL0B, 220.5, 16);
  set_path(CopyPath::kUbToUb, 1024.0, 8);

  // Chip-wide GM limits: HBM ~1.6 TB/s; L2 192 MiB (re-reads that hit it share the L2 bandwidth).
  m.hbm_bytes_per_s = 1.6e12;
  m.l2_bytes = 192ll << 20;
  m.l2_bytes_per_s = 5.0e12;    // calibrated (no public figure)

  // Cube: 6 cycles head when idle + one 16x16x16 fp16 fractal per cycle (363.7 TFLOPS on 24 cores).
  m.mmad_startup_cycles = 6;
  m.mmad_cycles_per_fractal_b16 = 1;
  m.mmad_cycles_per_fractal_b32 = 2;
  m.mmad_cycles_per_fractal_b8 = 1;

  // Vector: startup + slope x repeats (256 B), PTO cce_cycle_profiles (fp16 slope / fp32 slope).
  m.vector_costs = {
      {"add", {6, 2, 2}},        {"sub", {6, 2, 2}},        {"mul", {7, 2, 2}},
      {"adds", {6, 1, 1}},       {"subs", {6, 1, 1}},       {"muls", {6, 1, 1}},
      {"divs", {6, 1, 1}},       {"maxs", {6, 1, 1}},       {"mins", {6, 1, 1}},
      {"exp", {12, 4, 2}},       {"ln", {14, 4, 2}},        {"log", {14, 4, 2}},
      {"div", {13, 8, 4}},       {"sqrt", {13, 4, 2}},      {"rsqrt", {4.8, 1.06, 1.06}},
      {"reciprocal", {13, 8, 4}}, {"max", {4, 2, 2}},       {"min", {4, 2, 2}},
      {"relu", {4, 1, 1}},       {"abs", {4, 1, 1}},        {"neg", {6, 1, 1}},
      {"reduce_sum", {23, 7, 7}}, {"reduce_max", {9, 7, 7}}, {"reduce_min", {9, 7, 7}},
      {"cast", {6, 2, 2}},       {"axpy", {18, 2, 2}},      {"fill", {1, 1, 1}},
      {"copy", {13, 1, 1}},      {"compare", {5, 2, 2}},    {"select", {6, 2, 2}},
      {"sigmoid", {31, 14, 8}},  {"silu", {38, 16, 10}},    {"transpose", {6, 2, 2}},
      {"broadcast", {1, 1, 1}},  {"sort", {8, 4, 4}},       {"topk", {16, 10, 10}},
      {"pow", {26, 12, 6}},      {"sin", {20, 8, 4}},       {"cos", {20, 8, 4}},
      {"tanh", {28, 12, 6}},     {"exp2", {12, 4, 2}},
      {"bitwise_and", {4, 2, 2}}, {"bitwise_or", {4, 2, 2}}, {"bitwise_xor", {4, 2, 2}},  // vand/vor: as vmax
      // Assumed (no profile): CreateVecIndex as a vadds chain, Gather (vgather) one element per lane
      // load: four times the slope of a vadd.
      {"createvecindex", {6, 2, 2}}, {"gather", {14, 8, 8}},
  };
  m.default_vector = {6, 2, 2};
  m.vector_repeat_bytes = 256;

  m.flag_cycles = 1;            // set_flag / wait_flag / ffts (PTO cce_costmodel_sync placeholder)
  m.v_barrier_cycles = 16;      // pipe_barrier(PIPE_V) drain
  m.other_barrier_cycles = 0;
  m.flag_ids = 8;
  m.cross_flag_ids = 16;
  m.cross_flag_max_pending = 15;

  m.issue_cycles = 1;
  m.pipe_queue_depth = 32;      // assumed; bounds how far the scalar unit runs ahead
  m.scalar_op_cycles = 1;
  m.scalar_local_access_cycles = 2;
  m.scalar_gm_access_cycles = 100;
  m.block_launch_cycles = 1000;  // calibrated: kernel/block start overhead
  m.sync_all_cycles = 200;

  m.gemm_v0_k_chunk = 128;
  return m;
}

const MachineModel& model_a2() {
  static const MachineModel m = make_a2();
  return m;
}

}  // namespace tl::sim
