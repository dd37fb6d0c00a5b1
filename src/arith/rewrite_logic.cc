// Rewrite rules for comparisons and boolean logic.
//
// A comparison of index expressions becomes `D <= 0` (or `D == 0`) with D = a - b as a linear
// form; it folds to true/false when D's bounds (variable ranges, known facts, symbolic ranges)
// decide it. Otherwise a common factor of D's coefficients is divided out and the comparison is
// rebuilt with positive terms on the left and the constant on the right: `i * 4 + j < 16`,
// `x < y + 5`. Comparisons of other integers are decided by bounds only; float comparisons only
// fold constants (NaN makes the usual identities false).
//
// `a && b` simplifies b assuming a (and a assuming b); `a || b` simplifies b assuming !a. This
// gives x && !x -> false, x || !x -> true, i < 4 && i < 8 -> i < 4, and removes guards that an
// enclosing condition already decides.
#include "arith/analyzer_impl.h"
#include "ir/functor.h"
#include "ir/int_arith.h"

namespace tl {

namespace {

BinOp flip(BinOp op) {  // a op b  <=>  b flip(op) a
  switch (op) {
    case BinOp::kLT: return BinOp::kGT;
    case BinOp::kLE: return BinOp::kGE;
    case BinOp::kGT: return BinOp::kLT;
    case BinOp::kGE: return BinOp::kLE;
    default: return op;
  }
}

BinOp negated(BinOp op) {  // !(a op b)  <=>  a negated(op) b   (integers)
  switch (op) {
    case BinOp::kLT: return BinOp::kGE;
    case BinOp::kLE: return BinOp::kGT;
    case BinOp::kGT: return BinOp::kLE;
    case BinOp::kGE: return BinOp::kLT;
    case BinOp::kEQ: return BinOp::kNE;
    case BinOp::kNE: return BinOp::kEQ;
    default: return op;
  }
}

}  // namespace

Expr AnalyzerImpl::lookup_fact(const Expr& e) {
  if (!e.dtype().is_bool() || e.as<IntImmNode>()) return Expr();
  for (auto& f : true_facts_)
    if (expr_equal(f, e)) return make_bool(true);
  for (auto& f : false_facts_)
    if (expr_equal(f, e)) return make_bool(false);
  return Expr();
}

LinearForm AnalyzerImpl::inline_lets(const LinearForm& f) {
  // Up to a few rounds: a let value may mention other let variables.
  LinearForm cur = f;
  for (int round = 0; round < 4; ++round) {
    std::map<Var, Expr, VarLess> values;
    for (auto& term : cur.terms)
      for (auto& factor : term.factors)
        if (auto* v = factor.as<VarNode>())
          if (const VarInfo* info = find_var(v); info && info->kind == VarInfo::Kind::kValue && info->symbolic)
            values.emplace(info->var, info->value);
    if (values.empty()) break;
    cur = linear(simplify(substitute(to_expr(cur), values)));
  }
  return cur;
}

Expr AnalyzerImpl::rewrite_compare(BinOp op, const Expr& a, const Expr& b) {
  if (Expr f = fold_binary(op, a, b); f.defined()) return f;
  DataType t = a.dtype();
  auto rebuild = [&](BinOp o, const Expr& x, const Expr& y) -> Expr {
    Expr r = make_binary(o, x, y);
    if (Expr f = lookup_fact(r); f.defined()) return f;
    return r;
  };
  bool reflexive_true = op == BinOp::kEQ || op == BinOp::kLE || op == BinOp::kGE;
  if (expr_equal(a, b) && is_pure_expr(a)) return make_bool(reflexive_true);

  if (t.is_bool()) {
    if (op == BinOp::kEQ || op == BinOp::kNE) {
      int64_t v;
      const Expr* other = is_const_int(a, &v) ? &b : (is_const_int(b, &v) ? &a : nullptr);
      if (other) return (v != 0) == (op == BinOp::kEQ) ? *other : negate(*other);
    }
    return rebuild(op, a, b);
  }

  if (!is_index_type(t)) {
    // Other integers (narrow, unsigned): decided by bounds only.
    ConstIntBound ba = bound(a), bb = bound(b);
    auto decide = [&](BinOp o, const ConstIntBound& x, const ConstIntBound& y) -> int {
      switch (o) {
        case BinOp::kLT: return x.max_value < y.min_value ? 1 : (x.min_value >= y.max_value ? 0 : -1);
        case BinOp::kLE: return x.max_value <= y.min_value ? 1 : (x.min_value > y.max_value ? 0 : -1);
        case BinOp::kEQ:
          if (x.is_point() && y.is_point() && x.min_value == y.min_value) return 1;
          return (x.max_value < y.min_value || y.max_value < x.min_value) ? 0 : -1;
        default: return -1;
      }
    };
    int r = -1;
    switch (op) {
      case BinOp::kLT:
      case BinOp::kLE:
      case BinOp::kEQ: r = decide(op, ba, bb); break;
      case BinOp::kGT:
      case BinOp::kGE: r = decide(flip(op), bb, ba); break;
      case BinOp::kNE:
        r = decide(BinOp::kEQ, ba, bb);
        if (r >= 0) r = 1 - r;
        break;
      default: break;
    }
    if (r >= 0) return make_bool(r == 1);
    return rebuild(op, a, b);
  }

  // ---- Index types: linear difference.
  LinearForm la = linear(a), lb = linear(b);
  LinearForm one = lin_.constant(1, t);
  if (op == BinOp::kEQ || op == BinOp::kNE) {
    bool eq = op == BinOp::kEQ;
    LinearForm d = lin_.add(la, lb, -1);
    if (d.is_const()) return make_bool((d.constant == 0) == eq);
    // Canonical sign: the leading term positive.
    if (d.terms[0].coef < 0) d = lin_.scale(d, -1);
    // d == 0 is impossible when d >= 1 or d <= -1 (bounds, facts, symbolic ranges).
    if (prove_le0(lin_.add(one, d, -1)) || prove_le0(lin_.add(d, one, 1))) return make_bool(!eq);
    if (prove_le0(d) && prove_le0(lin_.scale(d, -1))) return make_bool(eq);
    // With let values substituted, a common factor that does not divide the constant shows
    // there is no solution (t = 2i + 1 is never 4).
    if (LinearForm inl = inline_lets(d); !inl.is_const()) {
      int64_t gi = 0;
      for (auto& term : inl.terms) gi = gcd64(gi, term.coef);
      if (gi > 1 && inl.constant % gi != 0) return make_bool(!eq);
    } else {
      return make_bool((inl.constant == 0) == eq);
    }
    int64_t g = 0;
    for (auto& term : d.terms) g = gcd64(g, term.coef);
    if (g > 1) {
      if (d.constant % g != 0) return make_bool(!eq);
      for (auto& term : d.terms) term.coef /= g;
      d.constant /= g;
    }
    LinearForm lhs, rhs;
    lhs.dtype = rhs.dtype = t;
    for (auto& term : d.terms) {
      if (term.coef > 0) lhs.terms.push_back(term);
      else rhs.terms.push_back(LinearTerm{term.factors, -term.coef});
    }
    rhs.constant = -d.constant;
    lin_.normalize(&lhs);
    lin_.normalize(&rhs);
    return rebuild(op, to_expr(lhs), to_expr(rhs));
  }

  // LT/LE/GT/GE as d <= 0.
  bool strict = op == BinOp::kLT || op == BinOp::kGT;
  LinearForm d = (op == BinOp::kLT || op == BinOp::kLE) ? lin_.add(la, lb, -1) : lin_.add(lb, la, -1);
  if (strict) d = lin_.add(d, one, 1);
  if (d.is_const()) return make_bool(d.constant <= 0);
  // Divide out the common factor first (g*D' + k <= 0  <=>  D' <= floor(-k / g)), so the proofs
  // below see the same form whether or not the input was already reduced.
  int64_t g = 0;
  for (auto& term : d.terms) g = gcd64(g, term.coef);
  if (g > 1) {
    for (auto& term : d.terms) term.coef /= g;
    d.constant = -floordiv_int<int64_t>(-d.constant, g);
  }
  if (prove_le0(d)) return make_bool(true);
  if (prove_le0(lin_.add(one, d, -1))) return make_bool(false);  // d >= 1
  // Positive terms on the left, the rest and the constant on the right.
  LinearForm lhs, rhs;
  lhs.dtype = rhs.dtype = t;
  for (auto& term : d.terms) {
    if (term.coef > 0) lhs.terms.push_back(term);
    else rhs.terms.push_back(LinearTerm{term.factors, -term.coef});
  }
  lin_.normalize(&lhs);
  lin_.normalize(&rhs);
  // lhs - rhs + k <= 0:  lhs <= rhs - k,  or strictly  lhs < rhs - k + 1.
  if (lhs.is_const()) {
    // Only negative terms: k <= rhs, written with the terms on the left: rhs >= k (rhs > k - 1).
    lhs.constant = strict ? d.constant - 1 : d.constant;
    return rebuild(strict ? BinOp::kGT : BinOp::kGE, to_expr(rhs), to_expr(lhs));
  }
  rhs.constant = strict ? -d.constant + 1 : -d.constant;
  lin_.normalize(&rhs);
  return rebuild(strict ? BinOp::kLT : BinOp::kLE, to_expr(lhs), to_expr(rhs));
}

Expr AnalyzerImpl::negate(const Expr& cond) { return rewrite_not(cond); }

Expr AnalyzerImpl::rewrite_not(const Expr& a) {
  int64_t v;
  if (is_const_int(a, &v)) return make_bool(v == 0);
  if (auto* u = a.as<UnaryNode>(); u && u->op == UnOp::kNot) return u->a;
  if (auto* b = a.as<BinaryNode>(); b && binop_is_compare(b->op) && !b->a.dtype().is_float())
    return rewrite_compare(negated(b->op), b->a, b->b);
  if (Expr f = lookup_fact(a); f.defined()) return make_bool(is_const_value(f, 0));
  Expr r = make_unary(UnOp::kNot, a);
  if (Expr f = lookup_fact(r); f.defined()) return f;
  return r;
}

Expr AnalyzerImpl::rewrite_logic(BinOp op, const Expr& a_in, const Expr& b_in) {
  bool is_and = op == BinOp::kAnd;
  Expr a = simplify(a_in);
  int64_t v;
  if (is_const_int(a, &v)) {
    if ((v != 0) != is_and) return make_bool(v != 0);  // false && _, true || _
    return simplify(b_in);
  }
  // b is only evaluated when a is true (&&) / false (||).
  Expr b;
  {
    UndoGuard guard(*this);
    add_assumption(is_and ? a : negate(a), true);
    b = simplify(b_in);
  }
  if (is_const_int(b, &v)) {
    if ((v != 0) == is_and) return a;  // a && true, a || false
    if (is_pure_expr(a)) return make_bool(v != 0);
    return make_binary(op, a, b);
  }
  if (expr_equal(a, b)) return a;
  // The other direction: a given b (sound because both operands are pure conditions here).
  // Only for a single condition a: re-simplifying a whole chain under each new operand would
  // make a chain of n conjuncts cost 2^n.
  auto* ab = a.as<BinaryNode>();
  bool a_is_chain = ab && binop_is_logical(ab->op);
  if (!a_is_chain && is_pure_expr(a) && is_pure_expr(b)) {
    Expr a2;
    {
      UndoGuard guard(*this);
      add_assumption(is_and ? b : negate(b), true);
      a2 = simplify(a);
    }
    if (is_const_int(a2, &v)) {
      if ((v != 0) == is_and) return b;
      return make_bool(v != 0);
    }
  }
  Expr r = a.same_as(a_in) && b.same_as(b_in) ? make_binary(op, a_in, b_in) : make_binary(op, a, b);
  if (Expr f = lookup_fact(r); f.defined()) return f;
  return r;
}

}  // namespace tl
