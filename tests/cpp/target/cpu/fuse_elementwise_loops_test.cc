#include "target/cpu/fuse_elementwise_loops.h"

#include "ir/printer.h"
#include "pass_test_util.h"

namespace tl {
namespace {

// Expects the pass to leave `src` as it is.
void expect_unchanged(const char* src) { tl::testing::expect_pass("fuse_elementwise_loops", src, src); }

// rms_norm's first statements: copy into shared (stepping over the weight copy, which touches
// neither X_shared nor x), into the fragment, square. The three nests become one; X_shared and x
// (here not read after the square) then live only inside one iteration and become scalars; x_sq
// stays (the reduction reads it through tl.address_of).
TEST(FuseElementwiseLoops, ElementwiseChainIsFusedAndItsStagingBufferScalarized) {
  tl::testing::expect_pass("fuse_elementwise_loops", R"(
func @f(X: global float32[64, 256], weight: global float32[256], S: global float32[64]) {
  kernel(grid=[16], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc X_shared: shared float32[4, 256]
    alloc w_shared: shared float32[256]
    alloc x: fragment float32[4, 256]
    alloc x_sq: fragment float32[4, 256]
    for i0: int32 in serial(0, 4) {
      for i1: int32 in vectorized(0, 256) {
        X_shared[i0, i1] = X[bx * 4 + i0, i1]
      }
    }
    for i0: int32 in vectorized(0, 256) {
      w_shared[i0] = weight[i0]
    }
    for i0: int32 in serial(0, 4) {
      for i1: int32 in vectorized(0, 256) {
        x[i0, i1] = X_shared[i0, i1]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 256) {
        x_sq[i, j] = x[i, j] * x[i, j]
      }
    }
    for i0: int32 in serial(0, 4) {
      S[bx * 4 + i0] = tl.cpu.reduce_row<float32>("sum", tl.address_of<handle>(x_sq[i0, 0]), 256i64, 0.0f32)
    }
  }
})", R"(
func @f(X: global float32[64, 256], weight: global float32[256], S: global float32[64]) {
  kernel(grid=[16], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc X_shared: local.var float32[1]
    alloc w_shared: shared float32[256]
    alloc x: local.var float32[1]
    alloc x_sq: fragment float32[4, 256]
    for i0: int32 in serial(0, 4) {
      for i1: int32 in vectorized(0, 256) {
        X_shared[0] = X[bx * 4 + i0, i1]
        x[0] = X_shared[0]
        x_sq[i0, i1] = x[0] * x[0]
      }
    }
    for i0: int32 in vectorized(0, 256) {
      w_shared[i0] = weight[i0]
    }
    for i0: int32 in serial(0, 4) {
      S[bx * 4 + i0] = tl.cpu.reduce_row<float32>("sum", tl.address_of<handle>(x_sq[i0, 0]), 256i64, 0.0f32)
    }
  }
})");
}

// The fused loop keeps a SIMD hint only when both loops had it; the off switch leaves the nests.
TEST(FuseElementwiseLoops, HintOnlyWhenBothHadItAndTheSwitchTurnsItOff) {
  const char* before = R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc t: fragment float32[64]
    for i: int32 in vectorized(0, 64) {
      t[i] = A[i] + 1.0f32
    }
    for k: int32 in serial(0, 64) {
      B[k] = t[k] * 2.0f32
    }
  }
})";
  tl::testing::expect_pass("fuse_elementwise_loops", before, R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc t: local.var float32[1]
    for i: int32 in serial(0, 64) {
      t[0] = A[i] + 1.0f32
      B[i] = t[0] * 2.0f32
    }
  }
})");
  tl::testing::expect_pass("fuse_elementwise_loops", before, before, "cpu",
                           {{"tl.disable_cpu_loop_fusion", Attr(true)}});
}

// x[i + 1] read after x[i] written: iteration i of the second loop needs iteration i + 1 of the first.
TEST(FuseElementwiseLoops, NotAppliedToAShiftedIndex) {
  expect_unchanged(R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[65]
    for i: int32 in vectorized(0, 64) {
      x[i] = A[i]
    }
    for i: int32 in vectorized(0, 64) {
      B[i] = x[i + 1]
    }
  }
})");
}

// A 2-D nest that writes w[j]: every row writes the same elements, which the next nest reads.
TEST(FuseElementwiseLoops, NotAppliedWhenTheMapIsNotOneToOne) {
  expect_unchanged(R"(
func @f(A: global float32[4, 64], B: global float32[4, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc w: fragment float32[64]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        w[j] = A[i, j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        B[i, j] = w[j]
      }
    }
  }
})");
}

// Offsets that may reach past a dimension (x[i, j + c] with c unknown) could alias another row.
TEST(FuseElementwiseLoops, NotAppliedWhenAnIndexMayLeaveItsDimension) {
  expect_unchanged(R"(
func @f(A: global float32[4, 64], B: global float32[4, 64], c: int32) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 128]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        x[i, j + c] = A[i, j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        B[i, j] = x[i, j + c]
      }
    }
  }
})");
}

// The statement in between writes s, which the second nest reads: it cannot move up across it.
// (The first and third nests share no buffer with a write, but the middle one stops the move.)
TEST(FuseElementwiseLoops, NotAppliedAcrossAConflictingStatement) {
  expect_unchanged(R"(
func @f(A: global float32[4, 64], B: global float32[4, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 64]
    alloc s: fragment float32[4]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        x[i, j] = A[i, j]
      }
    }
    for i: int32 in serial(0, 4) {
      s[i] = tl.cpu.reduce_row<float32>("max", tl.address_of<handle>(x[i, 0]), 64i64, 0.0f32)
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        B[i, j] = x[i, j] - s[i]
      }
    }
  }
})");
}

// A row reduction only reads its source: a nest that only reads that buffer too moves up across it
// and fuses with the nest that wrote it (attention's exp2 nest and the copy of the scores that
// feeds the second GEMM); one that writes the source does not move (the next test).
TEST(FuseElementwiseLoops, AReaderMovesAcrossARowReductionOfItsBuffer) {
  tl::testing::expect_pass("fuse_elementwise_loops", R"(
func @f(A: global float32[4, 64], B: global float32[4, 64], S: global float32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 64]
    alloc c: fragment float32[4, 64]
    alloc s: fragment float32[4]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        x[i, j] = A[i, j] * 2.0f32
      }
    }
    evaluate tl.cpu.reduce_rows<void>("sum", tl.address_of<handle>(x[0, 0]), 64i64, 64i64, 4i64, tl.address_of<handle>(s[0]), true)
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        c[i, j] = x[i, j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        B[i, j] = c[i, j] + s[i]
      }
    }
  }
})", R"(
func @f(A: global float32[4, 64], B: global float32[4, 64], S: global float32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 64]
    alloc c: fragment float32[4, 64]
    alloc s: fragment float32[4]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        x[i, j] = A[i, j] * 2.0f32
        c[i, j] = x[i, j]
      }
    }
    evaluate tl.cpu.reduce_rows<void>("sum", tl.address_of<handle>(x[0, 0]), 64i64, 64i64, 4i64, tl.address_of<handle>(s[0]), true)
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        B[i, j] = c[i, j] + s[i]
      }
    }
  }
})");
}

TEST(FuseElementwiseLoops, AWriterOfTheSourceDoesNotMoveAcrossARowReduction) {
  expect_unchanged(R"(
func @f(A: global float32[4, 64], B: global float32[4, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 64]
    alloc s: fragment float32[4]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        x[i, j] = A[i, j]
      }
    }
    evaluate tl.cpu.reduce_rows<void>("max", tl.address_of<handle>(x[0, 0]), 64i64, 64i64, 4i64, tl.address_of<handle>(s[0]), true)
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        x[i, j] = x[i, j] * 2.0f32
        B[i, j] = x[i, j]
      }
    }
  }
})");
}

TEST(FuseElementwiseLoops, NotAppliedWhenExtentsDiffer) {
  expect_unchanged(R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[64]
    for i: int32 in vectorized(0, 64) {
      x[i] = A[i]
    }
    for i: int32 in vectorized(0, 32) {
      B[i] = x[i]
    }
  }
})");
}

// A buffer read before it is written in the fused iteration (x = x * 2 after x = A) is not a
// scalar when something after the nest reads it; the fused nest keeps its stores.
TEST(FuseElementwiseLoops, ABufferReadAfterTheNestStaysABuffer) {
  tl::testing::expect_pass("fuse_elementwise_loops", R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[64]
    for i: int32 in vectorized(0, 64) {
      x[i] = A[i]
    }
    for i: int32 in vectorized(0, 64) {
      x[i] = x[i] * 2.0f32
    }
    B[0] = x[3]
  }
})", R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[64]
    for i: int32 in vectorized(0, 64) {
      x[i] = A[i]
      x[i] = x[i] * 2.0f32
    }
    B[0] = x[3]
  }
})");
}


// A copy-out that stream_global_stores will stream (512 rows of 2 KiB, 1 MiB) is not fused into the
// nest before it, unless streaming stores are off.
TEST(FuseElementwiseLoops, AStreamedCopyOutIsLeftAlone) {
  const char* before = R"(
func @f(C: global float32[1024, 512]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: fragment float32[512, 512]
    for i: int32 in serial(0, 512) {
      for j: int32 in vectorized(0, 512) {
        L[i, j] = max(L[i, j], 0.0f32)
      }
    }
    for i: int32 in serial(0, 512) {
      for j: int32 in vectorized(0, 512) {
        C[bx * 512 + i, j] = L[i, j]
      }
    }
  }
})";
  expect_unchanged(before);
  tl::testing::expect_pass("fuse_elementwise_loops", before, R"(
func @f(C: global float32[1024, 512]) {
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: fragment float32[512, 512]
    for i: int32 in serial(0, 512) {
      for j: int32 in vectorized(0, 512) {
        L[i, j] = max(L[i, j], 0.0f32)
        C[bx * 512 + i, j] = L[i, j]
      }
    }
  }
})", "cpu", {{"tl.disable_cpu_stream_stores", Attr(true)}});
}


// In a kernel without GEMM calls, a copy of at least 16 KiB into a global buffer larger than the
// caches (tl.cpu_stream_min_output_bytes; default: the host's last-level cache) is streamed by
// stream_global_stores, so it is left alone too (examples/rms_norm's copy of x into a large Y);
// with the output counted as small it fuses.
TEST(FuseElementwiseLoops, ACopyIntoAnOutputLargerThanTheCachesIsLeftAlone) {
  const char* before = R"(
func @f(Y: global float32[1048576], W: global float32[1024]) {
  kernel(grid=[256], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 1024]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        x[i, j] = x[i, j] * W[j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        Y[bx * 4096 + i * 1024 + j] = x[i, j]
      }
    }
  }
})";
  tl::testing::expect_pass("fuse_elementwise_loops", before, before, "cpu",
                           {{"tl.cpu_stream_min_output_bytes", Attr(int64_t(4) << 20)}});
  tl::testing::expect_pass("fuse_elementwise_loops", before, R"(
func @f(Y: global float32[1048576], W: global float32[1024]) {
  kernel(grid=[256], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4, 1024]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        x[i, j] = x[i, j] * W[j]
        Y[bx * 4096 + i * 1024 + j] = x[i, j]
      }
    }
  }
})", "cpu", {{"tl.cpu_stream_min_output_bytes", Attr(int64_t(1) << 40)}});
}

// A call that reaches memory other than through its operands (here one without any) is never
// crossed, and a buffer with explicit strides (which may overlap) does not count as one-to-one.
TEST(FuseElementwiseLoops, NotAppliedAcrossAnOpaqueCallOrOnAStridedBuffer) {
  expect_unchanged(R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[64]
    for i: int32 in vectorized(0, 64) {
      x[i] = A[i]
    }
    evaluate tl.cpu.store_fence<void>()
    for i: int32 in vectorized(0, 64) {
      B[i] = x[i]
    }
  }
})");
  expect_unchanged(R"(
func @f(A: global float32[4, 64] strides [0, 1], B: global float32[4, 64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        A[i, j] = B[i, j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 64) {
        B[i, j] = A[i, j] * 2.0f32
      }
    }
  }
})");
}

}  // namespace
}  // namespace tl
