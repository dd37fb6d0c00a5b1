// Symbolic intervals: an inclusive [min, max] pair of expressions, either side possibly unbounded.
// Analyzer::interval_of computes one for an expression when some variables sweep their ranges
// (this is how regions are relaxed over loop variables with symbolic extents).
#pragma once

#include <map>

#include "ir/buffer.h"

namespace tl {

struct IntervalSet {
  Expr min;  // undefined: -inf
  Expr max;  // undefined: +inf

  IntervalSet() = default;
  IntervalSet(Expr lo, Expr hi) : min(std::move(lo)), max(std::move(hi)) {}
  static IntervalSet everything() { return {}; }
  static IntervalSet point(const Expr& e) { return {e, e}; }

  bool has_lower() const { return min.defined(); }
  bool has_upper() const { return max.defined(); }
  bool is_bounded() const { return has_lower() && has_upper(); }
  // Both ends are the same expression object (not a proof of equality of distinct objects).
  bool is_point() const { return is_bounded() && min.same_as(max); }
  std::string str() const;  // "[i * 8, i * 8 + 7]", "[0, +inf]"
};

// Variables that sweep a range while an interval is computed: v in [range.min, range.min + extent).
using RelaxMap = std::map<Var, Range, VarLess>;

}  // namespace tl
