// Integer division and remainder rounding toward -infinity (Python's // and %; the IR's kFloorDiv and
// kFloorMod): the one definition every evaluator, bound and rewrite rule of the compiler uses
// (ir/eval.h gives the meaning of the IR through it). The divisor must not be zero; callers check.
// Emitted code has its own copies in include/tl/{cpu,cuda} (the kernels cannot include this).
#pragma once

namespace tl {

// floor(a / b) for integers of any width (int64_t, __int128): C's truncating quotient, one less
// when the remainder is non-zero and the operands' signs differ.
template <class T>
constexpr T floordiv_int(T a, T b) {
  T q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// a - b * floor(a / b): has the divisor's sign (or is 0). Computed from C's remainder, so it never
// overflows where a / b does not.
template <class T>
constexpr T floormod_int(T a, T b) {
  T r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

}  // namespace tl
