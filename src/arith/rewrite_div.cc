// Rewrite rules for integer division and modulo of index expressions.
//
// With a constant divisor c > 0 the numerator's linear form is split into a part divisible by c
// and a remainder R whose coefficients are smaller than c and whose constant is in [0, c):
//   floordiv(Q*c + R, c) = Q + floordiv(R, c)      floormod(Q*c + R, c) = floormod(R, c)
// and then floordiv(R, c) is a constant q and floormod(R, c) = R - q*c when the bounds of R
// stay within one period [q*c, q*c + c). A common factor g of c and R's coefficients is divided
// out, nested divisions and modulos by constants are combined. truncdiv/truncmod (C `/`, `%`)
// become their floor versions when the numerator is provably non-negative.
#include <algorithm>

#include "arith/analyzer_impl.h"
#include "ir/int_arith.h"

namespace tl {

namespace {

bool mul_ok(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

bool is_trunc(BinOp op) { return op == BinOp::kDiv || op == BinOp::kMod; }
bool is_div(BinOp op) { return op == BinOp::kDiv || op == BinOp::kFloorDiv; }

}  // namespace

// floordiv / floormod of a linear form whose constant is in [0, c) by a constant c > 0.
// Returns the simplified expression. `trunc_op` is the C operator to emit instead of the floor one
// when no rule applies and R is provably non-negative (the user wrote `/` or `%`).
static Expr floor_rest(AnalyzerImpl& an, bool div, LinearForm r, int64_t c, bool trunc_op) {
  DataType t = r.dtype;
  if (r.is_const()) return make_int(div ? floordiv_int<int64_t>(r.constant, c) : floormod_int<int64_t>(r.constant, c), t);
  // Within one period the quotient is a constant.
  ConstIntBound b = an.bound_of(r);
  if (b.has_lower() && b.has_upper()) {
    int64_t q0 = floordiv_int<int64_t>(b.min_value, c), q1 = floordiv_int<int64_t>(b.max_value, c);
    if (q0 == q1) {
      if (div) return make_int(q0, t);
      int64_t shift;
      if (mul_ok(q0, c, &shift)) return an.to_expr(an.lin_.add(r, an.lin_.constant(shift, t), -1));
    }
  }
  // Divide out a common factor g of c and every coefficient: with R = g*R' + (g*a + b),
  // 0 <= b < g:  floordiv(R, c) = floordiv(R' + a, c/g),  floormod(R, c) = g*floormod(R' + a, c/g) + b.
  int64_t g = c;
  for (auto& term : r.terms) g = gcd64(g, term.coef);
  if (g > 1) {
    LinearForm inner;
    inner.dtype = t;
    for (auto& term : r.terms) inner.terms.push_back(LinearTerm{term.factors, term.coef / g});
    inner.constant = r.constant / g;  // r.constant is in [0, c)
    int64_t rem = r.constant % g;
    an.lin_.normalize(&inner);
    Expr q = floor_rest(an, div, inner, c / g, trunc_op);
    if (div) return q;
    LinearForm m = an.lin_.scale(an.linear(q), g);
    m.constant += rem;
    an.lin_.normalize(&m);
    return an.to_expr(m);
  }
  // Nested: floordiv(floordiv(x, c1), c) = floordiv(x, c1*c); floormod(floormod(x, c1), c) =
  // floormod(x, c) when c divides c1.
  if (r.is_single_atom()) {
    if (auto* inner = r.terms[0].factors[0].as<BinaryNode>()) {
      int64_t c1, cc;
      if (div && inner->op == BinOp::kFloorDiv && is_const_int(inner->b, &c1) && c1 > 0 && mul_ok(c1, c, &cc) &&
          ConstIntBound::of_dtype(t).contains(cc))
        return an.rewrite_div(BinOp::kFloorDiv, inner->a, make_int(cc, t));
      if (!div && inner->op == BinOp::kFloorMod && is_const_int(inner->b, &c1) && c1 > 0 && c1 % c == 0)
        return an.rewrite_div(BinOp::kFloorMod, inner->a, make_int(c, t));
    }
  }
  // Symbolic bounds: 0 <= R < c.
  LinearForm r_minus_c = an.lin_.add(r, an.lin_.constant(c, t), -1);
  LinearForm r_minus_c_plus_1 = an.lin_.add(r_minus_c, an.lin_.constant(1, t), 1);
  bool nonneg = an.prove_le0(an.lin_.scale(r, -1));
  if (nonneg && an.prove_le0(r_minus_c_plus_1)) return div ? make_int(0, t) : an.to_expr(r);
  BinOp op = trunc_op && nonneg ? (div ? BinOp::kDiv : BinOp::kMod) : (div ? BinOp::kFloorDiv : BinOp::kFloorMod);
  return make_binary(op, an.to_expr(r), make_int(c, t));
}

Expr AnalyzerImpl::rewrite_div(BinOp op, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  bool div = is_div(op);
  if (Expr f = fold_binary(op, a, b); f.defined()) return f;
  int64_t c;
  if (!is_const_int(b, &c)) {
    // ---- Symbolic divisor D (division by zero is undefined, so D != 0 may be assumed).
    if (expr_equal(a, b) && is_pure_expr(a)) return make_int(div ? 1 : 0, t);
    LinearForm ld = linear(b);
    bool floor = !is_trunc(op);
    if (ld.is_single_atom() && (floor || (prove_nonneg(a) && prove_positive(b)))) {
      const Expr& d = ld.terms[0].factors[0];
      LinearForm la = linear(a), q, r;
      q.dtype = r.dtype = t;
      r.constant = la.constant;
      for (auto& term : la.terms) {
        auto pos = std::find_if(term.factors.begin(), term.factors.end(), [&](const Expr& f) { return expr_equal(f, d); });
        if (pos == term.factors.end() || term.factors.size() == 1) {
          if (pos != term.factors.end()) q.constant += term.coef;  // coef * D
          else r.terms.push_back(term);
          continue;
        }
        std::vector<Expr> rest = term.factors;
        rest.erase(rest.begin() + (pos - term.factors.begin()));
        q.terms.push_back(LinearTerm{std::move(rest), term.coef});
      }
      lin_.normalize(&q);
      lin_.normalize(&r);
      // For truncation the split needs R >= 0 as well (then every part is non-negative).
      if (!q.is_const() || q.constant != 0) {
        if (!floor && !prove_le0(lin_.scale(r, -1))) return make_binary(op, a, b);
      }
      bool r_in_period = false;
      if (r.is_const() && r.constant == 0) {
        r_in_period = true;
      } else if (prove_positive(b) && prove_le0(lin_.scale(r, -1))) {
        r_in_period = prove_le0(lin_.add(lin_.add(r, ld, -1), lin_.constant(1, t), 1));
      }
      if (div) {
        if (r_in_period) return to_expr(q);
        if (q.is_const() && q.constant == 0) return make_binary(op, a, b);
        return to_expr(lin_.add(q, lin_.atom(make_binary(op, to_expr(r), b)), 1));
      }
      if (r_in_period) return to_expr(r);
      if (q.is_const() && q.constant == 0) return make_binary(op, a, b);
      return make_binary(op, to_expr(r), b);
    }
    return make_binary(op, a, b);
  }

  // ---- Constant divisor.
  if (c == 0) return make_binary(op, a, b);  // undefined; left for the program to hit
  if (c == 1) return div ? a : make_int(0, t);
  if (c < 0) {
    if (c == ConstIntBound::of_dtype(t).min_value) return make_binary(op, a, b);
    Expr pc = make_int(-c, t);
    if (is_trunc(op)) {
      // C: x / -c == -(x / c), x % -c == x % c.
      Expr q = rewrite_div(op, a, pc);
      return div ? to_expr(lin_.scale(linear(q), -1)) : q;
    }
    // floordiv(x, -c) == floordiv(-x, c), floormod(x, -c) == -floormod(-x, c).
    Expr neg_a = to_expr(lin_.scale(linear(a), -1));
    Expr q = rewrite_div(op, neg_a, pc);
    return div ? q : to_expr(lin_.scale(linear(q), -1));
  }
  bool trunc_op = is_trunc(op);
  if (trunc_op) {
    if (bound(a).min_value >= 0 || prove_nonneg(a)) {
      op = div ? BinOp::kFloorDiv : BinOp::kFloorMod;  // same value for a >= 0
    } else {
      ConstIntBound ba = bound(a);
      if (ba.min_value > -c && ba.max_value < c) return div ? make_int(0, t) : a;
      if (auto* inner = a.as<BinaryNode>(); inner && inner->op == op) {
        int64_t c1, cc;
        // truncdiv(truncdiv(x, c1), c) == truncdiv(x, c1*c); truncmod(truncmod(x, c1), c) ==
        // truncmod(x, c) when c divides c1 (both keep the sign of x).
        if (is_const_int(inner->b, &c1) && c1 > 0) {
          if (div && mul_ok(c1, c, &cc) && ConstIntBound::of_dtype(t).contains(cc))
            return rewrite_div(op, inner->a, make_int(cc, t));
          if (!div && c1 % c == 0) return rewrite_div(op, inner->a, b);
        }
      }
      return make_binary(op, a, b);
    }
  }
  // floordiv / floormod by c > 0: split the numerator into a multiple of c and a remainder.
  LinearForm la = linear(a), q, r;
  q.dtype = r.dtype = t;
  for (auto& term : la.terms) {
    int64_t qc = term.coef / c, rc = term.coef % c;  // truncating: |rc| < c
    if (qc != 0) q.terms.push_back(LinearTerm{term.factors, qc});
    if (rc != 0) r.terms.push_back(LinearTerm{term.factors, rc});
  }
  q.constant = floordiv_int<int64_t>(la.constant, c);
  r.constant = la.constant - q.constant * c;
  lin_.normalize(&q);
  lin_.normalize(&r);
  Expr rest = floor_rest(*this, div, r, c, trunc_op);
  if (!div) return rest;
  return to_expr(lin_.add(q, linear(rest), 1));
}

}  // namespace tl
