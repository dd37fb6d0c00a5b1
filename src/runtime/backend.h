// How a target plugs into tilelang.compile(). The driver (src/runtime/compile.cc) computes the
// cache key from the canonical input IR, target, pass configs, flags and compiler version; on a
// miss it runs backend.lower -> backend.codegen -> backend.build into a staging directory that is
// renamed into the cache atomically; on a hit it skips straight to backend.load.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/target.h"
#include "runtime/artifact_files.h"
#include "tl/cpu/abi.h"
#include "transform/pass.h"

namespace tl {

struct CompileOptions {
  Target target;
  AttrMap pass_configs;                    // validated
  std::vector<std::string> compile_flags;  // extra flags for the system / device compiler
  bool verbose = false;
};

// Where a launch runs: the device the tensors live on and, for cuda, the stream to launch on.
struct LaunchEnv {
  int device_id = 0;
  void* stream = nullptr;  // CUstream
};

// A loaded kernel. `args` follow include/tl/cpu/abi.h on every target: one slot per parameter
// (tensor: data pointer; int/bool scalar: i64; float scalar: f64), then one i64 per dynamic
// variable in PrimFunc::dynamic_vars() order. launch() throws tl::RuntimeError for kernel-side
// failures (device_assert, ...).
class KernelModule {
 public:
  virtual ~KernelModule() = default;
  virtual void launch(const std::vector<TLArg>& args, const LaunchEnv& env) = 0;
  // Optional per-target facts exposed on the Kernel object (ascend: simulated time, peak memory).
  virtual AttrMap info() const { return {}; }
};

// What a backend needs to build a standalone library of a compiled kernel (export_library,
// src/runtime/export_library.h, docs/AOT.md). The driver writes the C header and the target-neutral
// part of the library's source (`entry_source`: the C entry point `symbol`, which packs its
// arguments into TLArg slots and calls `static int32_t tl_aot_launch(const TLArg*, int32_t, void*
// stream)`, and `symbol`_last_error); the backend supplies tl_aot_launch (and may export further
// `symbol`_* functions) and compiles everything into `library_path`.
struct AotRequest {
  std::string symbol;
  std::string library_path;
  std::string entry_source;
  PrimFunc original;          // the function as compiled
  std::string kernel_source;  // CompiledKernel::kernel_source()
  std::string artifact_dir;   // the kernel's built artifacts (kernel.cubin, ...)
  CompileOptions options;
};

class TargetBackend {
 public:
  virtual ~TargetBackend() = default;
  // The target's pass pipeline (one readable function listing the passes in order).
  virtual PrimFunc lower(const PrimFunc& f, PassContext& ctx) = 0;
  // Source text for the lowered function: device/kernel source, and host source if separate.
  virtual std::string codegen(const PrimFunc& lowered, const PassContext& ctx, std::string* host_source) = 0;
  // Compiles `kernel_source` into artifact files inside `dir` (e.g. kernel.so, kernel.cubin).
  virtual void build(const std::string& kernel_source, const std::string& dir, const CompileOptions& opts) = 0;
  // Loads the artifacts through the descriptors of `files` (verified against the cache MANIFEST,
  // or just built), never by reopening paths. `lowered` is given when it is at hand (a cache miss)
  // and null on a hit, so load must not need it unless cacheable() is false.
  virtual std::unique_ptr<KernelModule> load(const ArtifactFiles& files, const PrimFunc& original,
                                             const PrimFunc* lowered, const CompileOptions& opts) = 0;
  // The files build() writes that load() needs: a cache entry without them is invalid.
  virtual std::vector<std::string> artifact_files() const { return {}; }
  // False for targets whose "artifact" is the lowered IR itself (ascend: the simulator runs it);
  // then lower/codegen run on every compile and build/load get a temporary dir.
  virtual bool cacheable() const { return true; }
  // Identifies the toolchain that build() uses (e.g. `g++ --version` plus the host CPU for
  // -march=native builds; the NVRTC version). Part of the cache key: a new compiler never
  // reuses kernels built by the old one.
  virtual std::string compiler_version(const CompileOptions& opts) { return ""; }
  // Builds the standalone library described by `req` (docs/AOT.md). The default throws
  // NotImplemented naming the target.
  virtual void export_library(const AotRequest& req);
};

using BackendFactory = std::function<std::unique_ptr<TargetBackend>()>;
void register_backend(Target::Kind kind, BackendFactory factory);
// Throws NotImplemented naming the target when none is registered.
std::unique_ptr<TargetBackend> make_backend(const Target& target);
// Whether a backend for `kind` is registered in this build ("auto" only picks cuda when it is).
bool has_backend(Target::Kind kind);

struct BackendRegistration {
  BackendRegistration(Target::Kind kind, BackendFactory f) { register_backend(kind, std::move(f)); }
};

}  // namespace tl
