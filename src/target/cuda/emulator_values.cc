#include "target/cuda/emulator_values.h"

#include <cmath>
#include <cstring>

#include "ir/error.h"

namespace tl::cuda_emu {

// ---- number formats ---------------------------------------------------------------------------
uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (mag >= 0x47800000u) {  // >= 65536: round may overflow; handle precisely below
    // values >= 65520 round to inf
    if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (mag < 0x33000001u) return static_cast<uint16_t>(sign);  // < 2^-25 (half of min subnormal, ties to 0)
  int exp = static_cast<int>(mag >> 23) - 127;
  uint32_t man = (mag & 0x7fffffu) | 0x800000u;
  uint32_t h;
  if (exp < -14) {  // subnormal
    int shift = -14 - exp + 13;
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    h = q;
  } else {
    uint32_t q = man >> 13, rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;
    if (q == 0x800u) {
      q = 0x400u;
      ++exp;
    }
    if (exp > 15) return static_cast<uint16_t>(sign | 0x7c00u);
    h = (static_cast<uint32_t>(exp + 15) << 10) | (q & 0x3ffu);
  }
  return static_cast<uint16_t>(sign | h);
}
float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return (sign ? -1.f : 1.f) * std::ldexp(static_cast<float>(m), -24);
  if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
  return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}
uint16_t f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}
float bf16_to_f32(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

double round_to(DataType t, double v) {
  if (t == DataType::Float32()) return static_cast<float>(v);
  if (t.is_fp8()) return fp8_to_double(t, double_to_fp8(t, v));
  if (t == DataType::Float(16)) return f16_to_f32(f32_to_f16(static_cast<float>(v)));
  if (t == DataType::BFloat16()) return bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
  return v;
}

int64_t wrap_int(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (t.bits - 1))) return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

double fp8_to_double(DataType t, uint8_t b) {
  const bool e4m3 = t.code == DataType::kFloat8E4M3;
  const int mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, emax = e4m3 ? 15 : 31;
  const int e = (b & 0x7F) >> mbits, m = b & ((1 << mbits) - 1);
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  if (e4m3 && e == emax && m == (1 << mbits) - 1) return std::nan("");
  if (!e4m3 && e == emax) return m ? std::nan("") : sign * HUGE_VAL;
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp((1 << mbits) + m, e - bias - mbits);
}

uint8_t double_to_fp8(DataType t, double v) {
  // Round to nearest even over the finite codes; saturate to the largest finite value (PTX
  // .satfinite, as include/tl/cuda/types.h); NaN stays NaN.
  const bool e4m3 = t.code == DataType::kFloat8E4M3;
  if (std::isnan(v)) return 0x7F;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const double a = std::fabs(v);
  const int max_code = e4m3 ? 0x7E : 0x7B;
  int best = 0;
  double best_err = a;
  for (int c = 1; c <= max_code; ++c) {
    double err = std::fabs(fp8_to_double(t, static_cast<uint8_t>(c)) - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

// ---- memory ---------------------------------------------------------------------------------------
Val decode(DataType t, const uint8_t* p) {
  Val v;
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) v.f = bits_f32(*reinterpret_cast<const uint32_t*>(p));
      else if (t.bits == 64) std::memcpy(&v.f, p, 8);
      else v.f = f16_to_f32(*reinterpret_cast<const uint16_t*>(p));
      break;
    case DataType::kBFloat: v.f = bf16_to_f32(*reinterpret_cast<const uint16_t*>(p)); break;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2: v.f = fp8_to_double(t, *p); break;
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
        uint16_t h = f32_to_f16(static_cast<float>(v.f));
        std::memcpy(p, &h, 2);
      }
      break;
    case DataType::kBFloat: {
      uint16_t h = f32_to_bf16(static_cast<float>(v.f));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::kBool: *p = v.i != 0; break;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2: *p = double_to_fp8(t, v.f); break;
    case DataType::kInt:
    case DataType::kUInt: std::memcpy(p, &v.i, static_cast<size_t>(t.bits / 8)); break;
    default: throw_error<NotImplemented>("not implemented: emulating ", t.str(), " memory");
  }
}

}  // namespace tl::cuda_emu
