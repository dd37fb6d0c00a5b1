#include "transform/legalize_cpu_loops.h"

#include "ir/functor.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

bool contains_loop(const Stmt& s) {
  bool found = false;
  post_order_visit(s, [&](const Stmt& x) {
    if (x.as<ForNode>()) found = true;
  });
  return found;
}

// True when every store in `body` writes an element that depends on `var`: iterations then write
// distinct places (as T.Parallel promises), while a store to a fixed element (an accumulator
// `acc[0] += ...`) is a dependence carried across iterations that a SIMD hint would break.
bool stores_depend_on(const Stmt& body, const Var& var) {
  bool ok = true;
  post_order_visit(body, [&](const Stmt& x) {
    auto* st = x.as<BufferStoreNode>();
    if (!st || !ok) return;
    bool uses = false;
    for (auto& i : st->indices)
      for_each_subexpr(i, [&](const Expr& e) { uses |= e.get() == var.get(); });
    ok = uses;
  });
  return ok;
}

class LoopLegalizer : public StmtMutator {
 public:
  explicit LoopLegalizer(bool vectorize) : vectorize_(vectorize) {}
  using StmtMutator::mutate;

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    ForKind kind = n->for_kind;
    AttrMap ann = n->annotations;
    switch (n->for_kind) {
      case ForKind::kPipelined:
      case ForKind::kPersistent:
        kind = ForKind::kSerial;
        ann.clear();
        break;
      case ForKind::kParallel:
      case ForKind::kVectorized:
        kind = (vectorize_ && !contains_loop(body) && stores_depend_on(body, n->var)) ? ForKind::kVectorized
                                                                                      : ForKind::kSerial;
        ann.clear();
        break;
      case ForKind::kSerial:
      case ForKind::kUnrolled: break;
    }
    if (kind == n->for_kind && body.same_as(n->body) && ann.size() == n->annotations.size()) return s;
    return make_for(n->var, n->min, n->extent, kind, body, std::move(ann), n->span);
  }

 private:
  bool vectorize_;
};

}  // namespace

PrimFunc legalize_cpu_loops(const PrimFunc& f, const PassContext& ctx) {
  LoopLegalizer l(!config_bool(ctx.configs, "tir.disable_vectorize"));
  Stmt body = l.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("legalize_cpu_loops", legalize_cpu_loops);

}  // namespace tl
