// plan_shared_memory (cuda): Before/Expected IR. Buffers whose live ranges do not overlap share
// bytes; a loop keeps what it uses live throughout; TL_DISABLE_SHARED_MEMORY_REUSE gives each its
// own space; the per-architecture limit raises ResourceError naming the buffers.
#include "pass_test_util.h"

namespace tl {
namespace {

// S0 dies before S1 is first used, and S1 before S2: all three start at 0; the block is the largest.
TEST(PlanSharedMemory, BuffersWithDisjointLiveRangesShareBytes) {
  testing::expect_pass("plan_shared_memory", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[128]
    alloc S1: shared float16[64]
    alloc S2: shared float32[32]
    S0[tx] = A[tx]
    B[tx] = S0[127 - tx]
    if (tx < 64) {
      S1[tx] = cast<float16>(B[tx])
      A[tx] = cast<float32>(S1[63 - tx])
    }
    for k: int32 in serial(0, 4) {
      if (tx < 32) {
        S2[tx] = A[tx * 4 + k]
      }
      B[tx] = S2[tx % 32]
    }
  }
})", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {dyn_smem_bytes = 512} {
    attr "smem_offset" = 0 {
      alloc S0: shared float32[128]
      attr "smem_offset" = 0 {
        alloc S1: shared float16[64]
        attr "smem_offset" = 0 {
          alloc S2: shared float32[32]
          S0[tx] = A[tx]
          B[tx] = S0[127 - tx]
          if (tx < 64) {
            S1[tx] = cast<float16>(B[tx])
            A[tx] = cast<float32>(S1[63 - tx])
          }
          for k: int32 in serial(0, 4) {
            if (tx < 32) {
              S2[tx] = A[tx * 4 + k]
            }
            B[tx] = S2[tx % 32]
          }
        }
      }
    }
  }
})", "cuda");
}

// Buffers allocated inside a loop are not carried to the next iteration (the shared liveness
// analysis, transform/buffer_liveness.h): T0 dies before T1 is written, so both take offset 0.
TEST(PlanSharedMemory, AllocationsInsideALoopShareBytes) {
  testing::expect_pass("plan_shared_memory", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for k: int32 in serial(0, 4) {
      alloc T0: shared float32[128]
      alloc T1: shared float32[128]
      T0[tx] = A[tx]
      B[tx] = T0[127 - tx]
      T1[tx] = B[tx]
      A[tx] = T1[127 - tx]
    }
  }
})", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {dyn_smem_bytes = 512} {
    for k: int32 in serial(0, 4) {
      attr "smem_offset" = 0 {
        alloc T0: shared float32[128]
        attr "smem_offset" = 0 {
          alloc T1: shared float32[128]
          T0[tx] = A[tx]
          B[tx] = T0[127 - tx]
          T1[tx] = B[tx]
          A[tx] = T1[127 - tx]
        }
      }
    }
  }
})", "cuda");
}

// S0 is read after S1 is written: S1 goes after S0 (512 bytes, 128-byte aligned).
TEST(PlanSharedMemory, OverlappingLiveRangesGetSeparateBytes) {
  testing::expect_pass("plan_shared_memory", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[128]
    alloc S1: shared float16[64]
    S0[tx] = A[tx]
    if (tx < 64) {
      S1[tx] = cast<float16>(S0[tx])
    }
    B[tx] = S0[127 - tx] + cast<float32>(S1[tx % 64])
  }
})", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {dyn_smem_bytes = 640} {
    attr "smem_offset" = 0 {
      alloc S0: shared float32[128]
      attr "smem_offset" = 512 {
        alloc S1: shared float16[64]
        S0[tx] = A[tx]
        if (tx < 64) {
          S1[tx] = cast<float16>(S0[tx])
        }
        B[tx] = S0[127 - tx] + cast<float32>(S1[tx % 64])
      }
    }
  }
})", "cuda");
}

// The same kernel with reuse off: each buffer after the previous one.
TEST(PlanSharedMemory, DisabledReuseStacksEveryBuffer) {
  testing::expect_pass("plan_shared_memory", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[128]
    alloc S1: shared float16[64]
    alloc S2: shared float32[32]
    S0[tx] = A[tx]
    B[tx] = S0[127 - tx]
    if (tx < 64) {
      S1[tx] = cast<float16>(B[tx])
      A[tx] = cast<float32>(S1[63 - tx])
    }
    for k: int32 in serial(0, 4) {
      if (tx < 32) {
        S2[tx] = A[tx * 4 + k]
      }
      B[tx] = S2[tx % 32]
    }
  }
})", R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {dyn_smem_bytes = 768} {
    attr "smem_offset" = 0 {
      alloc S0: shared float32[128]
      attr "smem_offset" = 512 {
        alloc S1: shared float16[64]
        attr "smem_offset" = 640 {
          alloc S2: shared float32[32]
          S0[tx] = A[tx]
          B[tx] = S0[127 - tx]
          if (tx < 64) {
            S1[tx] = cast<float16>(B[tx])
            A[tx] = cast<float32>(S1[63 - tx])
          }
          for k: int32 in serial(0, 4) {
            if (tx < 32) {
              S2[tx] = A[tx * 4 + k]
            }
            B[tx] = S2[tx % 32]
          }
        }
      }
    }
  }
})", "cuda", {{"tl.disable_shared_memory_reuse", Attr(true)}});
}

// 192 KiB: over sm_80's 163 KiB per block (next test), within sm_90's 227 KiB.
TEST(PlanSharedMemory, Sm90FitsWhatSm80Refuses) {
  testing::expect_pass("plan_shared_memory", R"(
func @main(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[32768]
    alloc S1: shared float32[16384]
    S0[tx] = A[tx]
    S1[tx] = S0[tx]
    A[tx] = S0[tx] + S1[tx]
  }
})", R"(
func @main(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {dyn_smem_bytes = 196608} {
    attr "smem_offset" = 0 {
      alloc S0: shared float32[32768]
      attr "smem_offset" = 131072 {
        alloc S1: shared float32[16384]
        S0[tx] = A[tx]
        S1[tx] = S0[tx]
        A[tx] = S0[tx] + S1[tx]
      }
    }
  }
})", "cuda -arch=sm_90");
}

TEST(PlanSharedMemory, OverTheLimitIsAResourceError) {
  testing::expect_pass_error<ResourceError>("plan_shared_memory", R"(
func @main(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[32768]
    alloc S1: shared float32[16384]
    S0[tx] = A[tx]
    S1[tx] = S0[tx]
    A[tx] = S0[tx] + S1[tx]
  }
})", "S0: float32[32768] = 131072 bytes", "cuda");
}

}  // namespace
}  // namespace tl
