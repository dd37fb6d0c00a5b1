#include "transform/check_cpu_constructs.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(CheckCpuConstructs, AcceptsBlockLevelCode) {
  const char* ok = R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[128]
    for i: int32 in parallel(0, 128) {
      S[i] = A[i]
    }
  }
})";
  tl::testing::expect_pass("check_cpu_constructs", ok, ok);
}

TEST(CheckCpuConstructs, RejectsAscendScopesMemoriesAndBuiltins) {
  tl::testing::expect_pass_error<NotImplemented>("check_cpu_constructs", R"(
func @f(A: global float16[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: L1 float16[128]
    L[0] = A[0]
  }
})", "buffer 'L' in memory scope L1 on target cpu");
  tl::testing::expect_pass_error<NotImplemented>("check_cpu_constructs", R"(
func @f(A: global float16[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    attr "scope" = "C" {
      A[0] = 0.0f16
    }
  }
})", "T.Scope");
  tl::testing::expect_pass_error<NotImplemented>("check_cpu_constructs", R"(
func @f() {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    evaluate ascend.pipe_barrier<void>("v")
  }
})", "T.pipe_barrier (Ascend synchronisation) on target cpu");
}


TEST(CheckCpuConstructs, LimitsBlockLocalStorage) {
  // 256 MiB in total is accepted (the limit), one byte more is not; the message names the buffers.
  const char* at_limit = R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[8388608, 4]
    alloc F: fragment int8[128, 1048576]
    S[0, 0] = A[0]
  }
})";
  tl::testing::expect_pass("check_cpu_constructs", at_limit, at_limit);
  tl::testing::expect_pass_error<ResourceError>("check_cpu_constructs", R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[268435456]
    S[0] = A[0]
  }
})", "buffer 'S' (shared float32[268435456]) needs 1073741824 bytes (1024 MiB) but a block's "
     "shared/fragment/local buffers are limited to 256 MiB on target cpu; use smaller tiles");
  tl::testing::expect_pass_error<ResourceError>("check_cpu_constructs", R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[8388608, 4]
    alloc F: fragment int8[128, 1048576]
    alloc L: local int8[1]
    S[0, 0] = A[0]
  }
})", "the kernel's block-local buffers need 268435457 bytes (256 MiB) per block (buffer 'S' (shared "
     "float32[8388608, 4]) 134217728 bytes (128 MiB), buffer 'F' (fragment int8[128, 1048576]) 134217728 bytes "
     "(128 MiB), buffer 'L' (local int8[1]) 1 bytes)");
  // A shape whose byte size overflows 64 bits is reported, not wrapped around.
  tl::testing::expect_pass_error<ResourceError>("check_cpu_constructs", R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[1099511627776, 1073741824]
    S[0, 0] = A[0]
  }
})", "needs more than 2^63 bytes");
  // Separate kernels are separate blocks.
  const char* two_kernels = R"(
func @f(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[50331648]
    S[0] = A[0]
  }
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[50331648]
    S[0] = A[0]
  }
})";
  tl::testing::expect_pass("check_cpu_constructs", two_kernels, two_kernels);
}

TEST(CheckCpuConstructs, RejectsIntegerDivisionByConstantZero) {
  tl::testing::expect_pass_error<ValueError>("check_cpu_constructs", R"(
func @f(A: global int32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    A[0] = floordiv(A[1], 0)
  }
})", "integer division by zero in 'floordiv(A[1], 0)'");
  // Float division by zero is IEEE (inf/nan), and a constant non-zero divisor is fine.
  const char* ok = R"(
func @f(A: global float32[128], B: global int32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    A[0] = A[1] / 0.0f32
    B[0] = floormod(B[1], 3)
  }
})";
  tl::testing::expect_pass("check_cpu_constructs", ok, ok);
}

}  // namespace
}  // namespace tl
