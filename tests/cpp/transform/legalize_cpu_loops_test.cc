#include "transform/legalize_cpu_loops.h"

#include "pass_test_util.h"

namespace tl {
namespace {

TEST(LegalizeCpuLoops, PipelinedAndPersistentBecomeSerial) {
  tl::testing::expect_pass("legalize_cpu_loops", R"(
func @f(A: global float32[64], waves: int32) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for k: int32 in pipelined(0, 8) {num_stages = 3, order = [0, 1]} {
      A[k] = 1.0f32
    }
    for w: int32 in persistent(0, waves) {wave_size = e:(4), domain = e:[16]} {
      let tile: int32 = w * 4 + bx
      if (tile < 16) {
        A[tile] = 2.0f32
      }
    }
  }
})", R"(
func @f(A: global float32[64], waves: int32) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for k: int32 in serial(0, 8) {
      A[k] = 1.0f32
    }
    for w: int32 in serial(0, waves) {
      let tile: int32 = w * 4 + bx
      if (tile < 16) {
        A[tile] = 2.0f32
      }
    }
  }
})");
}

TEST(LegalizeCpuLoops, OnlyTheInnermostParallelLoopIsASimdHint) {
  const char* before = R"(
func @f(A: global float32[8, 16], B: global float32[8, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in parallel(0, 8) {
      for j: int32 in parallel(0, 16) {
        B[i, j] = A[i, j] * 2.0f32
      }
    }
    for i: int32 in vectorized(0, 8) {
      for j: int32 in serial(0, 16) {
        B[i, j] = A[i, j]
      }
    }
    for j: int32 in unrolled(0, 4) {
      B[0, j] = 0.0f32
    }
  }
})";
  tl::testing::expect_pass("legalize_cpu_loops", before, R"(
func @f(A: global float32[8, 16], B: global float32[8, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 8) {
      for j: int32 in vectorized(0, 16) {
        B[i, j] = A[i, j] * 2.0f32
      }
    }
    for i: int32 in serial(0, 8) {
      for j: int32 in serial(0, 16) {
        B[i, j] = A[i, j]
      }
    }
    for j: int32 in unrolled(0, 4) {
      B[0, j] = 0.0f32
    }
  }
})");
  // tir.disable_vectorize: no hints at all.
  tl::testing::expect_pass("legalize_cpu_loops", before, R"(
func @f(A: global float32[8, 16], B: global float32[8, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 8) {
      for j: int32 in serial(0, 16) {
        B[i, j] = A[i, j] * 2.0f32
      }
    }
    for i: int32 in serial(0, 8) {
      for j: int32 in serial(0, 16) {
        B[i, j] = A[i, j]
      }
    }
    for j: int32 in unrolled(0, 4) {
      B[0, j] = 0.0f32
    }
  }
})", "cpu", {{"tir.disable_vectorize", Attr(true)}});
}

TEST(LegalizeCpuLoops, AnAccumulatingParallelLoopGetsNoHint) {
  tl::testing::expect_pass("legalize_cpu_loops", R"(
func @f(A: global float32[16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc acc: local.var float32[1]
    for i: int32 in parallel(0, 16) {
      acc[0] = acc[0] + A[i]
    }
  }
})", R"(
func @f(A: global float32[16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc acc: local.var float32[1]
    for i: int32 in serial(0, 16) {
      acc[0] = acc[0] + A[i]
    }
  }
})");
}

}  // namespace
}  // namespace tl
