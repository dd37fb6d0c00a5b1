// Rewrite rules for min and max.
//
// A chain min(min(a, b), c) is flattened into its operands; constants are combined; duplicates
// are removed; an operand that is provably not smaller (for min; not larger for max) than
// another one is dropped (this covers min(x, x + 1) -> x, max(min(x, 4), 8) -> 8 and every
// bound-based case); min(x, max(x, y)) -> x and max(x, min(x, y)) -> x. The survivors are rebuilt
// left-deep in their original order, the constant last.
#include "arith/analyzer_impl.h"

namespace tl {

namespace {

void flatten(const Expr& e, BinOp op, std::vector<Expr>* out) {
  if (auto* b = e.as<BinaryNode>(); b && b->op == op) {
    flatten(b->a, op, out);
    flatten(b->b, op, out);
    return;
  }
  out->push_back(e);
}

}  // namespace

Expr AnalyzerImpl::rewrite_min_max(BinOp op, const Expr& a, const Expr& b) {
  if (Expr f = fold_binary(op, a, b); f.defined()) return f;
  bool is_min = op == BinOp::kMin;
  BinOp other = is_min ? BinOp::kMax : BinOp::kMin;
  DataType t = a.dtype();
  std::vector<Expr> ops;
  flatten(a, op, &ops);
  flatten(b, op, &ops);

  // Combine the constants into one.
  Expr constant;
  std::vector<Expr> rest;
  for (auto& e : ops) {
    if (e.as<IntImmNode>() || e.as<FloatImmNode>()) {
      constant = constant.defined() ? fold_binary(op, constant, e) : e;
      if (!constant.defined()) return make_binary(op, a, b);  // unreachable: both constants
    } else {
      rest.push_back(e);
    }
  }
  if (constant.defined()) rest.push_back(constant);

  // Duplicates (pure operands only: an impure one is evaluated once per occurrence).
  std::vector<Expr> uniq;
  for (auto& e : rest) {
    bool dup = false;
    for (auto& u : uniq) dup = dup || (expr_equal(u, e) && is_pure_expr(e));
    if (!dup) uniq.push_back(e);
  }

  // x `dominates` y when keeping x alone gives the same result: x <= y for min, x >= y for max.
  bool can_compare = !t.is_float() && t.lanes == 1;
  auto dominates = [&](const Expr& x, const Expr& y) -> bool {
    if (!can_compare) return false;
    if (!is_pure_expr(y)) return false;
    // min(x, max(.., x, ..)) -> x
    if (auto* yb = y.as<BinaryNode>(); yb && yb->op == other) {
      std::vector<Expr> inner;
      flatten(y, other, &inner);
      for (auto& i : inner)
        if (expr_equal(i, x)) return true;
    }
    if (is_index_type(t)) return is_min ? prove_le(x, y) : prove_le(y, x);
    ConstIntBound bx = bound(x), by = bound(y);
    return is_min ? bx.max_value <= by.min_value : bx.min_value >= by.max_value;
  };
  std::vector<bool> dropped(uniq.size(), false);
  for (size_t i = 0; i < uniq.size(); ++i) {
    if (dropped[i]) continue;
    for (size_t j = 0; j < uniq.size(); ++j) {
      if (i == j || dropped[j]) continue;
      if (dominates(uniq[i], uniq[j])) dropped[j] = true;
    }
  }
  std::vector<Expr> kept;
  for (size_t i = 0; i < uniq.size(); ++i)
    if (!dropped[i]) kept.push_back(uniq[i]);

  // Rebuilt left-deep, one operand at a time, exactly as a bottom-up pass over the result would
  // see it (so simplifying the result again changes nothing). At each step a constant offset
  // common to every operand moves out when all offsets have one sign (the one closest to 0
  // moves): max(x * 8 + 7, 7) -> max(x * 8, 0) + 7; mixed forms stay as written.
  Expr acc = kept[0];
  for (size_t k = 1; k < kept.size(); ++k) {
    std::vector<Expr> group;
    flatten(acc, op, &group);
    group.push_back(kept[k]);
    acc = Expr();
    if (is_index_type(t)) {
      std::vector<LinearForm> forms;
      int64_t c = 0;
      bool same_sign = true;
      for (auto& e : group) {
        forms.push_back(linear(e));
        int64_t off = forms.back().constant;
        if (off == 0 || (c != 0 && (off > 0) != (c > 0))) same_sign = false;
        if (c == 0 || (off > 0 ? off < c : off > c)) c = off;
      }
      if (same_sign && c != 0) {
        Expr inner;
        for (auto& f : forms) {
          Expr e = to_expr(lin_.add(f, lin_.constant(c, t), -1));
          inner = inner.defined() ? make_binary(op, inner, e) : e;
        }
        acc = to_expr(lin_.add(lin_.atom(inner), lin_.constant(c, t), 1));
      }
    }
    if (!acc.defined())
      for (auto& e : group) acc = acc.defined() ? make_binary(op, acc, e) : e;
  }
  return acc;
}

}  // namespace tl
