#include "bindings/bindings.h"

NB_MODULE(_core, m) {
  m.doc() = "tilelang-cpp compiler core";
  m.attr("__version__") = TL_VERSION;
  tl::bind::bind_errors(m);
  tl::bind::bind_ir(m);
  tl::bind::bind_runtime(m);
  tl::bind::bind_ir_tools(m);
  tl::bind::bind_cuda(m);
  tl::bind::bind_ascend(m);
}
