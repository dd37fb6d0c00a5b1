// A backend that compiles a given, hand-written C++ kernel source (include/tl/cpu/abi.h; the
// toolchain builds with -fvisibility=hidden, so mark tl_kernel_entry visibility("default")) for a
// function's signature with the cpu toolchain: no lowering, no codegen. Used by tests of the
// runtime (independent of the code generator) and to try hand-written kernels.
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.h"

namespace tl {

class SourceBackend : public TargetBackend {
 public:
  explicit SourceBackend(std::string source);
  // Records one stage ("identity") and returns the function unchanged.
  PrimFunc lower(const PrimFunc& f, PassContext& ctx) override;
  std::string codegen(const PrimFunc&, const PassContext&, std::string* host) override;
  void build(const std::string& src, const std::string& dir, const CompileOptions& opts) override;
  std::unique_ptr<KernelModule> load(const ArtifactFiles& files, const PrimFunc& f, const PrimFunc* lowered,
                                     const CompileOptions& opts) override;
  std::vector<std::string> artifact_files() const override;
  // The cpu toolchain's version plus the source's hash, so different sources never share a key.
  std::string compiler_version(const CompileOptions& opts) override;

  int lower_calls = 0, build_calls = 0;

 private:
  std::string source_;
  std::unique_ptr<TargetBackend> cpu_;
};

}  // namespace tl
