// Constant integer bounds of expressions, and the proofs built on them.
//
// Bounds flow bottom-up: a variable gets the bound recorded when it was bound (loop range, let
// value, explicit bound), tightened by assumed facts `c*v + k <= 0`; each operation combines its
// operands' bounds (saturating interval arithmetic). Index types (int32/int64) assume no
// overflow, so a result is clamped to the type's range; other integers wrap, so a result that
// leaves the type's range becomes the whole range.
#include <algorithm>

#include "arith/analyzer_impl.h"
#include "ir/int_arith.h"

namespace tl {

namespace {
constexpr size_t kMemoLimit = 1 << 10;

ConstIntBound apply_dtype_rule(ConstIntBound r, DataType t) {
  ConstIntBound full = ConstIntBound::of_dtype(t);
  if (is_index_type(t)) {
    ConstIntBound c = bound_intersect(r, full);
    return c.min_value <= c.max_value ? c : full;
  }
  return (r.min_value >= full.min_value && r.max_value <= full.max_value) ? r : full;
}
}  // namespace

ConstIntBound AnalyzerImpl::bound(const Expr& e) {
  if (auto* imm = e.as<IntImmNode>()) {
    if (e.dtype().is_uint() && e.dtype().bits >= 64 && imm->value < 0) return ConstIntBound::of_dtype(e.dtype());
    return ConstIntBound::point(imm->value);
  }
  Key key{e.get(), state_};
  auto it = bound_memo_.find(key);
  if (it != bound_memo_.end()) return it->second.second;
  ConstIntBound r = bound_uncached(e);
  if (bound_memo_.size() >= kMemoLimit) bound_memo_.clear();
  bound_memo_.emplace(key, std::make_pair(e, r));
  return r;
}

ConstIntBound AnalyzerImpl::bound_uncached(const Expr& e) {
  DataType t = e.dtype();
  if (t.lanes != 1 || !(t.is_integer() || t.is_bool())) return ConstIntBound::everything();
  ConstIntBound r = ConstIntBound::of_dtype(t);
  switch (e.kind()) {
    case ExprKind::kVar: {
      if (const VarInfo* info = find_var(e.as<VarNode>())) r = info->bound;
      break;
    }
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      if (binop_is_compare(n->op) || binop_is_logical(n->op)) {
        r = {0, 1};
        break;
      }
      ConstIntBound a = bound(n->a), b = bound(n->b);
      switch (n->op) {
        case BinOp::kAdd: r = bound_add(a, b); break;
        case BinOp::kSub: r = bound_sub(a, b); break;
        case BinOp::kMul: r = bound_mul(a, b); break;
        case BinOp::kDiv: r = bound_truncdiv(a, b); break;
        case BinOp::kMod: r = bound_truncmod(a, b); break;
        case BinOp::kFloorDiv: r = bound_floordiv(a, b); break;
        case BinOp::kFloorMod: r = bound_floormod(a, b); break;
        case BinOp::kMin: r = bound_min(a, b); break;
        case BinOp::kMax: r = bound_max(a, b); break;
        case BinOp::kBitAnd:
          // x & y with a non-negative operand lies in [0, that operand's max].
          if (a.min_value >= 0 || b.min_value >= 0) {
            int64_t hi = ConstIntBound::kPosInf;
            if (a.min_value >= 0) hi = std::min(hi, a.max_value);
            if (b.min_value >= 0) hi = std::min(hi, b.max_value);
            r = {0, hi};
          }
          break;
        case BinOp::kShr: {
          int64_t s;
          if (is_const_int(n->b, &s) && s >= 0 && s < 63 && a.min_value >= 0)
            r = {a.min_value >> s, a.max_value == ConstIntBound::kPosInf ? a.max_value : a.max_value >> s};
          break;
        }
        case BinOp::kShl: {
          int64_t s;
          if (is_const_int(n->b, &s) && s >= 0 && s < 62 && a.min_value >= 0) r = bound_scale(a, int64_t(1) << s);
          break;
        }
        default: break;
      }
      break;
    }
    case ExprKind::kUnary: {
      auto* n = e.as<UnaryNode>();
      if (n->op == UnOp::kNot) r = {0, 1};
      else if (n->op == UnOp::kNeg) r = bound_neg(bound(n->a));
      else r = bound_sub(ConstIntBound::point(-1), bound(n->a));  // ~x == -x - 1
      break;
    }
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      r = bound_union(bound(n->true_value), bound(n->false_value));
      break;
    }
    case ExprKind::kCast: {
      const Expr& v = e.as<CastNode>()->value;
      if (v.dtype().is_integer() || v.dtype().is_bool()) {
        ConstIntBound bv = bound(v);
        if (t.is_bool()) {
          r = !bv.contains(0) ? ConstIntBound::point(1) : (bv == ConstIntBound::point(0) ? bv : ConstIntBound(0, 1));
        } else {
          ConstIntBound full = ConstIntBound::of_dtype(t);
          r = bv.min_value >= full.min_value && bv.max_value <= full.max_value ? bv : full;  // else it wraps
        }
      }
      break;
    }
    default: break;
  }
  r = apply_dtype_rule(r, t);
  if (!facts_.empty() && is_index_type(t)) r = tighten_with_facts(e, r);
  return r;
}

ConstIntBound AnalyzerImpl::tighten_with_facts(const Expr& atom, ConstIntBound b) {
  for (auto& f : facts_) {
    if (f.terms.size() != 1 || f.terms[0].factors.size() != 1 || !expr_equal(f.terms[0].factors[0], atom)) continue;
    int64_t c = f.terms[0].coef, k = f.constant;
    if (c == ConstIntBound::kNegInf || k == ConstIntBound::kNegInf) continue;
    // c*x + k <= 0
    if (c > 0) {
      b.max_value = std::min(b.max_value, floordiv_int<int64_t>(-k, c));  // x <= floor(-k / c)
    } else {
      b.min_value = std::max(b.min_value, -floordiv_int<int64_t>(-k, -c));  // x >= ceil(k / -c)
    }
  }
  return b;
}

ConstIntBound AnalyzerImpl::bound_of(const LinearForm& f) {
  ConstIntBound r = ConstIntBound::point(f.constant);
  for (auto& term : f.terms) {
    ConstIntBound p = ConstIntBound::point(term.coef);
    for (auto& factor : term.factors) p = bound_mul(p, bound(factor));
    r = bound_add(r, p);
  }
  if (is_index_type(f.dtype)) r = apply_dtype_rule(r, f.dtype);
  return r;
}

// Rewrites the terms k*floordiv(E, c) (c > 0 dividing k) as (k/c)*(E - floormod(E, c)), or the
// terms k*floormod(E, c) as k*(E - c*floordiv(E, c)). Bounds of the result can be tighter because
// E's terms may cancel others: n <= floordiv(n + 127, 128) * 128 becomes floormod(n + 127, 128) <= 127.
// Returns false when no term has that shape.
static bool expand_div_mod(AnalyzerImpl& an, const LinearForm& d, bool expand_div, LinearForm* out) {
  BinOp want = expand_div ? BinOp::kFloorDiv : BinOp::kFloorMod;
  bool any = false;
  for (auto& term : d.terms) {
    auto* b = term.factors.size() == 1 ? term.factors[0].as<BinaryNode>() : nullptr;
    any = any || (b && b->op == want);
  }
  if (!any) return false;
  bool changed = false;
  LinearForm acc = an.lin_.constant(d.constant, d.dtype);
  for (auto& term : d.terms) {
    int64_t c;
    auto* b = term.factors.size() == 1 ? term.factors[0].as<BinaryNode>() : nullptr;
    if (b && b->op == want && is_const_int(b->b, &c) && c > 0 && (!expand_div || term.coef % c == 0)) {
      LinearForm e = an.linear(b->a);
      if (expand_div) {
        Expr fm = make_binary(BinOp::kFloorMod, b->a, b->b);
        acc = an.lin_.add(acc, an.lin_.scale(an.lin_.add(e, an.lin_.atom(fm), -1), term.coef / c), 1);
      } else {
        Expr fd = make_binary(BinOp::kFloorDiv, b->a, b->b);
        acc = an.lin_.add(acc, an.lin_.scale(an.lin_.add(e, an.lin_.scale(an.lin_.atom(fd), c), -1), term.coef), 1);
      }
      changed = true;
      continue;
    }
    LinearForm single;
    single.dtype = d.dtype;
    single.terms.push_back(term);
    acc = an.lin_.add(acc, single, 1);
  }
  *out = std::move(acc);
  return changed;
}

bool AnalyzerImpl::prove_le0(const LinearForm& d) {
  if (d.is_const()) return d.constant <= 0;
  if (bound_of(d).max_value <= 0) return true;
  for (bool expand_div : {true, false}) {
    LinearForm e;
    if (expand_div_mod(*this, d, expand_div, &e) && (e.is_const() ? e.constant <= 0 : bound_of(e).max_value <= 0))
      return true;
  }
  for (size_t i = 0; i < facts_.size(); ++i) {
    // d <= d - f when f <= 0 ... so d <= 0 follows from d - f <= 0.
    LinearForm diff = lin_.add(d, facts_[i], -1);
    if (diff.is_const() ? diff.constant <= 0 : bound_of(diff).max_value <= 0) return true;
  }
  return prove_le0_symbolic(d);
}

bool AnalyzerImpl::prove_nonneg(const Expr& e) {
  if (!is_index_type(e.dtype())) return bound(e).min_value >= 0;
  return prove_le0(lin_.scale(linear(e), -1));
}

bool AnalyzerImpl::prove_positive(const Expr& e) {
  if (!is_index_type(e.dtype())) return bound(e).min_value > 0;
  return prove_le0(lin_.add(lin_.constant(1, e.dtype()), linear(e), -1));
}

bool AnalyzerImpl::prove_le(const Expr& a, const Expr& b) {
  if (expr_equal(a, b)) return true;
  if (!is_index_type(a.dtype())) return bound(a).max_value <= bound(b).min_value;
  return prove_le0(lin_.add(linear(a), linear(b), -1));
}

}  // namespace tl
