// Public entry of the Ascend simulator: runs a compiled Program (program.h) on the argument
// tensors, computing values natively, checking synchronisation (strict mode) and estimating time.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sim/program.h"
#include "tl/cpu/abi.h"

namespace tl::sim {

struct SimOptions {
  bool lenient = false;          // order conflicting accesses silently (vendor auto-sync) instead of reporting
  bool compute_values = true;    // false: timing and checks only (tile work skipped)
  bool check = true;             // race checker (strict mode only)
  // Byte-identical write-after-write on GM between blocks: a race (true) or a warning (false, the
  // default: the hardware allows it). TL_ASCEND_SIM_STRICT=1 or pass config tl.ascend_sim_strict.
  bool strict_waw = false;
  std::string trace_path;        // Chrome trace JSON written here when set
  // Output of T.printf / T.print / T.dump_tensor (default: stdout).
  std::function<void(const std::string&)> print;
  // Reads TL_ASCEND_SIM_LENIENT, TL_ASCEND_SIM_STRICT, TL_ASCEND_TRACE, TL_ASCEND_SIM_TIMING_ONLY.
  static SimOptions from_env();
};

struct SimStats {
  double cycles = 0;
  double ms = 0;
  int64_t instructions = 0;      // tile instructions executed
  int64_t blocks = 0;
  int cube_cores_used = 0, vector_cores_used = 0;
  // Busy cycles per pipe, summed over the cores of each kind, and the utilisation (busy / (cycles x cores)).
  std::array<std::array<double, kNumPipes>, 2> busy{};
  std::array<std::array<double, kNumPipes>, 2> utilisation{};
  int64_t gm_bytes = 0, l2_hit_bytes = 0;
  double wall_seconds = 0;       // host time the simulation took
  std::string output;            // printed text, also sent to SimOptions::print
  std::vector<std::string> warnings;  // checker findings that are not errors (byte-identical WAW)
};

// Runs the kernel. `args` follows include/tl/cpu/abi.h (tensor pointers are host memory).
// Throws SyncError (race, double set, deadlock, flag left set), RuntimeError (device_assert).
SimStats simulate(const Program& prog, const std::vector<TLArg>& args, const SimOptions& opts);

}  // namespace tl::sim
