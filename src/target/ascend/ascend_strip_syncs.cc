#include "target/ascend/ascend_strip_syncs.h"

#include "ir/functor.h"

namespace tl {

namespace {

class Stripper : public StmtMutator {
 protected:
  Stmt mutate_evaluate(const EvaluateNode* e, const Stmt& s) override {
    auto* c = e->value.as<CallNode>();
    if (c && (c->op == "ascend.set_flag" || c->op == "ascend.wait_flag" || c->op == "ascend.pipe_barrier" ||
              c->op == "ascend.barrier_all"))
      return make_nop();
    return s;
  }
};

}  // namespace

PrimFunc ascend_strip_syncs(const PrimFunc& f, const PassContext&) {
  Stripper s;
  return f.with_body(s.mutate(f.body()));
}

TL_REGISTER_PASS("ascend_strip_syncs", ascend_strip_syncs);

}  // namespace tl
