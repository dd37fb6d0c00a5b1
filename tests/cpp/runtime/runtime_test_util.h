// Test support: hand-written kernels for runtime/source_backend.h and a scoped cache directory.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/source_backend.h"

namespace tl::testing {

using ::tl::SourceBackend;

// out[i] = a[i] * scale + b[i] over n elements, in blocks of 64; a negative element of `a`
// is reported as a kernel error (like T.device_assert). Parameters: A, B, C (float32[n]),
// scale (float32), then the dynamic n.
inline const char* kAxpyKernel = R"(
#include "tl/cpu/abi.h"
struct Ctx { const float* a; const float* b; float* c; float scale; long n; const TLRuntimeAPI* api; };
static void block(void* p, int64_t bx) {
  Ctx* c = (Ctx*)p;
  long lo = bx * 64, hi = lo + 64 < c->n ? lo + 64 : c->n;
  for (long i = lo; i < hi; ++i) {
    if (c->a[i] < 0) { c->api->report_error(c->api->pool, "device_assert failed: A[i] >= 0"); return; }
    c->c[i] = c->a[i] * c->scale + c->b[i];
  }
}
extern "C" __attribute__((visibility("default"))) const uint32_t tl_kernel_abi_version = TL_CPU_ABI_VERSION;
extern "C" __attribute__((visibility("default"))) int32_t tl_kernel_entry(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api) {
  if (num_args != 5) { api->report_error(api->pool, "expected 5 ABI arguments"); return 1; }
  Ctx c{(const float*)args[0].ptr, (const float*)args[1].ptr, (float*)args[2].ptr, (float)args[3].f64,
        (long)args[4].i64, api};
  api->parallel_for(api->pool, (c.n + 63) / 64, block, &c);
  return 0;
}
)";

// Points TILELANG_CACHE_DIR at a fresh directory for the lifetime of the object.
class ScopedCacheDir {
 public:
  explicit ScopedCacheDir(const std::string& name);
  ~ScopedCacheDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_, saved_;
  bool had_saved_ = false;
};

}  // namespace tl::testing
