#include "runtime/cuda_probe.h"

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "ir/error.h"

namespace tl {

namespace {

using CuInit = int (*)(unsigned);
using CuDeviceGetCount = int (*)(int*);
using CuDeviceGet = int (*)(int*, int);
using CuDeviceGetAttribute = int (*)(int*, int, int);
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

CudaProbe run_probe() {
  CudaProbe p;
  if (const char* off = std::getenv("TILELANG_DISABLE_CUDA"); off && *off && std::string(off) != "0") {
    p.reason = "TILELANG_DISABLE_CUDA is set";
    p.disabled = true;
    return p;
  }
  // The handle is kept for the life of the process: the cuda backend uses the same library.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    p.reason = "no CUDA driver (libcuda.so.1 not found)";
    return p;
  }
  auto init = reinterpret_cast<CuInit>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<CuDeviceGetCount>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<CuDeviceGet>(dlsym(lib, "cuDeviceGet"));
  auto attr = reinterpret_cast<CuDeviceGetAttribute>(dlsym(lib, "cuDeviceGetAttribute"));
  if (!init || !count || !get || !attr) {
    p.reason = "the CUDA driver library lacks cuInit/cuDeviceGetCount";
    return p;
  }
  if (int rc = init(0); rc != 0) {
    p.reason = "cuInit failed with error " + std::to_string(rc);
    return p;
  }
  note_cuda_initialized();
  if (int rc = count(&p.device_count); rc != 0 || p.device_count <= 0) {
    p.reason = "no CUDA device visible";
    p.device_count = 0;
    return p;
  }
  int dev = 0;
  if (get(&dev, 0) == 0) {
    attr(&p.major, kAttrComputeCapabilityMajor, dev);
    attr(&p.minor, kAttrComputeCapabilityMinor, dev);
  }
  p.available = true;
  return p;
}

std::atomic<bool> g_cuda_initialized{false};
std::atomic<bool> g_forked_after_init{false};

}  // namespace

void note_cuda_initialized() {
  static std::once_flag once;
  std::call_once(once, [] {
    // In the child of a fork: CUDA was initialised here before the fork (the flag is inherited).
    pthread_atfork(nullptr, nullptr, [] {
      if (g_cuda_initialized.load()) g_forked_after_init.store(true);
    });
  });
  g_cuda_initialized.store(true);
}

bool cuda_forked_after_init() { return g_forked_after_init.load(std::memory_order_relaxed); }

void check_cuda_usable_after_fork() {
  if (!cuda_forked_after_init()) return;
  throw_error<RuntimeError>(
      "CUDA cannot be used in this process: it was forked after CUDA had been initialised in its parent, and the "
      "driver's state does not survive fork(). Start worker processes with the 'spawn' (or 'forkserver') method, "
      "e.g. multiprocessing.set_start_method('spawn') or torch.multiprocessing.spawn, or initialise CUDA only "
      "in the children");
}

const CudaProbe& probe_cuda() {
  static const CudaProbe probe = run_probe();
  return probe;
}

std::string cuda_arch_for(int major, int minor) {
  int sm = major * 10 + minor;
  if (sm >= 100) return "sm_90";  // newer than Hopper: the portable sm_90 features only
  if (sm == 90) return "sm_90a";
  if (sm == 86 || sm == 87 || sm == 89) return "sm_" + std::to_string(sm);
  return "sm_80";
}

}  // namespace tl
