#include "arith/linear_form.h"

#include <algorithm>

#include "ir/eval.h"

namespace tl {

namespace {

bool is_index_dtype(DataType t) { return t.is_int() && t.bits >= 32 && t.lanes == 1; }

int64_t wrap_add(int64_t a, int64_t b, DataType t) {
  return wrap_int(static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)), t);
}
int64_t wrap_mul(int64_t a, int64_t b, DataType t) {
  return wrap_int(static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)), t);
}
// |c| as an unsigned magnitude (INT64_MIN included).
uint64_t magnitude(int64_t c) { return c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c); }

int64_t dtype_min(DataType t) { return t.bits >= 64 ? INT64_MIN : -(int64_t(1) << (t.bits - 1)); }

}  // namespace

int64_t gcd64(int64_t a, int64_t b) {
  uint64_t x = magnitude(a), y = magnitude(b);
  while (y) {
    uint64_t r = x % y;
    x = y;
    y = r;
  }
  return static_cast<int64_t>(x);
}

int LinearOps::compare_factors(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (int c = order_.compare(a[i], b[i])) return c;
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

LinearForm LinearOps::constant(int64_t c, DataType t) {
  LinearForm f;
  f.dtype = t;
  f.constant = wrap_int(c, t);
  return f;
}

LinearForm LinearOps::atom(const Expr& e) {
  LinearForm f;
  f.dtype = e.dtype();
  f.terms.push_back(LinearTerm{{e}, 1});
  return f;
}

LinearForm LinearOps::add(const LinearForm& a, const LinearForm& b, int64_t b_sign) {
  LinearForm out;
  out.dtype = a.dtype;
  out.terms = a.terms;
  for (auto& t : b.terms) out.terms.push_back(LinearTerm{t.factors, wrap_mul(t.coef, b_sign, a.dtype)});
  out.constant = wrap_add(a.constant, wrap_mul(b.constant, b_sign, a.dtype), a.dtype);
  normalize(&out);
  return out;
}

LinearForm LinearOps::scale(const LinearForm& a, int64_t c) {
  LinearForm out;
  out.dtype = a.dtype;
  for (auto& t : a.terms) out.terms.push_back(LinearTerm{t.factors, wrap_mul(t.coef, c, a.dtype)});
  out.constant = wrap_mul(a.constant, c, a.dtype);
  normalize(&out);
  return out;
}

LinearForm LinearOps::mul(const LinearForm& a, const LinearForm& b) {
  if (a.is_const()) return scale(b, a.constant);
  if (b.is_const()) return scale(a, b.constant);
  auto monomial = [](const LinearForm& f) { return f.terms.size() == 1 && f.constant == 0; };
  if (monomial(a) || monomial(b)) {
    const LinearTerm& m = monomial(a) ? a.terms[0] : b.terms[0];
    const LinearForm& poly = monomial(a) ? b : a;
    LinearForm out;
    out.dtype = a.dtype;
    for (auto& t : poly.terms) {
      std::vector<Expr> factors = m.factors;
      factors.insert(factors.end(), t.factors.begin(), t.factors.end());
      std::stable_sort(factors.begin(), factors.end(), [&](const Expr& x, const Expr& y) { return order_.less(x, y); });
      out.terms.push_back(LinearTerm{std::move(factors), wrap_mul(m.coef, t.coef, a.dtype)});
    }
    if (poly.constant != 0) out.terms.push_back(LinearTerm{m.factors, wrap_mul(m.coef, poly.constant, a.dtype)});
    normalize(&out);
    return out;
  }
  // Two multi-term sums: keep the product as one atom, operands in a fixed order.
  Expr x = to_expr(a), y = to_expr(b);
  if (order_.less(y, x)) std::swap(x, y);
  return atom(make_binary(BinOp::kMul, x, y));
}

void LinearOps::normalize(LinearForm* f) {
  DataType t = f->dtype;
  auto& terms = f->terms;
  for (auto& term : terms) term.coef = wrap_int(term.coef, t);
  std::stable_sort(terms.begin(), terms.end(),
                   [&](const LinearTerm& x, const LinearTerm& y) { return compare_factors(x.factors, y.factors) < 0; });
  std::vector<LinearTerm> merged;
  for (auto& term : terms) {
    if (!merged.empty() && compare_factors(merged.back().factors, term.factors) == 0) {
      merged.back().coef = wrap_add(merged.back().coef, term.coef, t);
    } else {
      merged.push_back(std::move(term));
    }
  }
  merged.erase(std::remove_if(merged.begin(), merged.end(), [](const LinearTerm& x) { return x.coef == 0; }),
               merged.end());
  // Display order: degree, then |coef|, descending; then factor order; then sign.
  std::stable_sort(merged.begin(), merged.end(), [&](const LinearTerm& x, const LinearTerm& y) {
    if (x.factors.size() != y.factors.size()) return x.factors.size() > y.factors.size();
    if (magnitude(x.coef) != magnitude(y.coef)) return magnitude(x.coef) > magnitude(y.coef);
    if (int c = compare_factors(x.factors, y.factors)) return c < 0;
    return x.coef > y.coef;
  });
  terms = std::move(merged);
  f->constant = wrap_int(f->constant, t);
}

LinearForm LinearOps::from_expr(const Expr& e) {
  if (auto* imm = e.as<IntImmNode>()) return constant(imm->value, e.dtype());
  if (!is_index_dtype(e.dtype())) return atom(e);
  if (auto* b = e.as<BinaryNode>()) {
    switch (b->op) {
      case BinOp::kAdd: return add(from_expr(b->a), from_expr(b->b), 1);
      case BinOp::kSub: return add(from_expr(b->a), from_expr(b->b), -1);
      case BinOp::kMul: {
        LinearForm la = from_expr(b->a), lb = from_expr(b->b);
        bool expand = la.is_const() || lb.is_const() || (la.terms.size() == 1 && la.constant == 0) ||
                      (lb.terms.size() == 1 && lb.constant == 0);
        return expand ? mul(la, lb) : atom(e);
      }
      default: break;
    }
  }
  if (auto* u = e.as<UnaryNode>(); u && u->op == UnOp::kNeg) return scale(from_expr(u->a), -1);
  return atom(e);
}

Expr LinearOps::term_expr(const std::vector<Expr>& factors, int64_t coef, DataType t) {
  Expr acc = factors[0];
  for (size_t i = 1; i < factors.size(); ++i) acc = make_binary(BinOp::kMul, acc, factors[i]);
  if (coef != 1) acc = make_binary(BinOp::kMul, acc, make_int(coef, t));
  return acc;
}

Expr LinearOps::to_expr(const LinearForm& f) {
  DataType t = f.dtype;
  if (f.terms.empty()) return make_int(f.constant, t);
  // Emission order: display order, but a sum starts with a positive term when it has one
  // (`j - i`, not `-i + j`), or else with a positive constant (`16 - i`).
  std::vector<const LinearTerm*> order;
  for (auto& term : f.terms) order.push_back(&term);
  auto first_pos = std::find_if(order.begin(), order.end(), [](const LinearTerm* x) { return x->coef > 0; });
  if (first_pos != order.end()) std::rotate(order.begin(), first_pos, first_pos + 1);
  Expr acc;
  bool constant_done = false;
  if (order[0]->coef < 0 && f.constant > 0) {
    acc = make_int(f.constant, t);
    constant_done = true;
  }
  int64_t tmin = dtype_min(t);
  for (const LinearTerm* term : order) {
    if (term->coef > 0 || term->coef == tmin) {
      Expr e = term_expr(term->factors, term->coef, t);
      acc = acc.defined() ? make_binary(BinOp::kAdd, acc, e) : e;
    } else if (acc.defined()) {
      acc = make_binary(BinOp::kSub, acc, term_expr(term->factors, -term->coef, t));
    } else if (term->coef == -1) {
      acc = make_unary(UnOp::kNeg, term_expr(term->factors, 1, t));
    } else {
      acc = term_expr(term->factors, term->coef, t);
    }
  }
  if (!constant_done && f.constant != 0) {
    if (f.constant > 0 || f.constant == tmin) acc = make_binary(BinOp::kAdd, acc, make_int(f.constant, t));
    else acc = make_binary(BinOp::kSub, acc, make_int(-f.constant, t));
  }
  return acc;
}

}  // namespace tl
