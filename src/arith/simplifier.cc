// The simplifier's driver: memoization, dispatch by node kind, constant folding, linear
// arithmetic (+, -, *, neg), casts, select, calls. The other rule families live in
// rewrite_div.cc, rewrite_minmax.cc and rewrite_logic.cc.
#include "arith/analyzer_impl.h"
#include "ir/eval.h"
#include "ir/error.h"

namespace tl {

namespace {

constexpr size_t kMemoLimit = 1 << 10;

// The pair rule's shapes: floordiv(E, c) with floormod(E, c), truncdiv with truncmod.
const BinaryNode* as_div_by_const(const Expr& e, BinOp op, int64_t* c) {
  auto* b = e.as<BinaryNode>();
  if (!b || b->op != op || !is_const_int(b->b, c) || *c == 0) return nullptr;
  return b;
}

}  // namespace

Expr AnalyzerImpl::simplify(const Expr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kFloatImm:
    case ExprKind::kStringImm: return e;
    default: break;
  }
  // Results computed inside a symbolic proof may be weaker; keep them apart.
  Key key{e.get(), state_ * 2 + (symbolic_depth_ > 0 ? 1 : 0)};
  auto it = simplify_memo_.find(key);
  if (it != simplify_memo_.end()) return it->second.second;
  Expr r = simplify_uncached(e);
  if (!r.same_as(e) && expr_equal(r, e)) r = e;  // keep the caller's sharing when nothing changed
  if (simplify_memo_.size() >= kMemoLimit) simplify_memo_.clear();
  simplify_memo_.emplace(key, std::make_pair(e, r));
  return r;
}

Expr AnalyzerImpl::simplify_uncached(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kVar: {
      const VarInfo* info = find_var(e.as<VarNode>());
      if (info) {
        if (info->kind == VarInfo::Kind::kValue && (info->value.as<IntImmNode>() || info->value.as<FloatImmNode>()) &&
            info->value.dtype() == e.dtype())
          return info->value;
        if (info->kind == VarInfo::Kind::kRange && is_const_value(info->range.extent, 1) &&
            info->range.min.dtype() == e.dtype())
          return simplify(info->range.min);  // again: facts may have been assumed since binding
        if (e.dtype().is_integer() && info->bound.is_point()) return make_int(info->bound.min_value, e.dtype());
      }
      if (e.dtype().is_bool())
        if (Expr f = lookup_fact(e); f.defined()) return f;
      if (is_index_type(e.dtype()) && !facts_.empty()) {
        ConstIntBound b = bound(e);
        if (b.is_point()) return make_int(b.min_value, e.dtype());
      }
      return e;
    }
    case ExprKind::kBinary: return simplify_binary(e.as<BinaryNode>(), e);
    case ExprKind::kUnary: {
      auto* n = e.as<UnaryNode>();
      Expr a = simplify(n->a);
      if (n->op == UnOp::kNot) return rewrite_not(a);
      Value v;
      if (const_value(a, &v)) {
        try {
          return value_to_expr(eval_unary(n->op, v));
        } catch (const Error&) {
        }
      }
      if (n->op == UnOp::kNeg && is_index_type(a.dtype())) return to_expr(lin_.scale(linear(a), -1));
      if (n->op == UnOp::kNeg)
        if (auto* inner = a.as<UnaryNode>(); inner && inner->op == UnOp::kNeg) return inner->a;
      if (n->op == UnOp::kBitNot)
        if (auto* inner = a.as<UnaryNode>(); inner && inner->op == UnOp::kBitNot) return inner->a;
      return a.same_as(n->a) ? e : make_unary(n->op, a);
    }
    case ExprKind::kSelect: return rewrite_select(e.as<SelectNode>(), e);
    case ExprKind::kCast: return rewrite_cast(e.dtype(), simplify(e.as<CastNode>()->value));
    case ExprKind::kBufferLoad: {
      auto* n = e.as<BufferLoadNode>();
      std::vector<Expr> idx;
      bool changed = false;
      for (auto& i : n->indices) {
        idx.push_back(simplify(i));
        changed |= !idx.back().same_as(i);
      }
      return changed ? make_load(n->buffer, std::move(idx)) : e;
    }
    case ExprKind::kCall: return rewrite_call(e.as<CallNode>(), e);
    case ExprKind::kRamp: {
      auto* n = e.as<RampNode>();
      Expr b = simplify(n->base), s = simplify(n->stride);
      return b.same_as(n->base) && s.same_as(n->stride) ? e : make_ramp(b, s, n->lanes);
    }
    case ExprKind::kBroadcast: {
      auto* n = e.as<BroadcastNode>();
      Expr v = simplify(n->value);
      return v.same_as(n->value) ? e : make_broadcast(v, n->lanes);
    }
    default: return e;
  }
}

Expr AnalyzerImpl::fold_binary(BinOp op, const Expr& a, const Expr& b) {
  Value x, y;
  if (!const_value(a, &x) || !const_value(b, &y) || x.dtype != y.dtype) return Expr();
  try {
    return value_to_expr(eval_binary(op, x, y));
  } catch (const Error&) {
    return Expr();  // division by zero, bad shift: left for the program to hit at run time
  }
}

Expr AnalyzerImpl::simplify_binary(const BinaryNode* n, const Expr& e) {
  BinOp op = n->op;
  if (op == BinOp::kAnd || op == BinOp::kOr) return rewrite_logic(op, n->a, n->b);
  Expr a = simplify(n->a), b = simplify(n->b);
  if (Expr f = fold_binary(op, a, b); f.defined()) return f;
  auto rebuild = [&]() -> Expr {
    Expr r = a.same_as(n->a) && b.same_as(n->b) ? e : make_binary(op, a, b);
    if (r.dtype().is_bool())
      if (Expr f = lookup_fact(r); f.defined()) return f;
    return r;
  };
  DataType t = a.dtype();
  if (t != b.dtype() || t.lanes != 1) return rebuild();
  if (binop_is_compare(op) && !t.is_float()) return rewrite_compare(op, a, b);
  if (is_index_type(t)) {
    switch (op) {
      case BinOp::kAdd:
      case BinOp::kSub:
      case BinOp::kMul: return rewrite_linear(op, a, b);
      case BinOp::kDiv:
      case BinOp::kMod:
      case BinOp::kFloorDiv:
      case BinOp::kFloorMod: return rewrite_div(op, a, b);
      case BinOp::kMin:
      case BinOp::kMax: return rewrite_min_max(op, a, b);
      default: return rebuild();
    }
  }
  if (op == BinOp::kMin || op == BinOp::kMax) return rewrite_min_max(op, a, b);
  return rebuild();
}

Expr AnalyzerImpl::rewrite_linear(BinOp op, const Expr& a, const Expr& b) {
  LinearForm la = linear(a), lb = linear(b);
  LinearForm r = op == BinOp::kAdd ? lin_.add(la, lb, 1) : op == BinOp::kSub ? lin_.add(la, lb, -1) : lin_.mul(la, lb);
  // floordiv(E, c) * c + floormod(E, c) -> E (and the same for truncdiv / truncmod): the
  // identity that re-joins a split index.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < r.terms.size() && !changed; ++i) {
      if (r.terms[i].factors.size() != 1) continue;
      for (BinOp mod_op : {BinOp::kFloorMod, BinOp::kMod}) {
        int64_t c;
        const BinaryNode* mod = as_div_by_const(r.terms[i].factors[0], mod_op, &c);
        if (!mod) continue;
        BinOp div_op = mod_op == BinOp::kFloorMod ? BinOp::kFloorDiv : BinOp::kDiv;
        int64_t k = r.terms[i].coef;
        for (size_t j = 0; j < r.terms.size(); ++j) {
          int64_t c2;
          const BinaryNode* div = j == i || r.terms[j].factors.size() != 1 ? nullptr : as_div_by_const(r.terms[j].factors[0], div_op, &c2);
          if (!div || c2 != c || !expr_equal(div->a, mod->a)) continue;
          if (lin_.scale(lin_.constant(k, r.dtype), c).constant != r.terms[j].coef) continue;
          LinearForm rest = r;
          rest.terms.erase(rest.terms.begin() + std::max(i, j));
          rest.terms.erase(rest.terms.begin() + std::min(i, j));
          r = lin_.add(rest, lin_.scale(linear(mod->a), k), 1);
          changed = true;
          break;
        }
        if (changed) break;
      }
    }
  }
  return to_expr(r);
}

LinearForm AnalyzerImpl::linear(const Expr& e) {
  if (e.as<IntImmNode>()) return lin_.from_expr(e);
  auto it = linear_memo_.find(e.get());
  if (it != linear_memo_.end()) return it->second.second;
  LinearForm f = lin_.from_expr(e);
  if (linear_memo_.size() >= kMemoLimit) linear_memo_.clear();
  linear_memo_.emplace(e.get(), std::make_pair(e, f));
  return f;
}

// An integer conversion that keeps every value of `from` unchanged.
static bool lossless_int_cast(DataType from, DataType to) {
  if (from.is_bool()) return to.is_integer() || to.is_bool();
  if (!from.is_integer() || !to.is_integer()) return false;
  if (from.is_int() == to.is_int()) return to.bits >= from.bits;
  return to.is_int() && to.bits > from.bits;  // unsigned into a wider signed type
}

Expr AnalyzerImpl::rewrite_cast(DataType t, const Expr& value) {
  if (value.dtype() == t) return value;
  Value v;
  if (const_value(value, &v)) {
    try {
      return value_to_expr(eval_cast(t, v));
    } catch (const Error&) {
      // An undefined conversion (NaN or out of range) stays as written; make_cast would fold it
      // through a C++ conversion that is itself undefined, so the node is built directly.
      return Expr(std::make_shared<CastNode>(t, value));
    }
  }
  if (auto* inner = value.as<CastNode>(); inner && t.lanes == 1) {
    DataType from = inner->value.dtype(), mid = value.dtype();
    bool keeps_value = lossless_int_cast(from, mid);
    if (!keeps_value && from.is_integer() && mid.is_integer()) {
      ConstIntBound b = bound(inner->value), m = ConstIntBound::of_dtype(mid);
      keeps_value = b.min_value >= m.min_value && b.max_value <= m.max_value;
    }
    // float16/bfloat16 -> float32 -> float64 widen exactly.
    if (from.is_float() && mid.is_float() && (mid.code == DataType::kFloat && mid.bits > from.bits))
      keeps_value = mid.bits >= 32 || from.is_fp8() || from.is_fp4();
    if (keeps_value) return rewrite_cast(t, inner->value);
  }
  return make_cast(t, value);
}

Expr AnalyzerImpl::rewrite_select(const SelectNode* n, const Expr& e) {
  Expr c = simplify(n->cond);
  int64_t cv;
  if (is_const_int(c, &cv)) return simplify(cv ? n->true_value : n->false_value);
  Expr t, f;
  {
    UndoGuard guard(*this);
    add_assumption(c, true);
    t = simplify(n->true_value);
  }
  {
    UndoGuard guard(*this);
    add_assumption(negate(c), true);
    f = simplify(n->false_value);
  }
  if (expr_equal(t, f) && is_pure_expr(c)) return t;
  if (t.dtype().is_bool()) {
    int64_t tv, fv;
    if (is_const_int(t, &tv) && is_const_int(f, &fv)) return tv ? c : negate(c);  // (they differ)
  }
  if (c.same_as(n->cond) && t.same_as(n->true_value) && f.same_as(n->false_value)) return e;
  return make_select(c, t, f);
}

Expr AnalyzerImpl::rewrite_call(const CallNode* n, const Expr& e) {
  std::vector<Expr> args;
  bool changed = false, all_const = true;
  for (auto& a : n->args) {
    args.push_back(simplify(a));
    changed |= !args.back().same_as(a);
    all_const = all_const && (args.back().as<IntImmNode>() || args.back().as<FloatImmNode>());
  }
  Expr r = changed ? make_call(n->dtype, n->op, args) : e;
  // Exact functions of constants fold (transcendental ones would depend on the target's libm).
  static const char* exact[] = {"floor", "ceil", "trunc", "abs"};
  if (all_const && args.size() == 1) {
    for (const char* name : exact) {
      if (n->op != name) continue;
      try {
        return value_to_expr(eval_expr(r, std::map<Var, Value, VarLess>{}));
      } catch (const Error&) {
      }
    }
  }
  return r;
}

}  // namespace tl
