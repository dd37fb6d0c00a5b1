// Test support: a backend that skips lowering and codegen and builds a hand-written C++ source
// with the real cpu backend's compiler invocation and loader. It lets the compile driver, cache
// and runtime be tested independently of the cpu code generator.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/sha256.h"

namespace tl::testing {

class SourceBackend : public TargetBackend {
 public:
  explicit SourceBackend(std::string source) : source_(std::move(source)), cpu_(make_backend(Target::parse("cpu"))) {}
  PrimFunc lower(const PrimFunc& f, PassContext& ctx) override {
    ++lower_calls;
    ctx.stages.emplace_back("identity", f);
    return f;
  }
  std::string codegen(const PrimFunc&, const PassContext&, std::string* host) override {
    if (host) *host = "// host part of the test kernel\n";
    return source_;
  }
  void build(const std::string& src, const std::string& dir, const CompileOptions& opts) override {
    ++build_calls;
    cpu_->build(src, dir, opts);
  }
  std::unique_ptr<KernelModule> load(const std::string& dir, const PrimFunc& f, const PrimFunc* lowered,
                                     const CompileOptions& opts) override {
    return cpu_->load(dir, f, lowered, opts);
  }
  std::string compiler_version(const CompileOptions& opts) override {
    return cpu_->compiler_version(opts) + "test-source " + sha256_hex(source_);
  }
  int lower_calls = 0, build_calls = 0;

 private:
  std::string source_;
  std::unique_ptr<TargetBackend> cpu_;
};

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
extern "C" const uint32_t tl_kernel_abi_version = TL_CPU_ABI_VERSION;
extern "C" int32_t tl_kernel_entry(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api) {
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
