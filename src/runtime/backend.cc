#include "runtime/backend.h"

#include <map>

#include "ir/error.h"

namespace tl {

static std::map<Target::Kind, BackendFactory>& backends() {
  static std::map<Target::Kind, BackendFactory> m;
  return m;
}

void register_backend(Target::Kind kind, BackendFactory factory) { backends()[kind] = std::move(factory); }

bool has_backend(Target::Kind kind) { return backends().count(kind) != 0; }

std::unique_ptr<TargetBackend> make_backend(const Target& target) {
  auto it = backends().find(target.kind);
  if (it == backends().end())
    throw_error<NotImplemented>("target '", target.str(), "' has no backend in this build");
  return it->second();
}

void TargetBackend::export_library(const AotRequest& req) {
  throw_error<NotImplemented>("not implemented: export_library for target '", req.options.target.str(),
                              "' (supported: cpu, cuda; docs/AOT.md)");
}

}  // namespace tl
