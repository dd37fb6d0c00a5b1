#include "target/cpu/convert_bf16_rows.h"

#include "pass_test_util.h"

namespace tl {
namespace {

// Flash attention's exp2 nest after fusion: the scores rounded into P V's bfloat16 operand. Row i
// is converted by one call at the end of iteration i (the row is still in L1); the exp2 store stays.
TEST(ConvertBf16Rows, FusedCastBecomesOneConversionPerRowInsideTheNest) {
  tl::testing::expect_pass("convert_bf16_rows", R"(
func @f(M: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[4096]
    alloc P: fragment bfloat16[4096]
    for i: int32 in serial(0, 64) {
      for j: int32 in vectorized(0, 64) {
        S[i * 64 + j] = exp2(S[i * 64 + j] * 0.5f32 - M[i])
        P[i * 64 + j] = cast<bfloat16>(S[i * 64 + j])
      }
    }
  }
})", R"(
func @f(M: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[4096]
    alloc P: fragment bfloat16[4096]
    for i: int32 in serial(0, 64) {
      for j: int32 in vectorized(0, 64) {
        S[i * 64 + j] = exp2(S[i * 64 + j] * 0.5f32 - M[i])
      }
      evaluate tl.cpu.convert_bf16<void>(tl.address_of<handle>(P[i * 64]), tl.address_of<handle>(S[i * 64]), 64)
    }
  }
})");
}

// Rows of 48 values 64 apart (a column block): one conversion per row, in a loop after the nest.
// A nest that is only the cast becomes only the conversions.
TEST(ConvertBf16Rows, StridedRowsBecomeOneConversionPerRow) {
  tl::testing::expect_pass("convert_bf16_rows", R"(
func @f() {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[2048]
    alloc P: shared bfloat16[4096]
    for i: int32 in serial(0, 32) {
      for j: int32 in vectorized(0, 48) {
        P[i * 128 + j + 16] = cast<bfloat16>(S[i * 64 + j])
      }
    }
  }
})", R"(
func @f() {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[2048]
    alloc P: shared bfloat16[4096]
    for i: int32 in serial(0, 32) {
      evaluate tl.cpu.convert_bf16<void>(tl.address_of<handle>(P[i * 128 + 16]), tl.address_of<handle>(S[i * 64]), 48)
    }
  }
})");
}

// Left alone: a global destination (stream_global_stores' case), a later write of the source, a
// read of the destination in the nest, a source written at another index, a float16 destination,
// a value with arithmetic.
TEST(ConvertBf16Rows, UnsafeOrOtherStoresStay) {
  for (const char* body : {
           "G[i * 64 + j] = cast<bfloat16>(S[i * 64 + j])",
           "P[i * 64 + j] = cast<bfloat16>(S[i * 64 + j])\n        S[i * 64 + j] = 0f32",
           "P[i * 64 + j] = cast<bfloat16>(S[i * 64 + j])\n        S[i * 64 + j] = cast<float32>(P[i * 64 + j])",
           "S[i * 64 + j + 1] = 1f32\n        P[i * 64 + j] = cast<bfloat16>(S[i * 64 + j])",
           "H[i * 64 + j] = cast<float16>(S[i * 64 + j])",
           "P[i * 64 + j] = cast<bfloat16>(S[i * 64 + j] * 2f32)",
       }) {
    std::string src = std::string(R"(
func @f(G: global bfloat16[4160]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[4160]
    alloc P: fragment bfloat16[4160]
    alloc H: fragment float16[4160]
    for i: int32 in serial(0, 64) {
      for j: int32 in vectorized(0, 64) {
        )") + body + R"(
      }
    }
  }
})";
    tl::testing::expect_pass("convert_bf16_rows", src, src);
  }
}

// Rows of P that overlap (32 apart, 64 long): not one conversion after the nest, but the inner loop
// alone is converted, row by row in the loop's order (a later row still overwrites an earlier one).
TEST(ConvertBf16Rows, OverlappingRowsAreConvertedInOrder) {
  tl::testing::expect_pass("convert_bf16_rows", R"(
func @f() {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[4096]
    alloc P: fragment bfloat16[4096]
    for i: int32 in serial(0, 63) {
      for j: int32 in vectorized(0, 64) {
        P[i * 32 + j] = cast<bfloat16>(S[i * 64 + j])
      }
    }
  }
})", R"(
func @f() {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[4096]
    alloc P: fragment bfloat16[4096]
    for i: int32 in serial(0, 63) {
      evaluate tl.cpu.convert_bf16<void>(tl.address_of<handle>(P[i * 32]), tl.address_of<handle>(S[i * 64]), 64)
    }
  }
})");
}

}  // namespace
}  // namespace tl
