#include "bindings/bindings.h"

namespace tl::bind {
void bind_ir(nanobind::module_& m) {}
}  // namespace tl::bind
