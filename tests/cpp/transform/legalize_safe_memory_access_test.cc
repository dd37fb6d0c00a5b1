#include "transform/legalize_safe_memory_access.h"

#include "pass_test_util.h"

namespace tl {
namespace {

// The tail block of a 1-D element-wise kernel over 1000 elements in tiles of 256: the store and the
// loads are guarded; the fragment access is not (only global tensors are).
TEST(LegalizeSafeMemoryAccess, GuardsTailsOfParallelLoops) {
  tl::testing::expect_pass("legalize_safe_memory_access", R"(
func @f(A: global float32[1000], B: global float32[1000]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc F: fragment float32[256]
    for i: int32 in parallel(0, 256) {
      F[i] = A[bx * 256 + i]
      B[bx * 256 + i] = F[i] + 1.0f32
    }
  }
})", R"(
func @f(A: global float32[1000], B: global float32[1000]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc F: fragment float32[256]
    for i: int32 in parallel(0, 256) {
      F[i] = select(bx * 256 + i < 1000, A[bx * 256 + i], 0.0f32)
      if (bx * 256 + i < 1000) {
        B[bx * 256 + i] = F[i] + 1.0f32
      }
    }
  }
})");
}

// A scalar atomic names its element by a load the builtin takes the address of: the atomic is
// guarded as a whole (a statement by an `if`, a value by a select), its load stays a load (TileLang's
// stream-K GEMM adds `T.atomic_add(C[m, n], acc[i, j])` over ragged tiles).
TEST(LegalizeSafeMemoryAccess, GuardsScalarAtomicsAsAWhole) {
  tl::testing::expect_pass("legalize_safe_memory_access", R"(
func @f(C: global float32[1000], O: global float32[1000]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc F: fragment float32[256]
    for i: int32 in parallel(0, 256) {
      evaluate tl.atomic_add_scalar<float32>(C[bx * 256 + i], F[i])
      F[i] = tl.atomic_max_scalar<float32>(C[bx * 256 + i], 0.0f32)
    }
  }
})", R"(
func @f(C: global float32[1000], O: global float32[1000]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc F: fragment float32[256]
    for i: int32 in parallel(0, 256) {
      if (bx * 256 + i < 1000) {
        evaluate tl.atomic_add_scalar<float32>(C[bx * 256 + i], F[i])
      }
      F[i] = select(bx * 256 + i < 1000, tl.atomic_max_scalar<float32>(C[bx * 256 + i], 0.0f32), 0.0f32)
    }
  }
})");
}

// Accesses proven in bounds by ranges or by an enclosing condition are left alone.
TEST(LegalizeSafeMemoryAccess, ProvenAccessesAreUntouched) {
  const char* text = R"(
func @f(A: global float32[1024], B: global float32[1024], n: int32) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in parallel(0, 256) {
      B[bx * 256 + i] = A[bx * 256 + i]
    }
    for i: int32 in serial(0, n) {
      if (i < 1024) {
        B[i] = select(i + 1 < 1024, A[i + 1], 0.0f32)
      }
    }
  }
})";
  tl::testing::expect_pass("legalize_safe_memory_access", text, text);
}

// A dynamic dimension cannot be proven: the guard compares against it; the lower bound is known.
TEST(LegalizeSafeMemoryAccess, DynamicDimension) {
  tl::testing::expect_pass("legalize_safe_memory_access", R"(
func @f dyn[m: int32](A: global float32[m, 64]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in parallel(0, 32) {
      for j: int32 in parallel(0, 64) {
        A[bx * 32 + i, j] = 0.0f32
      }
    }
  }
})", R"(
func @f dyn[m: int32](A: global float32[m, 64]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in parallel(0, 32) {
      for j: int32 in parallel(0, 64) {
        if (bx * 32 + i < m) {
          A[bx * 32 + i, j] = 0.0f32
        }
      }
    }
  }
})");
}

// The right operand of && is evaluated only when the left one holds.
TEST(LegalizeSafeMemoryAccess, ShortCircuitConditions) {
  const char* text = R"(
func @f(A: global float32[100], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 128) {
      if (i < 100 && A[i] > 0.0f32) {
        B[i] = 1.0f32
      }
    }
  }
})";
  tl::testing::expect_pass("legalize_safe_memory_access", text, text);
}

TEST(LegalizeSafeMemoryAccess, DisabledByPassConfig) {
  const char* text = R"(
func @f(A: global float32[100]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 128) {
      A[i] = 1.0f32
    }
  }
})";
  tl::testing::expect_pass("legalize_safe_memory_access", text, text, "cpu",
                           {{"tl.disable_safe_memory_legalize", Attr(true)}});
}

}  // namespace
}  // namespace tl
