#include "target/cpu/loop_index.h"

#include <map>

#include "arith/analyzer.h"
#include "ir/functor.h"

namespace tl {

std::optional<Expr> unit_stride_start(const Expr& idx, const ForNode* n) {
  std::map<Var, Expr, VarLess> at_min = {{n->var, make_cast(n->var.dtype(), n->min)}};
  std::map<Var, Expr, VarLess> at_zero = {{n->var, make_int(0, n->var.dtype())}};
  Analyzer an;
  Expr step = an.simplify(idx - substitute(idx, at_zero));
  if (auto* c = step.as<CastNode>(); c && c->dtype.is_integer() && c->value.dtype().is_integer() &&
                                     c->dtype.bits >= c->value.dtype().bits)
    step = c->value;  // a widened loop variable (an int64 index of a dynamic shape): the same values
  auto* v = step.as<VarNode>();
  if (v == nullptr || v != n->var.get()) return std::nullopt;
  return an.simplify(substitute(idx, at_min));
}

}  // namespace tl
