// Symbolic intervals and relaxation.
//
// eval_interval replaces each variable of a domain by its [min, max] and propagates through the
// expression (one level: the ends may mention other variables). relax() applies it in stages,
// innermost variables first: a variable whose range mentions another relaxed variable is
// relaxed before that one, so `j in [0, i + 1), i in [0, n)` gives j in [0, n - 1]; every
// stage's ends are simplified, which cancels correlated terms (i*8 + 7 - i*8).
#include <algorithm>
#include <set>

#include "arith/analyzer_impl.h"

namespace tl {

namespace {

void collect_vars(const Expr& e, std::vector<const VarNode*>* out, std::set<const VarNode*>* seen) {
  if (!e.defined()) return;
  switch (e.kind()) {
    case ExprKind::kVar:
      if (seen->insert(e.as<VarNode>()).second) out->push_back(e.as<VarNode>());
      return;
    case ExprKind::kBinary:
      collect_vars(e.as<BinaryNode>()->a, out, seen);
      collect_vars(e.as<BinaryNode>()->b, out, seen);
      return;
    case ExprKind::kUnary: collect_vars(e.as<UnaryNode>()->a, out, seen); return;
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      collect_vars(n->cond, out, seen);
      collect_vars(n->true_value, out, seen);
      collect_vars(n->false_value, out, seen);
      return;
    }
    case ExprKind::kCast: collect_vars(e.as<CastNode>()->value, out, seen); return;
    case ExprKind::kBufferLoad:
      for (auto& i : e.as<BufferLoadNode>()->indices) collect_vars(i, out, seen);
      return;
    case ExprKind::kCall:
      for (auto& a : e.as<CallNode>()->args) collect_vars(a, out, seen);
      return;
    case ExprKind::kRamp:
      collect_vars(e.as<RampNode>()->base, out, seen);
      collect_vars(e.as<RampNode>()->stride, out, seen);
      return;
    case ExprKind::kBroadcast: collect_vars(e.as<BroadcastNode>()->value, out, seen); return;
    default: return;
  }
}

std::vector<const VarNode*> vars_of(const Expr& e) {
  std::vector<const VarNode*> out;
  std::set<const VarNode*> seen;
  collect_vars(e, &out, &seen);
  return out;
}

bool uses_any(const Expr& e, const AnalyzerImpl::Domain& dom) {
  for (const VarNode* v : vars_of(e))
    if (dom.count(v)) return true;
  return false;
}

// Ends of intervals; undefined = infinite, and infinity absorbs.
Expr add_end(const Expr& a, const Expr& b) { return a.defined() && b.defined() ? make_binary(BinOp::kAdd, a, b) : Expr(); }
Expr sub_end(const Expr& a, const Expr& b) { return a.defined() && b.defined() ? make_binary(BinOp::kSub, a, b) : Expr(); }
Expr neg_end(const Expr& a) { return a.defined() ? make_unary(UnOp::kNeg, a) : Expr(); }
Expr bin_end(BinOp op, const Expr& a, const Expr& b) { return a.defined() && b.defined() ? make_binary(op, a, b) : Expr(); }

// The innermost variables among `present`: those no other present variable's range mentions.
template <typename RangeOf>
std::vector<const VarNode*> innermost(const std::vector<const VarNode*>& present, RangeOf range_vars) {
  std::vector<const VarNode*> out;
  for (const VarNode* v : present) {
    bool referenced = false;
    for (const VarNode* w : present) {
      if (w == v) continue;
      for (const VarNode* u : range_vars(w)) referenced = referenced || u == v;
    }
    if (!referenced) out.push_back(v);
  }
  return out.empty() ? present : out;  // a cycle cannot happen in valid IR; relax all then
}

}  // namespace

IntervalSet AnalyzerImpl::eval_interval(const Expr& e, const Domain& dom) {
  if (!uses_any(e, dom)) return IntervalSet::point(e);
  DataType t = e.dtype();
  switch (e.kind()) {
    case ExprKind::kVar: return dom.at(e.as<VarNode>());
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      if (t.is_float() || t.lanes != 1) return IntervalSet::everything();
      IntervalSet a = eval_interval(n->a, dom), b = eval_interval(n->b, dom);
      switch (n->op) {
        case BinOp::kAdd: return {add_end(a.min, b.min), add_end(a.max, b.max)};
        case BinOp::kSub: return {sub_end(a.min, b.max), sub_end(a.max, b.min)};
        case BinOp::kMul: {
          // x * p where p is a fixed value of known sign (a constant or a variable not swept).
          auto scaled = [&](const IntervalSet& x, const Expr& p) -> IntervalSet {
            ConstIntBound bp = bound(p);
            if (bp.min_value >= 0) return {bin_end(BinOp::kMul, x.min, p), bin_end(BinOp::kMul, x.max, p)};
            if (bp.max_value <= 0) return {bin_end(BinOp::kMul, x.max, p), bin_end(BinOp::kMul, x.min, p)};
            return IntervalSet::everything();
          };
          if (b.is_point()) return scaled(a, b.min);
          if (a.is_point()) return scaled(b, a.min);
          if (a.has_lower() && b.has_lower() && bound(a.min).min_value >= 0 && bound(b.min).min_value >= 0)
            return {make_binary(BinOp::kMul, a.min, b.min), bin_end(BinOp::kMul, a.max, b.max)};
          return IntervalSet::everything();
        }
        case BinOp::kDiv:
        case BinOp::kFloorDiv: {
          // Both roundings are monotone non-decreasing in the numerator for a positive divisor.
          if (!b.is_point() || bound(b.min).min_value <= 0) return IntervalSet::everything();
          return {bin_end(n->op, a.min, b.min), bin_end(n->op, a.max, b.min)};
        }
        case BinOp::kMod:
        case BinOp::kFloorMod: {
          if (!b.is_point()) return IntervalSet::everything();
          ConstIntBound bb = bound(b.min);
          if (bb.min_value <= 0) return IntervalSet::everything();
          bool nonneg = a.has_lower() && bound(a.min).min_value >= 0;
          if (n->op == BinOp::kMod && !nonneg) {
            Expr m = make_binary(BinOp::kSub, b.min, make_int(1, t));
            return {make_unary(UnOp::kNeg, m), m};
          }
          if (a.is_bounded()) {
            // Within one period the modulo is the identity shifted: x - q*c is monotone.
            Expr q0 = simplify(make_binary(BinOp::kFloorDiv, a.min, b.min));
            Expr q1 = simplify(make_binary(BinOp::kFloorDiv, a.max, b.min));
            if (expr_equal(q0, q1))
              return {make_binary(BinOp::kFloorMod, a.min, b.min), make_binary(BinOp::kFloorMod, a.max, b.min)};
          }
          return {make_int(0, t), make_binary(BinOp::kSub, b.min, make_int(1, t))};
        }
        case BinOp::kMin:
          return {bin_end(BinOp::kMin, a.min, b.min),
                  !a.max.defined() ? b.max : (!b.max.defined() ? a.max : make_binary(BinOp::kMin, a.max, b.max))};
        case BinOp::kMax:
          return {!a.min.defined() ? b.min : (!b.min.defined() ? a.min : make_binary(BinOp::kMax, a.min, b.min)),
                  bin_end(BinOp::kMax, a.max, b.max)};
        default: return IntervalSet::everything();
      }
    }
    case ExprKind::kUnary: {
      auto* n = e.as<UnaryNode>();
      if (n->op != UnOp::kNeg || t.is_float()) return IntervalSet::everything();
      IntervalSet a = eval_interval(n->a, dom);
      return {neg_end(a.max), neg_end(a.min)};
    }
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      if (t.is_float()) return IntervalSet::everything();
      IntervalSet a = eval_interval(n->true_value, dom), b = eval_interval(n->false_value, dom);
      return {bin_end(BinOp::kMin, a.min, b.min), bin_end(BinOp::kMax, a.max, b.max)};
    }
    case ExprKind::kCast: {
      const Expr& v = e.as<CastNode>()->value;
      DataType from = v.dtype();
      // Integer widening keeps order and value.
      bool widening = from.is_integer() && t.is_integer() && from.is_int() == t.is_int() && t.bits >= from.bits;
      if (!widening) return IntervalSet::everything();
      IntervalSet a = eval_interval(v, dom);
      return {a.min.defined() ? make_cast(t, a.min) : Expr(), a.max.defined() ? make_cast(t, a.max) : Expr()};
    }
    default: return IntervalSet::everything();
  }
}

IntervalSet AnalyzerImpl::relax(const Expr& e, const RelaxMap& relax_map) {
  if (!e.defined()) return IntervalSet::everything();
  std::unordered_map<const VarNode*, const Range*> ranges;
  for (auto& [v, r] : relax_map) ranges[v.get()] = &r;
  auto range_vars = [&](const VarNode* w) {
    const Range* r = ranges.at(w);
    std::vector<const VarNode*> out = vars_of(r->min);
    for (const VarNode* u : vars_of(r->extent)) out.push_back(u);
    return out;
  };
  Expr lo = simplify(e), hi = lo;
  for (size_t stage = 0; stage <= relax_map.size(); ++stage) {
    std::vector<const VarNode*> present;
    std::set<const VarNode*> seen;
    if (lo.defined()) collect_vars(lo, &present, &seen);
    if (hi.defined()) collect_vars(hi, &present, &seen);
    present.erase(std::remove_if(present.begin(), present.end(), [&](const VarNode* v) { return !ranges.count(v); }),
                  present.end());
    if (present.empty()) break;
    Domain dom;
    for (const VarNode* v : innermost(present, range_vars)) {
      const Range* r = ranges.at(v);
      Expr last = make_binary(BinOp::kSub, make_binary(BinOp::kAdd, r->min, r->extent), make_int(1, r->min.dtype()));
      dom[v] = IntervalSet(r->min, last);
    }
    if (lo.defined()) {
      Expr m = eval_interval(lo, dom).min;
      lo = m.defined() ? simplify(m) : Expr();
    }
    if (hi.defined()) {
      Expr m = eval_interval(hi, dom).max;
      hi = m.defined() ? simplify(m) : Expr();
    }
  }
  return {lo, hi};
}

bool AnalyzerImpl::prove_le0_symbolic(const LinearForm& d) {
  if (symbolic_depth_ > 0) return false;
  auto symbolic_vars = [&](const Expr& e) {
    std::vector<const VarNode*> out;
    for (const VarNode* v : vars_of(e)) {
      const VarInfo* info = find_var(v);
      if (info && info->symbolic && info->kind != VarInfo::Kind::kBound) out.push_back(v);
    }
    return out;
  };
  Expr cur = to_expr(d);
  if (symbolic_vars(cur).empty()) return false;
  ++symbolic_depth_;
  struct Restore {
    int& depth;
    ~Restore() { --depth; }
  } restore{symbolic_depth_};
  auto range_vars = [&](const VarNode* w) {
    const VarInfo* info = find_var(w);
    if (info->kind == VarInfo::Kind::kValue) return vars_of(info->value);
    std::vector<const VarNode*> out = vars_of(info->range.min);
    for (const VarNode* u : vars_of(info->range.extent)) out.push_back(u);
    return out;
  };
  constexpr int kMaxStages = 4;
  for (int stage = 0; stage < kMaxStages; ++stage) {
    std::vector<const VarNode*> present = symbolic_vars(cur);
    if (present.empty()) return false;
    Domain dom;
    for (const VarNode* v : innermost(present, range_vars)) {
      const VarInfo* info = find_var(v);
      if (info->kind == VarInfo::Kind::kValue) {
        dom[v] = IntervalSet::point(info->value);
      } else {
        const Range& r = info->range;
        dom[v] = IntervalSet(r.min, make_binary(BinOp::kSub, make_binary(BinOp::kAdd, r.min, r.extent),
                                                make_int(1, r.min.dtype())));
      }
    }
    Expr hi = eval_interval(cur, dom).max;
    if (!hi.defined()) return false;
    cur = simplify(hi);
    if (bound(cur).max_value <= 0) return true;
  }
  return false;
}

}  // namespace tl
