#include "runtime/source_backend.h"

#include "runtime/sha256.h"

namespace tl {

SourceBackend::SourceBackend(std::string source)
    : source_(std::move(source)), cpu_(make_backend(Target::parse("cpu"))) {}

PrimFunc SourceBackend::lower(const PrimFunc& f, PassContext& ctx) {
  ++lower_calls;
  ctx.stages.emplace_back("identity", f);
  return f;
}

std::string SourceBackend::codegen(const PrimFunc&, const PassContext&, std::string* host) {
  if (host) *host = "// hand-written kernel: host and kernel code are one file\n";
  return source_;
}

void SourceBackend::build(const std::string& src, const std::string& dir, const CompileOptions& opts) {
  ++build_calls;
  cpu_->build(src, dir, opts);
}

std::unique_ptr<KernelModule> SourceBackend::load(const ArtifactFiles& files, const PrimFunc& f, const PrimFunc* lowered,
                                                  const CompileOptions& opts) {
  return cpu_->load(files, f, lowered, opts);
}

std::vector<std::string> SourceBackend::artifact_files() const { return cpu_->artifact_files(); }

std::string SourceBackend::compiler_version(const CompileOptions& opts) {
  return cpu_->compiler_version(opts) + "source-backend " + sha256_hex(source_) + "\n";
}

}  // namespace tl
