#include "transform/resolve_buffer_views.h"

#include <gtest/gtest.h>

#include <map>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/verifier.h"

namespace tl {
namespace {

// Buffers of `f` by name: parameters and allocations.
std::map<std::string, Buffer> buffers_of(const PrimFunc& f) {
  std::map<std::string, Buffer> m;
  for (const Param& p : f.params())
    if (p.is_buffer()) m[p.buffer.name()] = p.buffer;
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (const auto* a = s.as<AllocateNode>()) m[a->buffer.name()] = a->buffer;
  });
  return m;
}

PrimFunc resolve(const char* text, const std::vector<std::pair<std::string, std::string>>& views) {
  PrimFunc f = parse_func(text, "<before>");
  auto b = buffers_of(f);
  std::vector<std::pair<Buffer, Buffer>> pairs;
  for (auto& [v, base] : views) pairs.emplace_back(b.at(v), b.at(base));
  PrimFunc out = resolve_buffer_views(f, pairs);
  verify(out);
  return out;
}

void expect_ir(const PrimFunc& got, const char* expected) {
  PrimFunc want = parse_func(expected, "<expected>");
  std::string diff = structural_diff(got, want);
  EXPECT_TRUE(diff.empty()) << diff << "\n--- got ---\n" << print_func(got);
}

// TileLang's im2col puzzle: a 3-D shared tile written element by element, its 2-D reshape the
// gemm operand. The tile is allocated 2-D; the 3-D stores go through the linear index.
TEST(ResolveBufferViews, ViewUsedByTileOpBecomesTheStorage) {
  PrimFunc got = resolve(R"(
func @f(X: global float16[4, 8, 16], K: global float16[16, 32], O: global float32[32, 32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc Xs: shared float16[4, 8, 16]
    alloc acc: fragment float32[32, 32]
    alloc Ks: shared float16[16, 32]
    for i: int32 in parallel(0, 4) {
      for j: int32 in parallel(0, 8) {
        for k: int32 in parallel(0, 16) {
          Xs[i, j, k] = X[i, j, k]
        }
      }
    }
    alloc Xr: shared float16[32, 16]
    copy(K[0 :+ 16, 0 :+ 32], Ks[0 :+ 16, 0 :+ 32])
    gemm(Xr[0 :+ 32, 0 :+ 16], Ks[0 :+ 16, 0 :+ 32], acc[0 :+ 32, 0 :+ 32]) {clear_accum = e:(true), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    copy(acc[0 :+ 32, 0 :+ 32], O[0 :+ 32, 0 :+ 32])
  }
})", {{"Xr", "Xs"}});
  expect_ir(got, R"(
func @f(X: global float16[4, 8, 16], K: global float16[16, 32], O: global float32[32, 32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc Xr: shared float16[32, 16]
    alloc acc: fragment float32[32, 32]
    alloc Ks: shared float16[16, 32]
    for i: int32 in parallel(0, 4) {
      for j: int32 in parallel(0, 8) {
        for k: int32 in parallel(0, 16) {
          Xr[floordiv((i * 8 + j) * 16 + k, 16), floormod((i * 8 + j) * 16 + k, 16)] = X[i, j, k]
        }
      }
    }
    copy(K[0 :+ 16, 0 :+ 32], Ks[0 :+ 16, 0 :+ 32])
    gemm(Xr[0 :+ 32, 0 :+ 16], Ks[0 :+ 16, 0 :+ 32], acc[0 :+ 32, 0 :+ 32]) {clear_accum = e:(true), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    copy(acc[0 :+ 32, 0 :+ 32], O[0 :+ 32, 0 :+ 32])
  }
})");
}

// A view with unit dimensions added (T.view(smem, (1, n))) in a scan: the same tile; the base
// stays the storage and the view's whole region is the base's.
TEST(ResolveBufferViews, SameSqueezedShapeMapsToTheBase) {
  PrimFunc got = resolve(R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc s: shared float32[64]
    alloc v: shared float32[1, 64]
    copy(A[0 :+ 64], s[0 :+ 64])
    cumsum(v[0 :+ 1, 0 :+ 64], v[0 :+ 1, 0 :+ 64]) {dim = 0, reverse = false}
    B[tx] = v[0, tx]
  }
})", {{"v", "s"}});
  expect_ir(got, R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc s: shared float32[64]
    copy(A[0 :+ 64], s[0 :+ 64])
    cumsum(s[0 :+ 64], s[0 :+ 64]) {dim = 0, reverse = false}
    B[tx] = s[tx]
  }
})");
}

// TileLang's im2col puzzle copies its 2-D gemm accumulator out through a 3-D reshape: the copy
// becomes its element loop over the storage's own shape (so a fragment gives the loop its layout),
// the destination indexed through the row-major position.
TEST(ResolveBufferViews, CopyOfAWholeViewInAnotherShapeBecomesALoop) {
  PrimFunc got = resolve(R"(
func @f(O: global float32[4, 8, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc acc: fragment float32[32, 16]
    fill(acc[0 :+ 32, 0 :+ 16], 1.0f32)
    alloc v: fragment float32[4, 8, 16]
    copy(v[0 :+ 4, 0 :+ 8, 0 :+ 16], O[0 :+ 4, 0 :+ 8, 0 :+ 16])
  }
})", {{"v", "acc"}});
  expect_ir(got, R"(
func @f(O: global float32[4, 8, 16]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc acc: fragment float32[32, 16]
    fill(acc[0 :+ 32, 0 :+ 16], 1.0f32)
    for v0: int32 in parallel(0, 32) {
      for v1: int32 in parallel(0, 16) {
        O[floordiv(v0 * 16 + v1, 128), floormod(floordiv(v0 * 16 + v1, 16), 8), floormod(v0 * 16 + v1, 16)] = acc[v0, v1]
      }
    }
  }
})");
}

TEST(ResolveBufferViews, RejectsWhatHasNoSingleStorageShape) {
  const char* two_tiles = R"(
func @f(A: global float32[8, 8], R: global float32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc s: shared float32[8, 8]
    alloc v: shared float32[4, 16]
    alloc r: fragment float32[4]
    copy(A[0 :+ 8, 0 :+ 8], s[0 :+ 8, 0 :+ 8])
    reduce(v[0 :+ 4, 0 :+ 16], r[0 :+ 4]) {clear = true, dim = 1, type = "sum"}
    copy(r[0 :+ 4], R[0 :+ 4])
  }
})";
  try {
    resolve(two_tiles, {{"v", "s"}});
    ADD_FAILURE() << "expected NotImplemented";
  } catch (const NotImplemented& e) {
    EXPECT_NE(std::string(e.what()).find("T.reshape"), std::string::npos) << e.what();
  }
  const char* sizes = R"(
func @f(A: global float32[8, 8]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc s: shared float32[8, 8]
    alloc v: shared float32[4, 8]
    A[0, 0] = v[0, 0]
  }
})";
  EXPECT_THROW(resolve(sizes, {{"v", "s"}}), ValueError);
}

}  // namespace
}  // namespace tl
