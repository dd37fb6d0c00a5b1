// The scalar semantics of the IR's operators: the one definition of what each binary and unary
// operator, cast and math builtin computes on one value. Every evaluator of the compiler calls it:
// the reference evaluator and the int64 index evaluator (ir/eval.h, one tree walker), the Ascend
// simulator's compiled scalar programs (sim/engine_eval.cc) and the cuda emulator's per-thread
// execution (target/cuda/emulator_interpreter.cc). Emitted kernels carry their own copies in
// include/tl/{cpu,cuda} (they cannot include this).
//
// Carriers: an integer value of type t lives in an int64_t already wrapped to t (two's complement;
// uint64 values above INT64_MAX as their bit pattern; bool as 0/1); a float lives in a double,
// rounded to its type by the caller with round_float after each operation.
//
// Each operation returns a Status instead of throwing, so that every caller chooses its policy
// (the reference evaluator throws ValueError, the simulator and emulator RuntimeError, the index
// evaluator reports "unknown"); `out` is written only when the status is kOk (for casts, also on
// kBadCast: the saturated value a GPU conversion gives).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "ir/dtype.h"
#include "ir/expr.h"
#include "ir/int_arith.h"

namespace tl {

// Wraps `v` into the value range of integer type `t` (two's complement); bool gives v != 0; other
// types (float carriers, handles) and 64-bit integers are returned unchanged.
inline int64_t wrap_int(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64 || !t.is_integer()) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && ((u >> (t.bits - 1)) & 1)) return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

// Rounds a double to the nearest value representable in float type `t` (ties to even; overflow
// gives inf, or NaN for float8_e4m3 which has no infinity); float64 and non-float types unchanged.
double round_float(double v, DataType t);
// The rounding of a device that computes in float32 registers (the cuda emulator, the Ascend
// simulator): the value goes to float32 first, then to the 16-bit / 8-bit format.
double round_float_via_f32(double v, DataType t);

namespace scalar {

enum class Status : uint8_t {
  kOk,
  kDivByZero,  // integer division or remainder by zero
  kBadShift,   // shift count negative or not below the type's width
  kBadType,    // the operator is not defined on this type (bit operations on floats, - on bool)
  kBadCast,    // a float that is NaN or outside the integer type's range (undefined in C)
};

// "integer division by zero", ... (for callers' messages).
const char* status_message(Status s);

// True for the operators whose result is a bool (comparisons, && and ||).
inline bool gives_bool(BinOp op) { return binop_is_compare(op) || binop_is_logical(op); }

// A binary operator on two integers of type `t`: the result wrapped to `t` (0/1 for comparisons
// and logical operators). uint64 compares, divides and shifts unsigned. A signed add, sub, mul,
// div that leaves t's range sets *signed_overflow (C leaves it undefined; the result wraps).
// kDiv/kMod truncate toward zero (C), kFloorDiv/kFloorMod round toward -inf (ir/int_arith.h).
inline Status int_binary(BinOp op, int64_t x, int64_t y, DataType t, int64_t* out, bool* signed_overflow = nullptr) {
  const bool u64 = t.is_uint() && t.bits >= 64;
  const bool signed_t = t.is_int();
  auto wrapped = [&](int64_t r, bool overflow64) {
    int64_t w = wrap_int(r, t);
    if (signed_t && signed_overflow && (overflow64 || w != r)) *signed_overflow = true;
    *out = w;
    return Status::kOk;
  };
  auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  switch (op) {
    case BinOp::kAdd: {
      int64_t r;
      bool o = __builtin_add_overflow(x, y, &r);
      return wrapped(r, o);
    }
    case BinOp::kSub: {
      int64_t r;
      bool o = __builtin_sub_overflow(x, y, &r);
      return wrapped(r, o);
    }
    case BinOp::kMul: {
      int64_t r;
      bool o = __builtin_mul_overflow(x, y, &r);
      return wrapped(r, o);
    }
    case BinOp::kDiv:
    case BinOp::kMod:
    case BinOp::kFloorDiv:
    case BinOp::kFloorMod: {
      if (y == 0) return Status::kDivByZero;
      const bool quotient = op == BinOp::kDiv || op == BinOp::kFloorDiv;
      if (u64) {  // unsigned: truncating and floor division agree
        *out = static_cast<int64_t>(quotient ? ux / uy : ux % uy);
        return Status::kOk;
      }
      if (x == std::numeric_limits<int64_t>::min() && y == -1) {  // the one quotient int64 cannot hold
        if (!quotient) return (*out = 0, Status::kOk);
        return wrapped(x, true);
      }
      int64_t r = op == BinOp::kDiv ? x / y : op == BinOp::kMod ? x % y
                : op == BinOp::kFloorDiv ? floordiv_int(x, y) : floormod_int(x, y);
      return wrapped(r, false);
    }
    case BinOp::kMin: *out = (u64 ? ux <= uy : x <= y) ? x : y; return Status::kOk;
    case BinOp::kMax: *out = (u64 ? ux >= uy : x >= y) ? x : y; return Status::kOk;
    case BinOp::kEQ: *out = x == y; return Status::kOk;
    case BinOp::kNE: *out = x != y; return Status::kOk;
    case BinOp::kLT: *out = u64 ? ux < uy : x < y; return Status::kOk;
    case BinOp::kLE: *out = u64 ? ux <= uy : x <= y; return Status::kOk;
    case BinOp::kGT: *out = u64 ? ux > uy : x > y; return Status::kOk;
    case BinOp::kGE: *out = u64 ? ux >= uy : x >= y; return Status::kOk;
    case BinOp::kAnd: *out = x != 0 && y != 0; return Status::kOk;
    case BinOp::kOr: *out = x != 0 || y != 0; return Status::kOk;
    case BinOp::kBitAnd: *out = wrap_int(x & y, t); return Status::kOk;
    case BinOp::kBitOr: *out = wrap_int(x | y, t); return Status::kOk;
    case BinOp::kBitXor: *out = wrap_int(x ^ y, t); return Status::kOk;
    case BinOp::kShl:
    case BinOp::kShr: {
      if ((u64 ? uy : static_cast<uint64_t>(y < 0 ? -1 : y)) >= static_cast<uint64_t>(t.bits)) return Status::kBadShift;
      int s = static_cast<int>(y);
      if (op == BinOp::kShl) *out = wrap_int(static_cast<int64_t>(ux << s), t);
      else if (signed_t) *out = x >> s;
      else *out = static_cast<int64_t>((t.bits >= 64 ? ux : ux & ((uint64_t(1) << t.bits) - 1)) >> s);
      return Status::kOk;
    }
  }
  return Status::kBadType;
}

// A binary operator on two floats, computed in double: arithmetic gives a double the caller rounds
// to the type; comparisons and && / || give 0/1 (gives_bool). min/max follow fmin/fmax (a NaN
// operand yields the other one); kFloorMod is x - y * floor(x / y). Bit operations: kBadType.
inline Status float_binary(BinOp op, double x, double y, double* out) {
  switch (op) {
    case BinOp::kAdd: *out = x + y; break;
    case BinOp::kSub: *out = x - y; break;
    case BinOp::kMul: *out = x * y; break;
    case BinOp::kDiv: *out = x / y; break;
    case BinOp::kMod: *out = std::fmod(x, y); break;
    case BinOp::kFloorDiv: *out = std::floor(x / y); break;
    case BinOp::kFloorMod: *out = x - y * std::floor(x / y); break;
    case BinOp::kMin: *out = std::fmin(x, y); break;
    case BinOp::kMax: *out = std::fmax(x, y); break;
    case BinOp::kEQ: *out = x == y; break;
    case BinOp::kNE: *out = x != y; break;
    case BinOp::kLT: *out = x < y; break;
    case BinOp::kLE: *out = x <= y; break;
    case BinOp::kGT: *out = x > y; break;
    case BinOp::kGE: *out = x >= y; break;
    case BinOp::kAnd: *out = x != 0 && y != 0; break;
    case BinOp::kOr: *out = x != 0 || y != 0; break;
    default: return Status::kBadType;
  }
  return Status::kOk;
}

// Unary operators on an integer of type `t` (result wrapped; - sets *signed_overflow like int_binary;
// ! gives 0/1; - on bool is kBadType).
inline Status int_unary(UnOp op, int64_t x, DataType t, int64_t* out, bool* signed_overflow = nullptr) {
  switch (op) {
    case UnOp::kNeg: {
      if (t.is_bool()) return Status::kBadType;
      return int_binary(BinOp::kSub, 0, x, t, out, signed_overflow);
    }
    case UnOp::kNot: *out = x == 0; return Status::kOk;
    case UnOp::kBitNot: *out = wrap_int(~x, t); return Status::kOk;
  }
  return Status::kBadType;
}

// Unary operators on a float: - negates (the caller rounds), ! gives 0/1, ~ is kBadType.
inline Status float_unary(UnOp op, double x, double* out) {
  switch (op) {
    case UnOp::kNeg: *out = -x; return Status::kOk;
    case UnOp::kNot: *out = x == 0; return Status::kOk;
    case UnOp::kBitNot: return Status::kBadType;
  }
  return Status::kBadType;
}

// The mathematical value of an integer of type `from` as a double (uint64 unsigned).
inline double int_to_double(int64_t v, DataType from) {
  if (from.is_uint() && from.bits >= 64) return static_cast<double>(static_cast<uint64_t>(v));
  return static_cast<double>(v);
}

// An integer converted to integer type `to` (wraps; to bool: != 0).
inline int64_t int_to_int(int64_t v, DataType to) { return wrap_int(v, to); }

// A float converted to integer type `to`: truncated toward zero. NaN or a value outside `to` is
// kBadCast (undefined in C); *out then holds the saturated value (NaN gives 0), which is what the
// GPU's conversion instructions produce. To bool: != 0.
inline Status float_to_int(double v, DataType to, int64_t* out) {
  if (to.is_bool()) return (*out = v != 0, Status::kOk);
  double t = std::trunc(v);
  int bits = to.bits >= 64 ? 64 : to.bits;
  // The open range a C float -> int conversion is defined on.
  double lo = to.is_uint() ? -1.0 : std::ldexp(-1.0, bits - 1) - 1.0;
  double hi = to.is_uint() ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
  if (std::isnan(v)) return (*out = 0, Status::kBadCast);
  if (!(t > lo)) {
    *out = to.is_uint() ? 0 : bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
    return Status::kBadCast;
  }
  if (!(t < hi)) {
    if (to.is_uint()) *out = bits >= 64 ? -1 : static_cast<int64_t>((uint64_t(1) << bits) - 1);
    else *out = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
    return Status::kBadCast;
  }
  if (to.is_uint() && bits == 64 && t >= std::ldexp(1.0, 63)) {
    *out = static_cast<int64_t>(static_cast<uint64_t>(t));
    return Status::kOk;
  }
  *out = wrap_int(static_cast<int64_t>(t), to);
  return Status::kOk;
}

// The math builtins on doubles (exp, __exp, exp2, log, __log, log2, sqrt, ieee_fsqrt, rsqrt, tanh,
// sigmoid, abs, floor, ceil, trunc, round (to nearest even), sin, __sin, cos, __cos with one
// argument; pow, ieee_add, ieee_mul, ieee_fdiv with two; ieee_fmaf with three). False when `name`
// with `n` arguments is not one of them. The caller rounds the result to the call's type.
bool math_call(const std::string& name, const double* args, size_t n, double* out);

}  // namespace scalar
}  // namespace tl
