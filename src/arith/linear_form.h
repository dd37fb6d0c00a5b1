// Canonical sums of products: sum_i coef_i * (f_i1 * f_i2 * ...) + constant, over one signed
// integer dtype. Factors are "atoms": any expression that is not +, -, * or a constant (a
// variable, floordiv(x, 8), a load, ...). This is the simplifier's normal form for index
// arithmetic; its invariants make like terms meet:
//   - the factors of a term are sorted (ExprOrder) and terms with equal factor lists are merged;
//   - no term has coefficient 0; coefficients and the constant are wrapped to the dtype
//     (integer + and * are a ring modulo 2^bits, so this never changes a value);
//   - terms are kept in display order: higher degree first, then larger |coef|, then factor order
//     (`bx * 128 + tx * 4 + i`).
// A product of two sums is expanded when one side is a single term (`(i + 1) * n` -> `i*n + n`);
// a product of two multi-term sums stays one atom so expressions never blow up.
#pragma once

#include <vector>

#include "arith/expr_order.h"

namespace tl {

struct LinearTerm {
  std::vector<Expr> factors;  // sorted, non-empty
  int64_t coef = 1;
};

struct LinearForm {
  DataType dtype = DataType::Int32();
  std::vector<LinearTerm> terms;
  int64_t constant = 0;

  bool is_const() const { return terms.empty(); }
  // A single term with coefficient 1 and one factor and no constant: the atom itself.
  bool is_single_atom() const { return terms.size() == 1 && constant == 0 && terms[0].coef == 1 && terms[0].factors.size() == 1; }
};

class LinearOps {
 public:
  explicit LinearOps(ExprOrder& order) : order_(order) {}

  // Reads an expression (whose children are already in canonical form) as a linear form.
  LinearForm from_expr(const Expr& e);
  // Builds the canonical expression: `x * 8 + y - 3`, `16 - i`, `n * -2 + 1`.
  Expr to_expr(const LinearForm& f);

  LinearForm constant(int64_t c, DataType t);
  LinearForm atom(const Expr& e);
  // Coefficient arithmetic wraps to the dtype, like the integer operations themselves.
  LinearForm add(const LinearForm& a, const LinearForm& b, int64_t b_sign = 1);
  LinearForm scale(const LinearForm& a, int64_t c);
  LinearForm mul(const LinearForm& a, const LinearForm& b);
  // Sorts, merges like terms, wraps coefficients to the dtype, drops zero terms.
  void normalize(LinearForm* f);

  // Orders factor lists (lexicographically by ExprOrder).
  int compare_factors(const std::vector<Expr>& a, const std::vector<Expr>& b);
  // Expression of one term's factors times |coef| (no sign).
  Expr term_expr(const std::vector<Expr>& factors, int64_t coef, DataType t);

 private:
  ExprOrder& order_;
};

// Greatest common divisor of |a| and |b| (gcd(0, b) = |b|).
int64_t gcd64(int64_t a, int64_t b);

}  // namespace tl
