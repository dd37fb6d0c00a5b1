#include "target/cuda/emulator_values.h"

#include <cmath>
#include <cstring>

#include "ir/error.h"
#include "ir/scalar_ops.h"
#include "tl/common/float_formats.h"

namespace tl::cuda_emu {

// ---- number formats ---------------------------------------------------------------------------
// The conversions are the project's one implementation (tl/common/float_formats.h). A result is
// rounded to float first and then to the 16-bit format, as the device computes in float registers.
double fp8_to_double(DataType t, uint8_t b) {
  if (t.code == DataType::kFloat4E2M1) return ff::e2m1_bits_to_float(b);
  if (t.code == DataType::kFloat8E8M0) return ff::e8m0_bits_to_float(b);
  if (t.code == DataType::kFloat8E4M3) return ff::fp8_bits_to_float<4, 3, 7, false>(b);
  return ff::fp8_bits_to_float<5, 2, 15, true>(b);
}

uint8_t double_to_fp8(DataType t, double v) {
  // Round to nearest even; what overflows (to NaN in e4m3fn, to inf in e5m2, infinities included)
  // saturates to the largest finite value, as PTX .satfinite does (include/tl/cuda/types.h); NaN
  // stays NaN (0x7f).
  if (t.code == DataType::kFloat8E8M0) return ff::float_to_e8m0_bits(static_cast<float>(v));
  if (t.code == DataType::kFloat4E2M1) return ff::float_to_e2m1_bits(static_cast<float>(v));
  if (std::isnan(v)) return 0x7F;
  const float f = ff::double_to_float_round_odd(v);
  const bool e4m3 = t.code == DataType::kFloat8E4M3;
  const uint8_t code = e4m3 ? ff::float_to_fp8_bits<4, 3, 7, false>(f) : ff::float_to_fp8_bits<5, 2, 15, true>(f);
  const uint8_t overflow = e4m3 ? 0x7F : 0x7C, max_finite = e4m3 ? 0x7E : 0x7B;
  if ((code & 0x7F) == overflow) return static_cast<uint8_t>((code & 0x80) | max_finite);
  return code;
}

double round_to(DataType t, double v) {
  // fp8 conversions saturate on the device (__NV_SATFINITE); the others: ir/scalar_ops.h.
  if (t.is_fp8()) return fp8_to_double(t, double_to_fp8(t, v));
  return tl::round_float_via_f32(v, t);
}

int64_t wrap_int(DataType t, int64_t v) { return tl::wrap_int(v, t); }

// ---- memory ---------------------------------------------------------------------------------------
Val decode(DataType t, const uint8_t* p) {
  Val v;
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) v.f = ff::bits_float(*reinterpret_cast<const uint32_t*>(p));
      else if (t.bits == 64) std::memcpy(&v.f, p, 8);
      else v.f = ff::half_bits_to_float(*reinterpret_cast<const uint16_t*>(p));
      break;
    case DataType::kBFloat: v.f = ff::bfloat16_bits_to_float(*reinterpret_cast<const uint16_t*>(p)); break;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1: v.f = fp8_to_double(t, *p); break;
    case DataType::kBool: v.i = *p != 0; break;
    case DataType::kInt:
    case DataType::kUInt: {
      int64_t x = 0;
      std::memcpy(&x, p, static_cast<size_t>(t.bits / 8));
      v.i = wrap_int(t, x);
      break;
    }
    default: throw_error<NotImplemented>("not implemented: emulating ", t.str(), " memory");
  }
  return v;
}

void encode(DataType t, const Val& v, uint8_t* p) {
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) {
        float f = static_cast<float>(v.f);
        std::memcpy(p, &f, 4);
      } else if (t.bits == 64) {
        std::memcpy(p, &v.f, 8);
      } else {
        uint16_t h = ff::float_to_half_bits(static_cast<float>(v.f));
        std::memcpy(p, &h, 2);
      }
      break;
    case DataType::kBFloat: {
      uint16_t h = ff::float_to_bfloat16_bits(static_cast<float>(v.f));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::kBool: *p = v.i != 0; break;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E8M0:
    case DataType::kFloat4E2M1: *p = double_to_fp8(t, v.f); break;
    case DataType::kInt:
    case DataType::kUInt: std::memcpy(p, &v.i, static_cast<size_t>(t.bits / 8)); break;
    default: throw_error<NotImplemented>("not implemented: emulating ", t.str(), " memory");
  }
}

}  // namespace tl::cuda_emu
