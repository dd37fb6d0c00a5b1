#include "transform/reroll_loops.h"

#include <map>

#include "ir/functor.h"
#include "ir/structural.h"

namespace tl {

namespace {

constexpr size_t kMinRun = 4;     // groups; shorter runs stay spelled out
constexpr size_t kMaxPeriod = 8;  // statements per group

// Anti-unification of group `ja` and group `ja + 1` of a run: the common template, in which each
// pair of differing integer constants (ca, cb) becomes ca + (cb - ca) * (r - ja). Variables bound
// inside the groups correspond by position; anything else that differs makes it fail.
class AntiUnifier {
 public:
  AntiUnifier(Var r, int64_t ja) : r_(std::move(r)), ja_(ja) {}

  bool failed() const { return failed_; }

  Stmt stmt(const Stmt& a, const Stmt& b) {
    if (failed_) return a;
    if (a.same_as(b)) return a;
    if (!a.defined() || !b.defined() || a.kind() != b.kind()) return fail(a);
    switch (a.kind()) {
      case StmtKind::kSeq: {
        const auto& x = a.as<SeqStmtNode>()->seq;
        const auto& y = b.as<SeqStmtNode>()->seq;
        if (x.size() != y.size()) return fail(a);
        std::vector<Stmt> out;
        for (size_t i = 0; i < x.size(); ++i) out.push_back(stmt(x[i], y[i]));
        return make_seq(out, a->span);
      }
      case StmtKind::kEvaluate:
        return make_evaluate(expr(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value), a->span);
      case StmtKind::kLet: {
        const auto* x = a.as<LetStmtNode>();
        const auto* y = b.as<LetStmtNode>();
        Expr v = expr(x->value, y->value);
        bind(x->var, y->var);
        return make_let(x->var, v, stmt(x->body, y->body), a->span);
      }
      case StmtKind::kStore: {
        const auto* x = a.as<BufferStoreNode>();
        const auto* y = b.as<BufferStoreNode>();
        if (!x->buffer.same_as(y->buffer) || x->indices.size() != y->indices.size()) return fail(a);
        std::vector<Expr> idx;
        for (size_t i = 0; i < x->indices.size(); ++i) idx.push_back(expr(x->indices[i], y->indices[i]));
        return make_store(x->buffer, idx, expr(x->value, y->value), a->span);
      }
      case StmtKind::kFor: {
        const auto* x = a.as<ForNode>();
        const auto* y = b.as<ForNode>();
        if (x->for_kind != y->for_kind || !attrs_equal(x->annotations, y->annotations)) return fail(a);
        Expr mn = expr(x->min, y->min), ext = expr(x->extent, y->extent);
        bind(x->var, y->var);
        return make_for(x->var, mn, ext, x->for_kind, stmt(x->body, y->body), x->annotations, a->span);
      }
      case StmtKind::kIf: {
        const auto* x = a.as<IfThenElseNode>();
        const auto* y = b.as<IfThenElseNode>();
        if (x->else_case.defined() != y->else_case.defined()) return fail(a);
        Expr c = expr(x->cond, y->cond);
        Stmt t = stmt(x->then_case, y->then_case);
        Stmt e = x->else_case.defined() ? stmt(x->else_case, y->else_case) : Stmt();
        return make_if(c, t, e, a->span);
      }
      case StmtKind::kAllocate: {
        const auto* x = a.as<AllocateNode>();
        const auto* y = b.as<AllocateNode>();
        if (!x->buffer.same_as(y->buffer)) return fail(a);
        return make_allocate(x->buffer, stmt(x->body, y->body), a->span);
      }
      case StmtKind::kAttr: {
        const auto* x = a.as<AttrStmtNode>();
        const auto* y = b.as<AttrStmtNode>();
        if (x->key != y->key || !attrs_equal({{x->key, x->value}}, {{y->key, y->value}})) return fail(a);
        return make_attr(x->key, x->value, stmt(x->body, y->body), a->span);
      }
      case StmtKind::kLoopControl:
        if (a.as<LoopControlNode>()->is_break != b.as<LoopControlNode>()->is_break) return fail(a);
        return a;
      case StmtKind::kKernel:
      case StmtKind::kTileOp:
        return fail(a);
    }
    return fail(a);
  }

  Expr expr(const Expr& a, const Expr& b) {
    if (failed_) return a;
    if (a.same_as(b)) return a;
    if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return fail(a);
    switch (a.kind()) {
      case ExprKind::kIntImm: {
        int64_t ca = a.as<IntImmNode>()->value, cb = b.as<IntImmNode>()->value;
        if (ca == cb) return a;
        DataType t = a.dtype();
        if (!(t == DataType::Int32() || t == DataType::Int64())) return fail(a);
        // ca at group ja, cb at ja + 1: c(r) = c0 + d * r.
        int64_t d = cb - ca, c0 = ca - d * ja_;
        if (t == DataType::Int32() && (c0 < INT32_MIN || c0 > INT32_MAX || d < INT32_MIN || d > INT32_MAX))
          return fail(a);
        Expr rr = make_cast(t, r_);
        return make_int(c0, t) + make_int(d, t) * rr;
      }
      case ExprKind::kFloatImm:
      case ExprKind::kStringImm:
      case ExprKind::kRamp:
      case ExprKind::kBroadcast:
        return structural_equal(a, b) ? a : fail(a);
      case ExprKind::kVar: {
        auto it = bound_.find(b.node().get());
        if (it != bound_.end() && it->second == a.node().get()) return a;
        return fail(a);
      }
      case ExprKind::kBinary: {
        const auto* x = a.as<BinaryNode>();
        const auto* y = b.as<BinaryNode>();
        if (x->op != y->op) return fail(a);
        return make_binary(x->op, expr(x->a, y->a), expr(x->b, y->b));
      }
      case ExprKind::kUnary: {
        const auto* x = a.as<UnaryNode>();
        const auto* y = b.as<UnaryNode>();
        if (x->op != y->op) return fail(a);
        return make_unary(x->op, expr(x->a, y->a));
      }
      case ExprKind::kSelect: {
        const auto* x = a.as<SelectNode>();
        const auto* y = b.as<SelectNode>();
        return make_select(expr(x->cond, y->cond), expr(x->true_value, y->true_value),
                           expr(x->false_value, y->false_value));
      }
      case ExprKind::kCast:
        return make_cast(a.dtype(), expr(a.as<CastNode>()->value, b.as<CastNode>()->value));
      case ExprKind::kBufferLoad: {
        const auto* x = a.as<BufferLoadNode>();
        const auto* y = b.as<BufferLoadNode>();
        if (!x->buffer.same_as(y->buffer) || x->indices.size() != y->indices.size()) return fail(a);
        std::vector<Expr> idx;
        for (size_t i = 0; i < x->indices.size(); ++i) idx.push_back(expr(x->indices[i], y->indices[i]));
        return make_load(x->buffer, idx);
      }
      case ExprKind::kCall: {
        const auto* x = a.as<CallNode>();
        const auto* y = b.as<CallNode>();
        if (x->op != y->op || x->args.size() != y->args.size()) return fail(a);
        std::vector<Expr> args;
        for (size_t i = 0; i < x->args.size(); ++i) args.push_back(expr(x->args[i], y->args[i]));
        return make_call(a.dtype(), x->op, args);
      }
    }
    return fail(a);
  }

 private:
  template <typename T>
  T fail(const T& x) {
    failed_ = true;
    return x;
  }

  void bind(const Var& a, const Var& b) {
    if (a.dtype() != b.dtype()) failed_ = true;
    bound_[b.get()] = a.get();
  }

  static bool attrs_equal(const AttrMap& x, const AttrMap& y) {
    if (x.size() != y.size()) return false;
    for (auto ix = x.begin(), iy = y.begin(); ix != x.end(); ++ix, ++iy) {
      if (ix->first != iy->first) return false;
      if (!structural_equal(make_attr(ix->first, ix->second, make_nop()), make_attr(iy->first, iy->second, make_nop())))
        return false;
    }
    return true;
  }

  Var r_;
  int64_t ja_;
  bool failed_ = false;
  // b's variable -> a's, for variables bound inside the group; free variables match only themselves.
  std::map<const ExprNode*, const ExprNode*> bound_;
};

class Reroller : public StmtMutator {
 protected:
  Stmt mutate_seq(const SeqStmtNode* n, const Stmt& s) override {
    Stmt inner = StmtMutator::mutate_seq(n, s);
    const auto* seq = inner.as<SeqStmtNode>();
    if (!seq) return inner;
    std::vector<Stmt> out = reroll(seq->seq);
    if (out.size() == seq->seq.size()) return inner;
    return make_seq(out, n->span);
  }

 private:
  static Stmt group(const std::vector<Stmt>& s, size_t first, size_t p) {
    return make_seq(std::vector<Stmt>(s.begin() + static_cast<std::ptrdiff_t>(first),
                                      s.begin() + static_cast<std::ptrdiff_t>(first + p)));
  }

  // The template of the run starting at `i` with period `p`, from groups ja and ja + 1, and how
  // many consecutive groups from i it reproduces.
  static size_t try_run(const std::vector<Stmt>& s, size_t i, size_t p, size_t ja, const Var& r, Stmt* body) {
    size_t n = s.size();
    if (i + (ja + 2) * p > n) return 0;
    AntiUnifier au(r, static_cast<int64_t>(ja));
    std::vector<Stmt> parts;
    for (size_t k = 0; k < p; ++k) parts.push_back(au.stmt(s[i + ja * p + k], s[i + (ja + 1) * p + k]));
    if (au.failed()) return 0;
    *body = make_seq(parts);
    size_t count = 0;
    while (i + (count + 1) * p <= n) {
      Stmt inst = substitute(*body, {{r, make_int(static_cast<int64_t>(count))}});
      if (!structural_equal(inst, group(s, i + count * p, p))) break;
      ++count;
    }
    return count;
  }

  static std::vector<Stmt> reroll(const std::vector<Stmt>& s) {
    std::vector<Stmt> out;
    size_t i = 0;
    while (i < s.size()) {
      size_t best_count = 0, best_p = 0;
      Stmt best_body;
      Var best_r;
      // A run that reaches the end of the sequence cannot be beaten by a longer period (it must
      // cover strictly more statements): the search stops there.
      for (size_t p = 1; p <= kMaxPeriod && i + kMinRun * p <= s.size() && i + best_count * best_p < s.size(); ++p) {
        // Group 0 may be a degenerate instance (a `+ 0` folded away): groups 1 and 2 also serve
        // as the pattern.
        for (size_t ja = 0; ja < 2; ++ja) {
          Var r("u", DataType::Int32());
          Stmt body;
          size_t count = try_run(s, i, p, ja, r, &body);
          if (count >= kMinRun && count * p > best_count * best_p) {
            best_count = count;
            best_p = p;
            best_body = body;
            best_r = r;
          }
          if (count * p + i == s.size()) break;
        }
      }
      if (best_count == 0) {
        out.push_back(s[i]);
        ++i;
        continue;
      }
      out.push_back(make_for(best_r, make_int(0), make_int(static_cast<int64_t>(best_count)), ForKind::kUnrolled,
                             best_body, {}, s[i]->span));
      i += best_count * best_p;
    }
    return out;
  }
};

}  // namespace

Stmt reroll_stmt(const Stmt& s) {
  Reroller r;
  return r.mutate(s);
}

PrimFunc reroll_loops(const PrimFunc& f, const PassContext&) {
  Stmt body = reroll_stmt(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("reroll_loops", reroll_loops);

}  // namespace tl
