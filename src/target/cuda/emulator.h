// A CPU emulator of lowered cuda IR (the output of lower_cuda, the input of codegen_cuda), for
// testing the cuda lowering on machines without a GPU.
//
// It runs every block of the grid, the threads of a block in lockstep (each statement for all
// threads before the next), with global tensors in host memory, shared memory as one byte array
// per block laid out as plan_shared_memory placed it, and per-thread register arrays. Device calls
// are modelled by their contracts: tl::gemm_ss/rs/sr compute C += A·B through the fragment and
// shared-memory layouts of include/tl/cuda/gemm.h (tf32 inputs rounded), tl::allreduce combines
// its thread groups, vector copies and cp.async move bytes (and must be aligned).
//
// It also checks what lockstep execution would hide: every shared-memory byte remembers its last
// writer and readers since the last __syncthreads, so two threads touching the same byte without
// a barrier in between (one writing), or a read of cp.async data before cp_async_wait + barrier,
// is reported as a race; global accesses outside a tensor are reported as errors.
//
// The emulator is not a model of the hardware's timing or numerics beyond rounding results to
// their IR types; what it validates is indexing, layouts, guards and synchronization.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.h"
#include "tl/cpu/abi.h"

namespace tl {

struct EmulatorReport {
  std::vector<std::string> races;   // data races and unsynchronized async reads (at most 20)
  std::string device_assert;        // the first failed T.device_assert ("" when none)
  int64_t blocks_run = 0;
  int64_t dist_polls = 0;           // T.waits that looked at their flag (a skipped cached wait does not)
};

// The device a distributed kernel (T.Scale("device")) runs as: T.get_rank() / T.get_num_ranks().
// The emulator runs one device and nothing else: a T.wait whose flag does not already compare true
// never completes (a RuntimeError naming it); T.barrier runs with world 1 only (the block meets
// itself), T.signal to this device only; remote copies are not emulated.
struct EmulatorDevice {
  int64_t rank = 0, world = 1;
};

// Runs `lowered` with the runtime's argument slots (tensor: host pointer to its contiguous
// elements; scalar: i64/f64; then the dynamic dimensions). Throws RuntimeError for an out-of-bounds
// global access or a misaligned vector access, NotImplemented for IR it cannot emulate.
EmulatorReport emulate_cuda(const PrimFunc& lowered, const std::vector<TLArg>& args, const EmulatorDevice& dev = {});

}  // namespace tl
