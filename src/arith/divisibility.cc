// Divisibility proofs of the arithmetic layer (arith/analyzer.h, provably_divisible).
#include <numeric>

#include "arith/analyzer.h"

namespace tl {

bool provably_divisible(const Expr& e, int64_t n) {
  if (n <= 1) return true;
  if (const auto* i = e.as<IntImmNode>()) return i->value % n == 0;
  if (const auto* c = e.as<CastNode>()) return c->dtype.is_integer() && provably_divisible(c->value, n);
  const auto* b = e.as<BinaryNode>();
  if (!b) return false;
  switch (b->op) {
    case BinOp::kAdd:
    case BinOp::kSub:
    case BinOp::kMin:
    case BinOp::kMax: return provably_divisible(b->a, n) && provably_divisible(b->b, n);
    case BinOp::kMul: {
      int64_t c = 0;
      if (is_const_int(b->a, &c) && c != 0 && n % std::gcd(c, n) == 0 && provably_divisible(b->b, n / std::gcd(c, n)))
        return true;
      if (is_const_int(b->b, &c) && c != 0 && n % std::gcd(c, n) == 0 && provably_divisible(b->a, n / std::gcd(c, n)))
        return true;
      return provably_divisible(b->a, n) || provably_divisible(b->b, n);
    }
    case BinOp::kShl: {
      int64_t s = 0;
      if (is_const_int(b->b, &s) && s >= 0 && s < 62) {
        int64_t f = int64_t(1) << s;
        return f % n == 0 || provably_divisible(b->a, n / std::gcd(f, n));
      }
      return false;
    }
    default: return false;
  }
}

}  // namespace tl
