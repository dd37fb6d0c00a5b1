// Constant integer bounds: an inclusive [min_value, max_value] range of int64, where INT64_MIN and
// INT64_MAX stand for -inf and +inf. All arithmetic on bounds saturates at the sentinels (no
// overflow, ever). Analyzer::const_int_bound computes one for any integer expression.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "ir/dtype.h"

namespace tl {

struct ConstIntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();

  int64_t min_value = kNegInf;
  int64_t max_value = kPosInf;

  constexpr ConstIntBound() = default;
  constexpr ConstIntBound(int64_t lo, int64_t hi) : min_value(lo), max_value(hi) {}

  static constexpr ConstIntBound everything() { return {}; }
  static constexpr ConstIntBound point(int64_t v) { return {v, v}; }
  // The value range of an integer type (bool: [0, 1]; uint64's top is +inf).
  static ConstIntBound of_dtype(DataType t);

  bool is_point() const { return min_value == max_value && min_value != kNegInf && min_value != kPosInf; }
  bool has_lower() const { return min_value != kNegInf; }
  bool has_upper() const { return max_value != kPosInf; }
  bool contains(int64_t v) const { return min_value <= v && v <= max_value; }
  bool operator==(const ConstIntBound& o) const { return min_value == o.min_value && max_value == o.max_value; }
  std::string str() const;  // "[0, 127]", "[-inf, 3]"
};

// Interval arithmetic, saturating at the sentinels. Results are exact hulls of the mathematical
// operation (no wrap-around); callers apply the dtype's rule (see Analyzer::const_int_bound).
ConstIntBound bound_add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_sub(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_mul(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_neg(const ConstIntBound& a);
// Multiplication by a constant.
ConstIntBound bound_scale(const ConstIntBound& a, int64_t c);
// Division rounding toward -inf / toward zero; `b` must not contain 0 (else: everything).
ConstIntBound bound_floordiv(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_truncdiv(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_floormod(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_truncmod(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_min(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_max(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_union(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_intersect(const ConstIntBound& a, const ConstIntBound& b);

// Saturating scalar helpers (sentinels absorb).
int64_t sat_add(int64_t a, int64_t b);
int64_t sat_mul(int64_t a, int64_t b);

}  // namespace tl
