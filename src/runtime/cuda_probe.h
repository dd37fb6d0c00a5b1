// Is a CUDA device visible? Answered by loading the driver library (libcuda.so.1) at run time, so
// tilelang has no link-time dependency on CUDA and works on machines without it.
#pragma once

#include <string>

namespace tl {

struct CudaProbe {
  bool available = false;  // a driver and at least one device
  int device_count = 0;
  int major = 0, minor = 0;  // compute capability of device 0
  std::string reason;        // why it is unavailable (no driver, cuInit error, no device)
  bool disabled = false;     // unavailable only because TILELANG_DISABLE_CUDA is set
};

// Probes once per process (thread-safe) and caches the answer. TILELANG_DISABLE_CUDA=1 forces
// "unavailable" (useful to test the cpu path on a GPU machine).
const CudaProbe& probe_cuda();

// CUDA and fork(): the driver's state does not survive fork(), so a process forked after CUDA was
// initialised (by the probe or the driver layer) cannot use it. note_cuda_initialized() is called
// after every successful cuInit; in a child forked after that, check_cuda_usable_after_fork()
// throws a DeviceRuntimeError (tl::RuntimeError) saying to use the 'spawn' start method.
void note_cuda_initialized();
bool cuda_forked_after_init();
void check_cuda_usable_after_fork();

// The cuda arch string for a compute capability: 9.0 -> "sm_90a", 8.6 -> "sm_86".
std::string cuda_arch_for(int major, int minor);

}  // namespace tl
