#include "target/cpu/lower_tile_ops_cpu.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(LowerTileOpsCpu, StaticGemmBecomesAHeaderCall) {
  tl::testing::expect_pass("lower_tile_ops", R"(
func @f(A: global float16[64, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc A_s: shared float16[2, 32, 16]
    alloc B_s: shared float16[32, 16]
    alloc C_l: fragment float32[32, 32]
    for k: int32 in serial(0, 4) {
      gemm(A_s[1 :+ 1, 0 :+ 32, 0 :+ 16], B_s[0 :+ 32, 0 :+ 16], C_l[0 :+ 32, 0 :+ 32]) {transpose_B = true, clear_accum = e:(k == 0)}
    }
  }
})", R"(
func @f(A: global float16[64, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc A_s: shared float16[2, 32, 16]
    alloc B_s: shared float16[32, 16]
    alloc C_l: fragment float32[32, 32]
    for k: int32 in serial(0, 4) {
      evaluate tl.cpu.gemm<void>(32, 32, 16, false, true, tl.address_of<handle>(A_s[1, 0, 0]), 16i64,
                                 tl.address_of<handle>(B_s[0, 0]), 16i64, tl.address_of<handle>(C_l[0, 0]), 32i64, k == 0)
    }
  }
})");
}

TEST(LowerTileOpsCpu, NonContiguousOperandsTakeTheLoopForm) {
  // B is a strided tensor whose last dimension is not contiguous: the loop form handles it.
  tl::testing::expect_pass("lower_tile_ops", R"(
func @f(A: global float32[4, 4], B: global float32[4, 4] strides[1, 4], C: global float32[4, 4]) {
  gemm(A[0 :+ 4, 0 :+ 4], B[0 :+ 4, 0 :+ 4], C[0 :+ 4, 0 :+ 4]) {clear_accum = true}
})", R"(
func @f(A: global float32[4, 4], B: global float32[4, 4] strides[1, 4], C: global float32[4, 4]) {
  for i: int32 in parallel(0, 4) {
    for j: int32 in parallel(0, 4) {
      C[i, j] = 0.0f32
    }
  }
  for i: int32 in parallel(0, 4) {
    for k: int32 in serial(0, 4) {
      for j: int32 in parallel(0, 4) {
        C[i, j] = C[i, j] + A[i, k] * B[k, j]
      }
    }
  }
})");
}

}  // namespace
}  // namespace tl
