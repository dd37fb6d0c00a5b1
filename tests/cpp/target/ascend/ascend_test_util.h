// Lowering helpers for the ascend pipeline tests.
#pragma once

#include "../../sim/kernels.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "target/ascend/pipeline.h"
#include "transform/pass_config.h"

namespace tl::test {

inline PrimFunc lower(const PrimFunc& f, AttrMap configs = {}) {
  PassContext ctx;
  ctx.target = Target::parse("ascend");
  ctx.configs = validate_pass_configs(configs);
  return lower_ascend(f, ctx);
}

inline int count_calls(const PrimFunc& f, const std::string& op) {
  int n = 0;
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (auto* e = s.as<EvaluateNode>())
      if (auto* c = e->value.as<CallNode>(); c && c->op == op) ++n;
  });
  return n;
}

inline AttrMap auto_sync() {
  AttrMap m;
  m["tl.ascend_auto_sync"] = Attr(true);
  return m;
}

}  // namespace tl::test
