#include "target/cpu/vectorize_math_loops.h"

#include <map>
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
  explicit Checker(const ForNode* loop) : loop_(loop) {}

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
    return has_math_;
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
  std::set<const BufferNode*> stored_;
  std::vector<std::pair<const BufferNode*, Expr>> store_indices_;
  std::map<const BufferNode*, Expr> temps_;
  std::set<const BufferNode*> written_temps_;
  bool has_math_ = false;
};

class Marker : public StmtMutator {
 public:
  using StmtMutator::mutate;
  int marked = 0;

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    if (n->for_kind != ForKind::kVectorized || n->annotations.count("cpu.vector_lanes") ||
        !Checker(n).check(n->body))
      return StmtMutator::mutate_for(n, s);
    AttrMap ann = n->annotations;
    ann["cpu.vector_lanes"] = Attr(kLanes);
    ++marked;
    return make_for(n->var, n->min, n->extent, n->for_kind, n->body, ann, n->span);
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
