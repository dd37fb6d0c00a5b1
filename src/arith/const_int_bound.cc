#include "arith/const_int_bound.h"
#include "ir/int_arith.h"

#include <algorithm>
#include <initializer_list>

namespace tl {

namespace {

using i128 = __int128;
constexpr int64_t kPos = ConstIntBound::kPosInf;
constexpr int64_t kNeg = ConstIntBound::kNegInf;

bool is_inf(int64_t v) { return v == kPos || v == kNeg; }
int sign(int64_t v) { return v > 0 ? 1 : (v < 0 ? -1 : 0); }

int64_t clamp128(i128 v) {
  if (v >= static_cast<i128>(kPos)) return kPos;
  if (v <= static_cast<i128>(kNeg)) return kNeg;
  return static_cast<int64_t>(v);
}

// Division of two corner values; `y` is never 0. Infinite operands give the limit value.
int64_t div_corner(int64_t x, int64_t y, bool floor) {
  if (is_inf(x)) return sign(x) * sign(y) > 0 ? kPos : kNeg;
  if (is_inf(y)) {
    if (x == 0 || !floor || sign(x) == sign(y)) return 0;
    return -1;
  }
  i128 a = x, b = y;
  i128 q = floor ? floordiv_int(a, b) : a / b;
  return clamp128(q);
}

ConstIntBound hull(std::initializer_list<int64_t> values) {
  return {std::min(values), std::max(values)};
}

ConstIntBound div_part(const ConstIntBound& a, const ConstIntBound& b, bool floor) {
  return hull({div_corner(a.min_value, b.min_value, floor), div_corner(a.min_value, b.max_value, floor),
               div_corner(a.max_value, b.min_value, floor), div_corner(a.max_value, b.max_value, floor)});
}

// Splits b into its strictly negative and strictly positive parts (division by zero is
// undefined, so 0 contributes nothing) and unions the corner hulls.
ConstIntBound div_bound(const ConstIntBound& a, const ConstIntBound& b, bool floor) {
  bool has = false;
  ConstIntBound out;
  if (b.min_value < 0) {
    out = div_part(a, {b.min_value, std::min<int64_t>(b.max_value, -1)}, floor);
    has = true;
  }
  if (b.max_value > 0) {
    ConstIntBound p = div_part(a, {std::max<int64_t>(b.min_value, 1), b.max_value}, floor);
    out = has ? bound_union(out, p) : p;
    has = true;
  }
  return has ? out : ConstIntBound::everything();
}

}  // namespace

ConstIntBound ConstIntBound::of_dtype(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (!t.is_integer() || t.bits >= 64) return t.is_uint() ? ConstIntBound(0, kPosInf) : everything();
  if (t.is_uint()) return {0, static_cast<int64_t>((uint64_t(1) << t.bits) - 1)};
  return {-(int64_t(1) << (t.bits - 1)), (int64_t(1) << (t.bits - 1)) - 1};
}

std::string ConstIntBound::str() const {
  auto s = [](int64_t v) { return v == kPosInf ? std::string("+inf") : v == kNegInf ? std::string("-inf") : std::to_string(v); };
  return "[" + s(min_value) + ", " + s(max_value) + "]";
}

int64_t sat_add(int64_t a, int64_t b) {
  if (is_inf(a)) return a;
  if (is_inf(b)) return b;
  return clamp128(static_cast<i128>(a) + b);
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (is_inf(a) || is_inf(b)) return sign(a) * sign(b) > 0 ? kPos : kNeg;
  return clamp128(static_cast<i128>(a) * b);
}

ConstIntBound bound_add(const ConstIntBound& a, const ConstIntBound& b) {
  int64_t lo = (a.min_value == kNeg || b.min_value == kNeg) ? kNeg : sat_add(a.min_value, b.min_value);
  int64_t hi = (a.max_value == kPos || b.max_value == kPos) ? kPos : sat_add(a.max_value, b.max_value);
  return {lo, hi};
}

ConstIntBound bound_neg(const ConstIntBound& a) {
  auto neg = [](int64_t v) { return v == kPos ? kNeg : (v == kNeg ? kPos : -v); };
  return {neg(a.max_value), neg(a.min_value)};
}

ConstIntBound bound_sub(const ConstIntBound& a, const ConstIntBound& b) { return bound_add(a, bound_neg(b)); }

ConstIntBound bound_mul(const ConstIntBound& a, const ConstIntBound& b) {
  return hull({sat_mul(a.min_value, b.min_value), sat_mul(a.min_value, b.max_value),
               sat_mul(a.max_value, b.min_value), sat_mul(a.max_value, b.max_value)});
}

ConstIntBound bound_scale(const ConstIntBound& a, int64_t c) { return bound_mul(a, ConstIntBound::point(c)); }

ConstIntBound bound_floordiv(const ConstIntBound& a, const ConstIntBound& b) { return div_bound(a, b, true); }
ConstIntBound bound_truncdiv(const ConstIntBound& a, const ConstIntBound& b) { return div_bound(a, b, false); }

ConstIntBound bound_floormod(const ConstIntBound& a, const ConstIntBound& b) {
  if (b.is_point() && b.min_value > 0 && a.has_lower() && a.has_upper()) {
    int64_t c = b.min_value;
    int64_t qa = div_corner(a.min_value, c, true), qb = div_corner(a.max_value, c, true);
    if (qa == qb) {  // a stays within one period: the result is a shifted copy of a
      i128 shift = static_cast<i128>(qa) * c;
      return {clamp128(a.min_value - shift), clamp128(a.max_value - shift)};
    }
  }
  if (b.min_value > 0) {
    int64_t hi = b.max_value == kPos ? kPos : b.max_value - 1;
    if (a.min_value >= 0) hi = std::min(hi, a.max_value);
    return {0, hi};
  }
  if (b.max_value < 0) {
    int64_t lo = b.min_value == kNeg ? kNeg : b.min_value + 1;
    if (a.max_value <= 0) lo = std::max(lo, a.min_value);
    return {lo, 0};
  }
  // b spans both signs: |result| < max |b|.
  int64_t m = std::max(bound_neg({b.min_value, b.min_value}).min_value, b.max_value);
  int64_t r = m == kPos ? kPos : m - 1;
  return {r == kPos ? kNeg : -r, r};
}

ConstIntBound bound_truncmod(const ConstIntBound& a, const ConstIntBound& b) {
  // |result| < max |b| and the result has the sign of a.
  int64_t m = std::max(bound_neg({b.min_value, b.min_value}).min_value, b.max_value);
  if (m <= 0) return ConstIntBound::everything();  // b is exactly 0: undefined
  int64_t r = m == kPos ? kPos : m - 1;
  if (a.min_value >= 0) {
    if (a.max_value <= r && b.min_value > 0 && b.min_value > a.max_value) return a;
    return {0, std::min(r, a.max_value)};
  }
  if (a.max_value <= 0) return {std::max(r == kPos ? kNeg : -r, a.min_value), 0};
  return {r == kPos ? kNeg : -r, r};
}

ConstIntBound bound_min(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}
ConstIntBound bound_max(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}
ConstIntBound bound_union(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::min(a.min_value, b.min_value), std::max(a.max_value, b.max_value)};
}
ConstIntBound bound_intersect(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.min_value, b.min_value), std::min(a.max_value, b.max_value)};
}

}  // namespace tl
