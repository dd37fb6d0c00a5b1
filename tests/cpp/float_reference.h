// Reference rounding for the 16/8-bit float formats, built by enumeration (independent of
// tl/common/float_formats.h): the value of every code of a sign-magnitude format, and round to
// nearest even as "the nearest finite code, ties to the even one; beyond max + half an ulp, overflow".
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace tl::test {

// Value of a sign-magnitude float code with `man` mantissa bits and exponent bias `bias`
// (no special cases: callers skip inf/NaN codes).
inline double decode(uint32_t code, int exp_bits, int man, int bias) {
  uint32_t sign = code >> (exp_bits + man);
  uint32_t e = (code >> man) & ((1u << exp_bits) - 1);
  uint32_t m = code & ((1u << man) - 1);
  double v = e == 0 ? std::ldexp(double(m), 1 - bias - man) : std::ldexp(double(m + (1u << man)), int(e) - bias - man);
  return sign ? -v : v;
}

struct Format {
  int exp_bits, man, bias;
  uint32_t max_finite_code;  // largest positive finite code
  double overflow_value;     // what values beyond the rounding range give (inf or NaN)
};

// Round-to-nearest-even by enumeration: nearest finite code, ties to the even code; beyond
// max + half an ulp, overflow.
inline double reference_round(double x, const Format& f) {
  if (std::isnan(x)) return NAN;
  double ax = std::abs(x);
  double maxv = decode(f.max_finite_code, f.exp_bits, f.man, f.bias);
  double ulp = maxv - decode(f.max_finite_code - 1, f.exp_bits, f.man, f.bias);
  double limit = maxv + ulp / 2;
  bool max_even = (f.max_finite_code & 1) == 0;
  if (ax > limit || (ax == limit && !max_even)) return x > 0 ? f.overflow_value : -f.overflow_value;
  // Positive finite codes are ordered like their values: binary search for the neighbours.
  uint32_t lo = 0, hi = f.max_finite_code;
  while (lo < hi) {
    uint32_t mid = (lo + hi + 1) / 2;
    if (decode(mid, f.exp_bits, f.man, f.bias) <= ax) lo = mid;
    else hi = mid - 1;
  }
  uint32_t best = lo;
  if (lo < f.max_finite_code) {
    double below = ax - decode(lo, f.exp_bits, f.man, f.bias);
    double above = decode(lo + 1, f.exp_bits, f.man, f.bias) - ax;
    if (above < below || (above == below && ((lo + 1) & 1) == 0)) best = lo + 1;
  }
  double v = decode(best, f.exp_bits, f.man, f.bias);
  return x < 0 ? -v : v;
}

inline std::vector<float> sample_floats(uint32_t seed, int lo_exp, int hi_exp) {
  std::mt19937 g(seed);
  std::vector<float> out;
  for (int i = 0; i < 4000; ++i) {
    uint32_t bits = g();
    uint32_t e = lo_exp + g() % (hi_exp - lo_exp + 1);
    bits = (bits & 0x807fffffu) | (e << 23);
    float f;
    std::memcpy(&f, &bits, 4);
    out.push_back(f);
  }
  return out;
}

inline bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

}  // namespace tl::test
