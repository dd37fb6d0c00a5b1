#include "target/cpu/vectorize_math_loops.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "arith/expr_order.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "op/op_util.h"
#include "target/cpu/loop_index.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr int64_t kLanes = 16;  // one 64-byte vector of float32 (tl::cpu::f32x16)

bool is_f32(DataType t) { return t == DataType::Float32(); }

bool is_math_call(const CallNode* c) {
  return (c->op == "exp2" || c->op == "exp" || c->op == "__exp") && c->args.size() == 1 && is_f32(c->dtype) &&
         is_f32(c->args[0].dtype());
}

// Whether a loop's stores and values have the forms listed in the header.
class Checker {
 public:
  // require_math: some value must call exp2 / exp (else any loop of the admitted forms passes).
  Checker(const ForNode* loop, bool require_math) : loop_(loop), require_math_(require_math) {}

  bool check(const Stmt& body) {
    std::vector<const BufferStoreNode*> stores;
    bool only_stores = true;
    post_order_visit(body, [&](const Stmt& s) {
      if (auto* st = s.as<BufferStoreNode>()) stores.push_back(st);
      else if (s.kind() != StmtKind::kSeq) only_stores = false;
    });
    if (!only_stores || stores.empty()) return false;
    for (const BufferStoreNode* st : stores) {
      if (!is_f32(st->buffer.dtype()) || !is_f32(st->value.dtype()) || st->indices.size() != 1) return false;
      if (!unit_stride_start(st->indices[0], loop_)) {
        // A per-iteration temporary (fusion's scalar for a buffer used inside one iteration): one
        // element, free of the loop variable.
        if (uses_var(st->indices[0], loop_->var)) return false;
        auto [it, fresh] = temps_.emplace(st->buffer.get(), st->indices[0]);
        if (!fresh && !structural_equal(it->second, st->indices[0])) return false;
      }
      stored_.insert(st->buffer.get());
      store_indices_.push_back({st->buffer.get(), st->indices[0]});
    }
    for (const BufferStoreNode* st : stores) {
      if (!value_ok(st->value)) return false;
      if (temps_.count(st->buffer.get())) written_temps_.insert(st->buffer.get());  // readable from the next store on
    }
    for (const auto& [b, idx] : temps_)  // a temporary is an element-wise buffer nowhere else
      for (const auto& [sb, sidx] : store_indices_)
        if (sb == b && !structural_equal(sidx, idx)) return false;
    return has_math_ || !require_math_;
  }

 private:
  // Whether e depends on the iteration: the loop variable, or a temporary written earlier in it.
  bool varies(const Expr& e) const {
    if (uses_var(e, loop_->var)) return true;
    bool found = false;
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>(); l && temps_.count(l->buffer.get())) found = true;
    });
    return found;
  }

  // A part free of the loop variable: pure, reading no buffer the loop stores.
  bool invariant_ok(const Expr& e) const {
    if (!is_pure_expr(e)) return false;
    bool ok = true;
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>(); l && stored_.count(l->buffer.get())) ok = false;
    });
    return ok;
  }

  bool load_ok(const BufferLoadNode* l) const {
    if (!is_f32(l->dtype) || !is_f32(l->buffer.dtype()) || l->indices.size() != 1) return false;
    if (auto t = temps_.find(l->buffer.get()); t != temps_.end())  // read after this iteration wrote it
      return written_temps_.count(l->buffer.get()) && structural_equal(t->second, l->indices[0]);
    if (!unit_stride_start(l->indices[0], loop_)) return false;
    if (!stored_.count(l->buffer.get())) return true;
    for (const auto& [b, idx] : store_indices_)  // read where the loop writes it: element-wise in place
      if (b == l->buffer.get() && structural_equal(idx, l->indices[0])) return true;
    return false;
  }

  bool value_ok(const Expr& e) {
    if (!varies(e)) return invariant_ok(e);
    if (!is_f32(e.dtype())) return false;
    if (auto* l = e.as<BufferLoadNode>()) return load_ok(l);
    if (auto* b = e.as<BinaryNode>()) {
      if (b->op != BinOp::kAdd && b->op != BinOp::kSub && b->op != BinOp::kMul && b->op != BinOp::kDiv) return false;
      return value_ok(b->a) && value_ok(b->b);
    }
    if (auto* c = e.as<CallNode>(); c && is_math_call(c)) {
      has_math_ = true;
      return value_ok(c->args[0]);
    }
    return false;  // the loop variable as a value, a cast, a select, another call...
  }

  const ForNode* loop_;
  const bool require_math_;
  std::set<const BufferNode*> stored_;
  std::vector<std::pair<const BufferNode*, Expr>> store_indices_;
  std::map<const BufferNode*, Expr> temps_;
  std::set<const BufferNode*> written_temps_;
  bool has_math_ = false;
};

// The factor f of a store B[x] = B[x] * f (or f * B[x]) whose f is free of the loop variable, when no
// other statement of the loop names B and f is not a constant: the store can run as a loop of its
// own, and be skipped when f == 1 (x * 1 is x for every float).
std::optional<Expr> rescale_factor(const BufferStoreNode* st, const std::vector<Stmt>& body, const Var& v) {
  auto* m = st->value.as<BinaryNode>();
  if (!m || m->op != BinOp::kMul) return std::nullopt;
  auto same = [&](const Expr& e) {
    auto* l = e.as<BufferLoadNode>();
    return l && l->buffer.same_as(st->buffer) && l->indices.size() == 1 && structural_equal(l->indices[0], st->indices[0]);
  };
  Expr f = same(m->a) ? m->b : same(m->b) ? m->a : Expr();
  if (!f.defined() || f.as<FloatImmNode>() || uses_var(f, v) || !uses_var(st->indices[0], v)) return std::nullopt;
  for (const Stmt& o : body) {
    if (o.get() == st) continue;
    bool names = false;
    if (auto* os = o.as<BufferStoreNode>(); os && os->buffer.same_as(st->buffer)) names = true;
    for_each_expr(o, [&](const Expr& e) {
      if (auto* l = e.as<BufferLoadNode>(); l && l->buffer.same_as(st->buffer)) names = true;
    });
    if (names) return std::nullopt;
  }
  return f;
}

class Marker : public StmtMutator {
 public:
  using StmtMutator::mutate;
  int marked = 0;

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    if (n->for_kind != ForKind::kVectorized || n->annotations.count("cpu.vector_lanes"))
      return StmtMutator::mutate_for(n, s);
    AttrMap ann = n->annotations;
    ann["cpu.vector_lanes"] = Attr(kLanes);
    std::vector<Stmt> body;
    if (auto* sq = n->body.as<SeqStmtNode>()) body = sq->seq;
    else body = {n->body};
    // A loop that is only the rescale (when the nest's rows are not as long as the output's, the
    // rescale is a nest of its own): guarded as below, without an exp2 / exp to require.
    if (auto* st = body.size() == 1 ? body[0].as<BufferStoreNode>() : nullptr) {
      if (std::optional<Expr> f = rescale_factor(st, body, n->var); f && Checker(n, false).check(n->body)) {
        ++marked;
        Stmt loop = make_for(n->var, n->min, n->extent, n->for_kind, n->body, ann, n->span);
        return make_if(ne(*f, make_float(1.0, f->dtype())), loop, Stmt(), n->span);
      }
    }
    if (!Checker(n, true).check(n->body)) return StmtMutator::mutate_for(n, s);
    ++marked;
    // Online softmax's rescale of the output rows, O[i, j] *= scale[i], leaves the nest: guarded by
    // scale != 1, a row whose maximum did not change skips its pass over O (exact: x * 1 == x).
    std::vector<Stmt> out, rest;
    for (const Stmt& st : body) {
      auto* store = st.as<BufferStoreNode>();
      std::optional<Expr> f = store ? rescale_factor(store, body, n->var) : std::nullopt;
      if (!f || body.size() == 1) {
        rest.push_back(st);
        continue;
      }
      Var v(n->var.name(), n->var.dtype());
      Stmt loop = make_for(v, n->min, n->extent, n->for_kind, substitute(st, {{n->var, v}}), ann, n->span);
      out.push_back(make_if(ne(*f, make_float(1.0, f->dtype())), loop, Stmt(), st.span()));
    }
    if (out.empty()) return make_for(n->var, n->min, n->extent, n->for_kind, n->body, ann, n->span);
    out.push_back(make_for(n->var, n->min, n->extent, n->for_kind, make_seq(rest, n->body.span()), ann, n->span));
    return make_seq(out, n->span);
  }
};

}  // namespace

PrimFunc vectorize_math_loops(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_vector_math")) return f;
  Marker m;
  Stmt body = m.mutate(f.body());
  return m.marked == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("vectorize_math_loops", vectorize_math_loops);

}  // namespace tl
