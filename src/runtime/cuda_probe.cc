#include "runtime/cuda_probe.h"

#include <dlfcn.h>

#include <cstdlib>

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

}  // namespace

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
