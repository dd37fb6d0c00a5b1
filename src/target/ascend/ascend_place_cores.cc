#include "target/ascend/ascend_place_cores.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "sim/isa.h"

namespace tl {

namespace {

using sim::Mem;
using sim::Pipe;

// Bit 1: cube work, bit 2: vector work.
constexpr int kCube = 1, kVector = 2;

int mem_kind(MemScope s) {
  Mem m;
  if (!sim::mem_of_scope(s, &m) || m == Mem::kGM) return 0;
  return sim::mem_owner(m) == sim::CoreKind::kAIC ? kCube : kVector;
}

int pipe_kind(const Expr& e) {
  auto* s = e.as<StringImmNode>();
  Pipe p;
  if (!s || !sim::parse_pipe(s->value, &p)) return 0;
  if (p == Pipe::kMTE1 || p == Pipe::kM || p == Pipe::kFIX) return kCube;
  if (p == Pipe::kV || p == Pipe::kMTE3) return kVector;
  return 0;
}

// The kinds of work a statement contains (scopes already written count as their kind).
int kinds(const Stmt& s) {
  int k = 0;
  post_order_visit(s, [&](const Stmt& st) {
    if (auto* a = st.as<AttrStmtNode>(); a && a->key == "scope" && a->value.kind() == Attr::kStr)
      k |= a->value.as_str() == "C" ? kCube : kVector;
    if (auto* op = st.as<TileOpNode>()) {
      if (is_tile_op(*op, TileOpKind::kGemm)) {
        k |= kCube;
        return;
      }
      for (auto& a : op->args)
        if (a.is_region()) k |= mem_kind(a.region.buffer.scope());
    }
    if (auto* st2 = st.as<BufferStoreNode>()) k |= mem_kind(st2->buffer.scope());
    if (auto* ev = st.as<EvaluateNode>()) {
      if (auto* c = ev->value.as<CallNode>(); c && c->op.rfind("ascend.", 0) == 0)
        for (auto& a : c->args) k |= pipe_kind(a);
    }
  });
  for_each_expr(s, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) k |= mem_kind(l->buffer.scope());
    });
  });
  return k;
}

Stmt wrap(int kind, Stmt s) { return make_attr("scope", Attr(std::string(kind == kCube ? "C" : "V")), std::move(s)); }

class Placer : public StmtMutator {
 protected:
  Stmt mutate_attr(const AttrStmtNode* a, const Stmt& s) override {
    if (a->key == "scope") return s;  // already placed by the user
    return StmtMutator::mutate_attr(a, s);
  }
  Stmt mutate_seq(const SeqStmtNode* n, const Stmt& s) override {
    std::vector<Stmt> out, run;
    int run_kind = 0;
    auto flush = [&]() {
      if (run.empty()) return;
      out.push_back(wrap(run_kind, make_seq(run)));
      run.clear();
      run_kind = 0;
    };
    for (auto& c : n->seq) {
      int k = kinds(c);
      bool already = c.as<AttrStmtNode>() && c.as<AttrStmtNode>()->key == "scope";
      if (!already && (k == kCube || k == kVector)) {
        if (run_kind != k) flush();
        run_kind = k;
        run.push_back(c);
        continue;
      }
      flush();
      out.push_back(k == (kCube | kVector) ? mutate(c) : c);
    }
    flush();
    return make_seq(out, s.span());
  }
  Stmt place_single(const Stmt& s, const std::function<Stmt()>& recurse) {
    int k = kinds(s);
    if (k == kCube || k == kVector) return wrap(k, s);
    if (k == (kCube | kVector)) return recurse();
    return s;
  }
  Stmt mutate_tile_op(const TileOpNode*, const Stmt& s) override { return place_single(s, [&] { return s; }); }
  Stmt mutate_store(const BufferStoreNode*, const Stmt& s) override { return place_single(s, [&] { return s; }); }
  Stmt mutate_evaluate(const EvaluateNode*, const Stmt& s) override { return place_single(s, [&] { return s; }); }
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    return place_single(s, [&] { return StmtMutator::mutate_for(n, s); });
  }
  Stmt mutate_if(const IfThenElseNode* n, const Stmt& s) override {
    return place_single(s, [&] { return StmtMutator::mutate_if(n, s); });
  }
  // Allocations, lets and the kernel are entered: their bodies are placed piece by piece.
};

}  // namespace

PrimFunc ascend_place_cores(const PrimFunc& f, const PassContext& ctx) {
  Placer p;
  Stmt b = p.mutate(f.body());
  return b.same_as(f.body()) ? f : f.with_body(b);
}

TL_REGISTER_PASS("ascend_place_cores", ascend_place_cores);

}  // namespace tl
