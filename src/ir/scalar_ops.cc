#include "ir/scalar_ops.h"

#include "tl/common/float_formats.h"

namespace tl {

double round_float(double v, DataType t) {
  // The project's one implementation of the small float formats (tl/common/float_formats.h): a
  // double goes to float rounding to odd, then to the format, which rounds once as a whole.
  using namespace ff;
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) return static_cast<float>(v);
      if (t.bits == 16) return half_bits_to_float(float_to_half_bits(double_to_float_round_odd(v)));
      return v;  // float64
    case DataType::kBFloat: return bfloat16_bits_to_float(float_to_bfloat16_bits(double_to_float_round_odd(v)));
    case DataType::kFloat8E4M3:
      return fp8_bits_to_float<4, 3, 7, false>(float_to_fp8_bits<4, 3, 7, false>(double_to_float_round_odd(v)));
    case DataType::kFloat8E5M2:
      return fp8_bits_to_float<5, 2, 15, true>(float_to_fp8_bits<5, 2, 15, true>(double_to_float_round_odd(v)));
    case DataType::kFloat8E8M0: return e8m0_bits_to_float(float_to_e8m0_bits(static_cast<float>(v)));  // through float, as ml_dtypes
    case DataType::kFloat4E2M1: return e2m1_bits_to_float(float_to_e2m1_bits(static_cast<float>(v)));  // through float, as ml_dtypes
    default: return v;
  }
}

double round_float_via_f32(double v, DataType t) {
  if (!t.is_float()) return v;
  if (t.code == DataType::kFloat && t.bits == 64) return v;
  return round_float(static_cast<double>(static_cast<float>(v)), t);
}

namespace scalar {

const char* status_message(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kDivByZero: return "integer division by zero";
    case Status::kBadShift: return "shift count out of range";
    case Status::kBadType: return "operator not defined on this type";
    case Status::kBadCast: return "float value does not fit the integer type";
  }
  return "?";
}

bool math_call(const std::string& f, const double* a, size_t n, double* out) {
  if (n == 1) {
    double x = a[0];
    if (f == "exp" || f == "__exp") *out = std::exp(x);
    else if (f == "exp2") *out = std::exp2(x);
    else if (f == "log" || f == "__log") *out = std::log(x);
    else if (f == "log2") *out = std::log2(x);
    else if (f == "sqrt" || f == "ieee_fsqrt") *out = std::sqrt(x);
    else if (f == "rsqrt") *out = 1.0 / std::sqrt(x);
    else if (f == "tanh") *out = std::tanh(x);
    else if (f == "sigmoid") *out = 1.0 / (1.0 + std::exp(-x));
    else if (f == "abs") *out = std::fabs(x);
    else if (f == "floor") *out = std::floor(x);
    else if (f == "ceil") *out = std::ceil(x);
    else if (f == "trunc") *out = std::trunc(x);
    else if (f == "round") *out = std::nearbyint(x);
    else if (f == "sin" || f == "__sin") *out = std::sin(x);
    else if (f == "cos" || f == "__cos") *out = std::cos(x);
    else return false;
    return true;
  }
  if (n == 2) {
    if (f == "pow") *out = std::pow(a[0], a[1]);
    else if (f == "ieee_add") *out = a[0] + a[1];
    else if (f == "ieee_mul") *out = a[0] * a[1];
    else if (f == "ieee_fdiv") *out = a[0] / a[1];
    else return false;
    return true;
  }
  if (n == 3 && f == "ieee_fmaf") return (*out = std::fma(a[0], a[1], a[2]), true);
  return false;
}

}  // namespace scalar
}  // namespace tl
