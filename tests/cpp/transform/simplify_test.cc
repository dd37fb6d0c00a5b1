// Pass "simplify": Before/Expected pairs in textual IR, compared structurally.
#include "transform/simplify.h"

#include "pass_test_util.h"

namespace tl {
namespace {

using testing::expect_pass;

TEST(SimplifyPass, IndicesUseKernelRanges) {
  expect_pass("simplify", R"(
func @f(A: global float32[512]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    A[floordiv(bx * 128 + tx, 128) * 128 + floormod(bx * 128 + tx, 128)] = 0.0f32
    A[tx + bx * 128 + 0] = cast<float32>(floordiv(tx, 128) + floormod(bx, 4))
    if (tx < 128 && bx * 128 + tx < 512) {
      A[(bx + 1) * 128 - 128 + tx] = 1.0f32
    }
  }
})", R"(
func @f(A: global float32[512]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    A[bx * 128 + tx] = 0.0f32
    A[bx * 128 + tx] = cast<float32>(bx)
    A[bx * 128 + tx] = 1.0f32
  }
})");
}

TEST(SimplifyPass, FoldsConstantConditions) {
  expect_pass("simplify", R"(
func @f(A: global float32[8]) {
  if (1 < 2) {
    A[0] = 1.0f32
  } else {
    A[1] = 2.0f32
  }
  if (3 * 4 == 11) {
    A[2] = 3.0f32
  } else {
    A[3] = 4.0f32
  }
  if (false) {
    A[4] = 5.0f32
  }
})", R"(
func @f(A: global float32[8]) {
  A[0] = 1.0f32
  A[3] = 4.0f32
})");
}

TEST(SimplifyPass, LoopsOfExtentZeroAndOne) {
  // Extent 0: removed. Extent 1: serial/unrolled/vectorized loops become their body with the
  // variable replaced by the loop's min; parallel and pipelined loops stay loops.
  expect_pass("simplify", R"(
func @f(A: global float32[64, 64]) {
  for i: int32 in serial(0, 8 - 8) {
    A[i, 0] = 1.0f32
  }
  for i: int32 in serial(3, 1) {
    A[i, i + 1] = 2.0f32
  }
  for u: int32 in unrolled(5, 1) {
    for v: int32 in vectorized(0, 1) {
      A[u, v] = 3.0f32
    }
  }
  for p: int32 in parallel(0, 1) {
    for q: int32 in parallel(0, 64) {
      A[p, q] = 4.0f32
    }
  }
  for k: int32 in pipelined(0, 1) {num_stages = 2} {
    A[k, 0] = 5.0f32
  }
})", R"(
func @f(A: global float32[64, 64]) {
  A[3, 4] = 2.0f32
  A[5, 0] = 3.0f32
  for p: int32 in parallel(0, 1) {
    for q: int32 in parallel(0, 64) {
      A[0, q] = 4.0f32
    }
  }
  for k: int32 in pipelined(0, 1) {num_stages = 2} {
    A[0, 0] = 5.0f32
  }
})");
}

TEST(SimplifyPass, UnitLoopStaysWhenAnAllocationShapeUsesItsVariable) {
  expect_pass("simplify", R"(
func @f(A: global float32[64]) {
  for i: int32 in serial(4, 1) {
    alloc T: local float32[i] {
      T[0] = A[i]
      A[i + 1] = T[0]
    }
  }
})", R"(
func @f(A: global float32[64]) {
  for i: int32 in serial(4, 1) {
    alloc T: local float32[i] {
      T[0] = A[4]
      A[5] = T[0]
    }
  }
})");
}

TEST(SimplifyPass, GuardsKnownFromEnclosingConditions) {
  expect_pass("simplify", R"(
func @f dyn[m: int32](A: global float32[m, 64]) {
  kernel(grid=[floordiv(m + 63, 64)], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    for i: int32 in serial(0, 64) {
      if (bx * 64 + i < m) {
        if (bx * 64 + i < m && tx < 64) {
          A[bx * 64 + i, tx] = 0.0f32
        }
        if (i + bx * 64 >= m) {
          A[0, 0] = 1.0f32
        }
      } else {
        if (m <= i + bx * 64) {
          A[0, tx] = 2.0f32
        }
      }
    }
  }
})", R"(
func @f dyn[m: int32](A: global float32[m, 64]) {
  kernel(grid=[floordiv(m + 63, 64)], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    for i: int32 in serial(0, 64) {
      if (bx * 64 + i < m) {
        A[bx * 64 + i, tx] = 0.0f32
      } else {
        A[0, tx] = 2.0f32
      }
    }
  }
})");
}

TEST(SimplifyPass, DynamicDimensionsAreNonNegative) {
  expect_pass("simplify", R"(
func @f dyn[n: int32](A: global float32[n]) {
  if (n >= 0) {
    for i: int32 in serial(0, n) {
      if (i < n) {
        A[i] = max(cast<float32>(min(i, n - 1)), 0.0f32)
      }
    }
  }
})", R"(
func @f dyn[n: int32](A: global float32[n]) {
  for i: int32 in serial(0, n) {
    A[i] = max(cast<float32>(i), 0.0f32)
  }
})");
}

TEST(SimplifyPass, TileOpRegionsAndArguments) {
  expect_pass("simplify", R"(
func @f(A: global float16[1024, 1024], C: global float32[1024]) {
  kernel(grid=[8], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc A_s: shared float16[128, 32]
    alloc F: fragment float32[128]
    for k: int32 in pipelined(0, 32) {num_stages = 3} {
      copy(A[bx * 128 + 0 :+ 64 + 64, floordiv(k * 64, 2) :+ 16 * 2], A_s[0 :+ 128, 0 :+ 32])
    }
    fill(F[0 :+ 128], cast<float32>(floormod(bx, 8) - bx))
    copy(F[0 :+ 128], C[bx * 128 :+ min(128, 1024 - bx * 128)])
  }
})", R"(
func @f(A: global float16[1024, 1024], C: global float32[1024]) {
  kernel(grid=[8], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc A_s: shared float16[128, 32]
    alloc F: fragment float32[128]
    for k: int32 in pipelined(0, 32) {num_stages = 3} {
      copy(A[bx * 128 :+ 128, k * 32 :+ 32], A_s[0 :+ 128, 0 :+ 32])
    }
    fill(F[0 :+ 128], 0.0f32)
    copy(F[0 :+ 128], C[bx * 128 :+ 128])
  }
})");
}

TEST(SimplifyPass, LetsEmptyBranchesAndEvaluates) {
  expect_pass("simplify", R"(
func @f(A: global float32[64]) {
  for i: int32 in serial(0, 8) {
    let t: int32 = i * 2 + 1 {
      if (t < 16) {
        A[t] = 1.0f32
      }
      if (t == 4) {
        A[0] = 2.0f32
      }
    }
    if (i < 4) {
    } else {
      A[i] = 3.0f32
    }
    evaluate i + 1
    evaluate tl.printf<void>("%d", i + 0)
  }
  for j: int32 in serial(0, 8) {
    if (j > 100) {
      A[j] = 4.0f32
    }
  }
})", R"(
func @f(A: global float32[64]) {
  for i: int32 in serial(0, 8) {
    let t: int32 = i * 2 + 1 {
      A[t] = 1.0f32
    }
    if (i >= 4) {
      A[i] = 3.0f32
    }
    evaluate tl.printf<void>("%d", i)
  }
})");
}

TEST(SimplifyPass, UnchangedFunctionIsReturnedAsIs) {
  PrimFunc f = parse_func(R"(
func @f(A: global float32[64]) {
  for i: int32 in serial(0, 64) {
    A[i] = A[i] + 1.0f32
  }
})", "<test>");
  PassContext ctx;
  PrimFunc g = simplify(f, ctx);
  EXPECT_EQ(f.get(), g.get());
}

TEST(SimplifyPass, SimplifyStmtUsesTheCallersKnowledge) {
  Var i("i");
  Buffer A("A", DataType::Float32(), {make_int(64)}, MemScope::kShared);
  Analyzer an;
  an.bind(i, Range(0, 8));
  Stmt s = make_if(i < 8, make_store(A, {floordiv(i, 8) + i}, make_float(1.0)));
  EXPECT_EQ(print_stmt(simplify_stmt(s, an)), "A[i] = 1.0f32\n");
}

}  // namespace
}  // namespace tl
