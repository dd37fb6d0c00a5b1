// Calls the exported GEMM (export_gemm.py) from C++ without Python or tilelang and checks it
// against a reference computed here in double precision on random inputs.
//   aot_gemm [M]   (default 300, not a multiple of the block size)
// Exit status 0 when every check passes. Built by CMakeLists.txt; cpu: host memory, cuda
// (TL_AOT_CUDA): device memory through the CUDA driver API, loaded with dlopen like gemm.so does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gemm.h"

#ifdef TL_AOT_CUDA
#include <dlfcn.h>
#endif

namespace {

constexpr int64_t N = 256, K = 128;  // as in export_gemm.py

// IEEE binary16 <-> float (round to nearest even); the library takes float16 as its bits.
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u) return static_cast<uint16_t>(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
  if (mag < 0x38800000u) {                                                // subnormal or zero
    float a;
    std::memcpy(&a, &mag, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a * 16777216.0f)));
  }
  uint32_t h = ((mag - 0x38000000u) >> 13), rest = mag & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

double from_half(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}

int fail(const char* what) {
  std::fprintf(stderr, "aot_gemm: FAILED: %s (gemm_last_error: \"%s\")\n", what, gemm_last_error());
  return 1;
}

#ifdef TL_AOT_CUDA
// The few driver API functions the example needs (CUdeviceptr is an unsigned 64-bit integer).
struct Driver {
  int (*init)(unsigned);
  int (*device_get)(int*, int);
  int (*primary_ctx_retain)(void**, int);
  int (*ctx_set_current)(void*);
  int (*mem_alloc)(unsigned long long*, size_t);
  int (*mem_free)(unsigned long long);
  int (*htod)(unsigned long long, const void*, size_t);
  int (*dtoh)(void*, unsigned long long, size_t);
  int (*ctx_synchronize)();
};

bool load_driver(Driver* d) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (!lib) return false;
  auto sym = [&](const char* n, auto* out) {
    *out = reinterpret_cast<std::remove_pointer_t<decltype(out)>>(dlsym(lib, n));
    return *out != nullptr;
  };
  return sym("cuInit", &d->init) && sym("cuDeviceGet", &d->device_get) &&
         sym("cuDevicePrimaryCtxRetain", &d->primary_ctx_retain) && sym("cuCtxSetCurrent", &d->ctx_set_current) &&
         sym("cuMemAlloc_v2", &d->mem_alloc) && sym("cuMemFree_v2", &d->mem_free) &&
         sym("cuMemcpyHtoD_v2", &d->htod) && sym("cuMemcpyDtoH_v2", &d->dtoh) &&
         sym("cuCtxSynchronize", &d->ctx_synchronize);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const int64_t M = argc > 1 ? std::atoll(argv[1]) : 300;
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<uint16_t> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * N));
  for (auto& a : A) a = to_half(dist(rng));
  for (auto& b : B) b = to_half(dist(rng));
  std::vector<float> C(static_cast<size_t>(M * N), -1.0f);

#ifdef TL_AOT_CUDA
  Driver d{};
  if (!load_driver(&d)) return std::fprintf(stderr, "aot_gemm: cannot load libcuda.so.1\n"), 1;
  int dev = 0;
  void* ctx = nullptr;
  if (d.init(0) || d.device_get(&dev, 0) || d.primary_ctx_retain(&ctx, dev) || d.ctx_set_current(ctx))
    return std::fprintf(stderr, "aot_gemm: no usable CUDA device\n"), 1;
  unsigned long long dA = 0, dB = 0, dC = 0;
  if (d.mem_alloc(&dA, A.size() * 2 + 16) || d.mem_alloc(&dB, B.size() * 2 + 16) || d.mem_alloc(&dC, C.size() * 4 + 16))
    return std::fprintf(stderr, "aot_gemm: cuMemAlloc failed\n"), 1;
  if (d.htod(dA, A.data(), A.size() * 2) || d.htod(dB, B.data(), B.size() * 2) || d.htod(dC, C.data(), C.size() * 4))
    return std::fprintf(stderr, "aot_gemm: cuMemcpyHtoD failed\n"), 1;
  int rc = gemm(reinterpret_cast<uint16_t*>(dA), reinterpret_cast<uint16_t*>(dB), reinterpret_cast<float*>(dC), M,
                nullptr);
  if (rc != 0) return fail("gemm returned non-zero");
  if (d.ctx_synchronize()) return fail("the kernel failed on the device");
  if (d.dtoh(C.data(), dC, C.size() * 4)) return fail("cuMemcpyDtoH failed");
  // A negative size is refused before anything is launched.
  if (gemm(reinterpret_cast<uint16_t*>(dA), reinterpret_cast<uint16_t*>(dB), reinterpret_cast<float*>(dC), -1,
           nullptr) != 2 || std::strstr(gemm_last_error(), "negative") == nullptr)
    return fail("M = -1 was not refused");
  d.mem_free(dA);
  d.mem_free(dB);
  d.mem_free(dC);
#else
  if (gemm(A.data(), B.data(), C.data(), M) != 0) return fail("gemm returned non-zero");
  if (gemm(A.data(), B.data(), C.data(), -1) != 2 || std::strstr(gemm_last_error(), "negative") == nullptr)
    return fail("M = -1 was not refused");
  gemm_set_num_threads(1);  // the same result on the calling thread alone
  std::vector<float> C1(C.size(), -1.0f);
  if (gemm(A.data(), B.data(), C1.data(), M) != 0) return fail("gemm on one thread returned non-zero");
  if (std::memcmp(C.data(), C1.data(), C.size() * sizeof(float)) != 0) return fail("one thread and many differ");
#endif

  double worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k)
        ref += from_half(A[static_cast<size_t>(i * K + k)]) * from_half(B[static_cast<size_t>(k * N + j)]);
      double err = std::fabs(C[static_cast<size_t>(i * N + j)] - ref) / (1e-3 + 1e-3 * std::fabs(ref));
      if (!(err <= 1.0)) {
        std::fprintf(stderr, "aot_gemm: C[%lld][%lld] = %.6f, reference %.6f\n", (long long)i, (long long)j,
                     C[static_cast<size_t>(i * N + j)], ref);
        return 1;
      }
      worst = std::max(worst, err);
    }
  std::printf("aot_gemm: M=%lld N=%lld K=%lld OK (worst error %.3f of the tolerance)\n", (long long)M, (long long)N,
              (long long)K, worst);
  return 0;
}
