// The Ascend NPU machine the simulator models (spec/ASCEND_MODEL.md): cores, memories, pipes and
// every constant of the timing model. One data file per model (model_a2.cc, model_a3.cc) fills a
// MachineModel; nothing else in the simulator hard-codes a hardware figure.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tl::sim {

// The in-order instruction queues of a core. S is the scalar unit that issues into the others.
enum class Pipe : uint8_t { kS = 0, kMTE1, kMTE2, kMTE3, kM, kFIX, kV };
constexpr int kNumPipes = 7;
const char* pipe_name(Pipe p);        // "S", "MTE1", ...
const char* pipe_user_name(Pipe p);   // "s", "mte1", ... (the T.set_flag spelling)
// Parses "mte2", "MTE2", "PIPE_MTE2"; false when unknown.
bool parse_pipe(const std::string& s, Pipe* out);

enum class CoreKind : uint8_t { kAIC = 0, kAIV = 1 };
const char* core_kind_name(CoreKind k);  // "AIC" / "AIV"

// Memory spaces. GM is shared by every core; the others are private to one core.
enum class Mem : uint8_t { kGM = 0, kL1, kL0A, kL0B, kL0C, kUB };
constexpr int kNumMems = 6;
const char* mem_name(Mem m);
// The core kind that owns a private memory (GM: none; returns kAIC for L1/L0*, kAIV for UB).
CoreKind mem_owner(Mem m);

// Data paths with a bandwidth figure.
enum class CopyPath : uint8_t { kGmToL1 = 0, kGmToUb, kUbToGm, kL0cToGm, kL1ToL0A, kL1ToL0B, kUbToUb };
constexpr int kNumCopyPaths = 7;
const char* copy_path_name(CopyPath p);

// Vector instruction cost: startup + slope * repeats, a repeat being 256 bytes.
struct VectorCost {
  double startup = 6;
  double slope_b16 = 2;  // 16-bit element types
  double slope_b32 = 2;  // 32-bit element types
};

struct MachineModel {
  std::string name;
  double clock_hz = 1.85e9;
  int num_cube_cores = 24;        // AIC; one logical block = 1 AIC + vector_per_cube AIV
  int vector_per_cube = 2;
  int64_t hbm_bytes = 0;          // chip GM capacity
  std::array<int64_t, kNumMems> mem_bytes{};  // usable bytes per core (GM: hbm_bytes)
  int64_t alignment = 32;         // every on-chip buffer address
  int64_t fractal_bytes = 512;    // one 16 x C0 fractal (C0 = 32 B / element)

  // Copies: cycles = start + bytes / (GiB/s -> bytes per cycle). Per core, uncontended.
  std::array<double, kNumCopyPaths> copy_gib_per_s{};
  std::array<double, kNumCopyPaths> copy_start_cycles{};
  // Chip-wide GM: HBM traffic shares hbm_bytes_per_s; re-reads that hit the L2 share l2_bytes_per_s.
  double hbm_bytes_per_s = 1.6e12;
  int64_t l2_bytes = 192ll << 20;
  double l2_bytes_per_s = 4.0e12;

  // Cube: startup (when the pipe was idle) + ceil(m/16) * ceil(k/k0) * ceil(n/16) * per_fractal.
  double mmad_startup_cycles = 6;
  double mmad_cycles_per_fractal_b16 = 1;  // fp16/bf16, k0 = 16
  double mmad_cycles_per_fractal_b32 = 2;  // fp32, k0 = 8
  double mmad_cycles_per_fractal_b8 = 1;   // int8, k0 = 32

  // Vector ops by name (tile op names without the "tile." prefix); `default_vector` otherwise.
  std::map<std::string, VectorCost> vector_costs;
  VectorCost default_vector;
  int64_t vector_repeat_bytes = 256;

  // Synchronisation.
  double flag_cycles = 1;             // set_flag / wait_flag / cross-core flags
  double v_barrier_cycles = 16;       // pipe_barrier(v) drain
  double other_barrier_cycles = 0;    // pipe_barrier of other pipes
  int flag_ids = 8;                   // intra-core event ids per (src, dst) pair
  int cross_flag_ids = 16;            // cross-core flag ids
  int cross_flag_max_pending = 15;    // sets without a wait before overflow

  // Scalar unit.
  double issue_cycles = 1;            // issuing one instruction into a pipe queue
  int pipe_queue_depth = 32;          // entries per pipe queue; the scalar unit stalls when one is full
  double scalar_op_cycles = 1;        // a let / loop step / branch
  double scalar_local_access_cycles = 1;  // scalar load/store of UB / L1
  double scalar_gm_access_cycles = 100;   // scalar load/store of GM
  double block_launch_cycles = 500;   // start of a logical block on a core group
  double sync_all_cycles = 200;       // all-core barrier through the FFTS

  int gemm_v0_k_chunk = 128;          // T.gemm_v0's K step

  double cycles_to_ms(double cycles) const { return cycles / clock_hz * 1e3; }
  double bytes_per_cycle(CopyPath p) const;
  const VectorCost& vector_cost(const std::string& op) const;
};

// "A2" or "A3" (case-insensitive); throws ValueError naming the supported models.
const MachineModel& machine_model(const std::string& name);

// The model files register themselves here.
const MachineModel& model_a2();
const MachineModel& model_a3();

}  // namespace tl::sim
