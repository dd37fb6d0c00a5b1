#include "arith/expr_order.h"

#include <cstring>
#include <set>

namespace tl {

bool is_pure_call(const std::string& op) {
  static const std::set<std::string> pure = {
      "exp",   "exp2", "log",   "log2",  "sqrt",  "rsqrt", "tanh",  "sigmoid", "abs",   "pow",
      "floor", "ceil", "sin",   "cos",   "round", "trunc", "__exp", "__log",   "__sin", "__cos",
  };
  return pure.count(op) > 0;
}

bool is_pure_expr(const Expr& e) {
  if (!e.defined()) return true;
  switch (e.kind()) {
    case ExprKind::kBinary: {
      auto* n = e.as<BinaryNode>();
      return is_pure_expr(n->a) && is_pure_expr(n->b);
    }
    case ExprKind::kUnary: return is_pure_expr(e.as<UnaryNode>()->a);
    case ExprKind::kSelect: {
      auto* n = e.as<SelectNode>();
      return is_pure_expr(n->cond) && is_pure_expr(n->true_value) && is_pure_expr(n->false_value);
    }
    case ExprKind::kCast: return is_pure_expr(e.as<CastNode>()->value);
    case ExprKind::kBufferLoad:
      for (auto& i : e.as<BufferLoadNode>()->indices)
        if (!is_pure_expr(i)) return false;
      return true;
    case ExprKind::kCall: {
      auto* n = e.as<CallNode>();
      if (!is_pure_call(n->op)) return false;
      for (auto& a : n->args)
        if (!is_pure_expr(a)) return false;
      return true;
    }
    case ExprKind::kRamp: return is_pure_expr(e.as<RampNode>()->base) && is_pure_expr(e.as<RampNode>()->stride);
    case ExprKind::kBroadcast: return is_pure_expr(e.as<BroadcastNode>()->value);
    default: return true;
  }
}

static bool list_equal(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!expr_equal(a[i], b[i])) return false;
  return true;
}

bool expr_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case ExprKind::kIntImm: return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    case ExprKind::kStringImm: return a.as<StringImmNode>()->value == b.as<StringImmNode>()->value;
    case ExprKind::kVar: return false;  // identity only, checked above
    case ExprKind::kBinary: {
      auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      return x->op == y->op && expr_equal(x->a, y->a) && expr_equal(x->b, y->b);
    }
    case ExprKind::kUnary: {
      auto *x = a.as<UnaryNode>(), *y = b.as<UnaryNode>();
      return x->op == y->op && expr_equal(x->a, y->a);
    }
    case ExprKind::kSelect: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return expr_equal(x->cond, y->cond) && expr_equal(x->true_value, y->true_value) &&
             expr_equal(x->false_value, y->false_value);
    }
    case ExprKind::kCast: return expr_equal(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kBufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      return x->buffer.same_as(y->buffer) && list_equal(x->indices, y->indices);
    }
    case ExprKind::kCall: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->op == y->op && is_pure_call(x->op) && list_equal(x->args, y->args);
    }
    case ExprKind::kRamp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return x->lanes == y->lanes && expr_equal(x->base, y->base) && expr_equal(x->stride, y->stride);
    }
    case ExprKind::kBroadcast: {
      auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      return x->lanes == y->lanes && expr_equal(x->value, y->value);
    }
  }
  return false;
}

namespace {
template <typename T>
int cmp3(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}
}  // namespace



uint64_t ExprOrder::seq_of(const Expr& e) {
  auto it = expr_seq_.find(e.get());
  if (it != expr_seq_.end()) return it->second.second;
  expr_seq_.emplace(e.get(), std::make_pair(e, next_seq_));
  return next_seq_++;
}

uint64_t ExprOrder::seq_of(const Buffer& b) {
  auto it = buffer_seq_.find(b.get());
  if (it != buffer_seq_.end()) return it->second.second;
  buffer_seq_.emplace(b.get(), std::make_pair(b, next_seq_));
  return next_seq_++;
}

int ExprOrder::compare_buffers(const Buffer& a, const Buffer& b) {
  if (a.same_as(b)) return 0;
  if (int c = a.name().compare(b.name())) return c < 0 ? -1 : 1;
  uint64_t sa = seq_of(a);
  uint64_t sb = seq_of(b);
  return cmp3(sa, sb);
}

int ExprOrder::compare(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  if (a.kind() != b.kind()) return cmp3(static_cast<int>(a.kind()), static_cast<int>(b.kind()));
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta != tb) {
    if (int c = cmp3(static_cast<int>(ta.code), static_cast<int>(tb.code))) return c;
    if (int c = cmp3(ta.bits, tb.bits)) return c;
    return cmp3(ta.lanes, tb.lanes);
  }
  auto list = [&](const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size()) return cmp3(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i)
      if (int c = compare(x[i], y[i])) return c;
    return 0;
  };
  switch (a.kind()) {
    case ExprKind::kIntImm: return cmp3(a.as<IntImmNode>()->value, b.as<IntImmNode>()->value);
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      uint64_t ux, uy;
      std::memcpy(&ux, &x, sizeof x);
      std::memcpy(&uy, &y, sizeof y);
      return cmp3(ux, uy);
    }
    case ExprKind::kStringImm: return cmp3(a.as<StringImmNode>()->value, b.as<StringImmNode>()->value);
    case ExprKind::kVar: {
      if (int c = a.as<VarNode>()->name.compare(b.as<VarNode>()->name)) return c < 0 ? -1 : 1;
      uint64_t sa = seq_of(a);
      uint64_t sb = seq_of(b);
      return cmp3(sa, sb);
    }
    case ExprKind::kBinary: {
      auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
      if (x->op != y->op) return cmp3(static_cast<int>(x->op), static_cast<int>(y->op));
      if (int c = compare(x->a, y->a)) return c;
      return compare(x->b, y->b);
    }
    case ExprKind::kUnary: {
      auto *x = a.as<UnaryNode>(), *y = b.as<UnaryNode>();
      if (x->op != y->op) return cmp3(static_cast<int>(x->op), static_cast<int>(y->op));
      return compare(x->a, y->a);
    }
    case ExprKind::kSelect: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      if (int c = compare(x->cond, y->cond)) return c;
      if (int c = compare(x->true_value, y->true_value)) return c;
      return compare(x->false_value, y->false_value);
    }
    case ExprKind::kCast: return compare(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case ExprKind::kBufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      if (int c = compare_buffers(x->buffer, y->buffer)) return c;
      return list(x->indices, y->indices);
    }
    case ExprKind::kCall: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      if (int c = x->op.compare(y->op)) return c < 0 ? -1 : 1;
      if (int c = list(x->args, y->args)) return c;
      if (is_pure_call(x->op)) return 0;
      uint64_t sa = seq_of(a);  // two evaluations of an impure call are never merged
      uint64_t sb = seq_of(b);
      return cmp3(sa, sb);
    }
    case ExprKind::kRamp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      if (x->lanes != y->lanes) return cmp3(x->lanes, y->lanes);
      if (int c = compare(x->base, y->base)) return c;
      return compare(x->stride, y->stride);
    }
    case ExprKind::kBroadcast: {
      auto *x = a.as<BroadcastNode>(), *y = b.as<BroadcastNode>();
      if (x->lanes != y->lanes) return cmp3(x->lanes, y->lanes);
      return compare(x->value, y->value);
    }
  }
  return 0;
}

}  // namespace tl
