// Values and memory of the cuda emulator (internal to src/target/cuda/emulator*.cc, not installed):
// the number formats it rounds results to, the emulated memories and the byte encoding of typed
// values in them.
#pragma once

#include <cstdint>
#include <string>

#include "ir/dtype.h"

namespace tl::cuda_emu {

// ---- number formats ---------------------------------------------------------------------------
// (float16 / bfloat16 bits convert with tl/common/float_formats.h directly.)
// float8 e4m3 / e5m2 values (NaN and, for e5m2, infinities included) and rounding to them (nearest
// even, saturating to the largest finite value like PTX .satfinite; NaN stays NaN).
double fp8_to_double(DataType t, uint8_t b);
uint8_t double_to_fp8(DataType t, double v);

// `v` rounded to the float type `t` (f32, f16, bf16, fp8); other types unchanged.
double round_to(DataType t, double v);
// `v` wrapped to the integer type `t` (two's complement, sign-extended for signed types).
int64_t wrap_int(DataType t, int64_t v);

// ---- memory -----------------------------------------------------------------------------------
enum class Space { kGlobal, kShared, kLocal };

struct Mem {
  uint8_t* base = nullptr;
  int64_t size = 0;
  Space space = Space::kGlobal;
  std::string name;
};

struct Val {
  double f = 0;
  int64_t i = 0;
  Mem mem;          // handles (addresses)
  int64_t off = 0;  // byte offset of a handle
};

// The value of type `t` stored at `p` / stored into `p` (floats in .f, integers and bools in .i).
// NotImplemented for types the emulator has no memory format for.
Val decode(DataType t, const uint8_t* p);
void encode(DataType t, const Val& v, uint8_t* p);

}  // namespace tl::cuda_emu
