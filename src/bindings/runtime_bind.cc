#include "bindings/bindings.h"

namespace tl::bind {
void bind_runtime(nanobind::module_& m) {}
}  // namespace tl::bind
