// The compile driver behind tilelang.compile() / @tilelang.jit:
//   validate options -> resolve the target -> in-process memo -> on-disk cache lookup ->
//   (miss) lower -> codegen -> build into a staging dir -> commit -> load.
// The result, a CompiledKernel, keeps everything the user-facing Kernel object exposes.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "runtime/backend.h"

namespace tl {

// Resolves a target string for `f` ("auto": ascend for a T.Kernel(..., is_npu=True), cuda when a
// device is visible and the cuda backend is built, else cpu). A cuda target without -arch takes
// the visible device's architecture. Unknown names raise ValueError listing the supported ones.
Target resolve_target(const std::string& text, const PrimFunc& f);

// True when `f` contains a T.Kernel marked is_npu.
bool is_npu_kernel(const PrimFunc& f);

class CompiledKernel {
 public:
  const PrimFunc& func() const { return func_; }
  const Target& target() const { return options_.target; }
  const CompileOptions& options() const { return options_; }
  const std::string& kernel_source() const { return kernel_source_; }
  const std::string& host_source() const { return host_source_; }
  const std::string& cache_key() const { return cache_key_; }
  // Where the artifacts live (the cache entry, or a temporary directory when the cache is off).
  const std::string& artifact_dir() const { return artifact_dir_; }
  bool cache_hit() const { return cache_hit_; }
  double compile_seconds() const { return compile_seconds_; }

  // The IR after each pass, in order. Recomputed by running the lowering again when the kernel
  // came from the on-disk cache. Names are unique: a pass that runs twice appears as "name#2".
  std::vector<std::string> stage_names();
  // "input" (alias "original"): the function as given; "final" (alias "lowered"): the last stage;
  // or a pass name from stage_names(). Unknown names raise ValueError listing the known ones.
  PrimFunc stage(const std::string& name);

  KernelModule& module() { return *module_; }
  // The same loaded kernel under another function that has the same canonical text (e.g. other
  // parameter names): argument errors and stages then speak of `f`.
  std::shared_ptr<CompiledKernel> with_func(const PrimFunc& f) const;
  void launch(const std::vector<TLArg>& args, const LaunchEnv& env) { module_->launch(args, env); }
  AttrMap info() const { return module_->info(); }

 private:
  friend std::shared_ptr<CompiledKernel> compile_with_backend(const PrimFunc&, const CompileOptions&,
                                                              std::shared_ptr<TargetBackend>);
  void ensure_stages();

  std::shared_ptr<TargetBackend> backend_;  // for recomputing stages after a cache hit

  PrimFunc func_;
  CompileOptions options_;
  std::string kernel_source_, host_source_, cache_key_, artifact_dir_;
  bool cache_hit_ = false;
  double compile_seconds_ = 0;
  std::shared_ptr<KernelModule> module_;
  std::mutex stages_mutex_;
  bool stages_ready_ = false;
  std::vector<std::pair<std::string, PrimFunc>> stages_;
};

// Compiles (or fetches from the memo / disk cache) `f` for opts.target. opts.pass_configs are
// validated here. Thread-safe: lowering is serialized, the system compiler runs in parallel.
std::shared_ptr<CompiledKernel> compile(const PrimFunc& f, const CompileOptions& opts);
// The same with an explicit backend instead of the one registered for opts.target (tests, tools).
std::shared_ptr<CompiledKernel> compile_with_backend(const PrimFunc& f, const CompileOptions& opts,
                                                     std::shared_ptr<TargetBackend> backend);

// Lowers `f` and generates its code exactly as compile(f, opts) would, without building it, and
// keeps the result (a few dozen, least recently used dropped first) for that compile, which then
// only runs the system compiler. The autotuner's TileSight ranking lowers every configuration to
// read what the compiler does with it; the configurations it then compiles reuse that lowering.
// Returns the lowered function and the kernel source. Nothing is kept when the kernel is already
// compiled in this process.
std::pair<PrimFunc, std::string> prelower(const PrimFunc& f, const CompileOptions& opts);
// How many prelower() results a compile has reused (tests).
int64_t prelower_reuse_count();

// The cache key compile() would use (exposed for tests and tools).
std::string compute_cache_key(const PrimFunc& f, const CompileOptions& opts, TargetBackend& backend);

// Forgets the in-process memo (kernels already handed out stay valid).
void clear_compile_memo();
// The cache root in effect ($TILELANG_CACHE_DIR or ~/.cache/tilelang).
std::string cache_root();

}  // namespace tl
