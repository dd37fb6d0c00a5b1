#include "layout/swizzle.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tl {
namespace {

// Byte addresses of the 8 rows r0..r0+7 at 16-byte column chunk c: one ldmatrix 8x8 matrix.
std::vector<int64_t> ldmatrix_rows(const Layout& l, int elem_bytes, int64_t r0, int64_t chunk) {
  std::vector<int64_t> out;
  const std::vector<int64_t>& s = l.input_shape();
  for (int64_t r = r0; r < r0 + 8; ++r) {
    std::vector<int64_t> idx(s.size(), 0);
    int64_t rem = r;
    for (int d = static_cast<int>(s.size()) - 2; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rem % s[static_cast<size_t>(d)];
      rem /= s[static_cast<size_t>(d)];
    }
    idx.back() = chunk * (16 / elem_bytes);
    out.push_back(l.apply_flat(idx) * elem_bytes);
  }
  return out;
}

int64_t rows_of(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (size_t i = 0; i + 1 < s.size(); ++i) n *= s[i];
  return n;
}

TEST(Swizzle, BijectiveVectorizableAndConflictFree) {
  struct Case {
    std::vector<int64_t> shape;
    int bytes;
  };
  for (const Case& c : std::vector<Case>{{{64, 64}, 2},   // 128-byte rows
                                         {{128, 32}, 2},  // 64-byte rows
                                         {{64, 16}, 2},   // 32-byte rows
                                         {{32, 128}, 2},  // 256-byte rows
                                         {{3, 64, 32}, 2},  // pipeline stages
                                         {{32, 32}, 4},   // fp32 128-byte rows
                                         {{64, 64}, 1},   // int8
                                         {{16, 8}, 2}}) {  // 16-byte rows
    SCOPED_TRACE(::testing::Message() << "shape " << c.shape.back() << " x " << c.bytes);
    ASSERT_TRUE(swizzle_applicable(c.shape, c.bytes));
    Layout l = make_swizzled_layout(c.shape, c.bytes);
    std::string why;
    EXPECT_TRUE(l.is_bijective(&why)) << why;
    EXPECT_TRUE(rows_vectorizable(l, c.bytes));
    int64_t chunks = c.shape.back() * c.bytes / 16;
    for (int64_t r0 = 0; r0 + 8 <= rows_of(c.shape); r0 += 8)
      for (int64_t ch = 0; ch < chunks; ++ch)
        EXPECT_EQ(shared_wavefronts(ldmatrix_rows(l, c.bytes, r0, ch), 16), 1) << "rows " << r0 << " chunk " << ch;
  }
}

TEST(Swizzle, RowMajorConflictsShowTheCheckerWorks) {
  Layout rm = make_row_major_layout({64, 64});
  EXPECT_EQ(shared_wavefronts(ldmatrix_rows(rm, 2, 0, 0), 16), 8);
  Layout sw = make_swizzled_layout({64, 64}, 2);
  EXPECT_EQ(shared_wavefronts(ldmatrix_rows(sw, 2, 0, 0), 16), 1);
}

// 32 threads storing consecutive 16-byte chunks (cp.async of a row-major tile): 4 wavefronts,
// the minimum for 512 bytes.
TEST(Swizzle, CopyStoresStayAtTheMinimum) {
  Layout sw = make_swizzled_layout({64, 64}, 2);
  for (int64_t first = 0; first < 64 * 64; first += 32 * 8) {
    std::vector<int64_t> addrs;
    for (int64_t t = 0; t < 32; ++t) {
      int64_t e = first + t * 8;
      addrs.push_back(sw.apply_flat({e / 64, e % 64}) * 2);
    }
    EXPECT_EQ(shared_wavefronts(addrs, 16), 4);
  }
}

TEST(Swizzle, NotApplicable) {
  EXPECT_FALSE(swizzle_applicable({64, 48}, 2));  // 96-byte rows
  EXPECT_FALSE(swizzle_applicable({64, 4}, 2));   // 8-byte rows
  EXPECT_FALSE(swizzle_applicable({1, 16}, 2));   // 32 bytes in total
  EXPECT_THROW(make_swizzled_layout({64, 48}, 2), LayoutError);
}

// The gmma layouts against the hardware's definition of its swizzle modes, written independently:
// the tile is stored panel after panel (kSwz bytes of the contiguous dimension per panel row),
// and in the resulting linear byte address the 16-byte chunk bits [4, 4 + b) are XORed with bits
// [7, 7 + b), b = log2(kSwz / 16).
TEST(Swizzle, GmmaLayoutsAreTheHardwareSwizzleModes) {
  struct Case {
    std::vector<int64_t> shape;
    int bytes, swz;
  };
  for (const Case& c : std::vector<Case>{{{64, 64}, 2, 128},    // K-major A, block_K = 64
                                         {{64, 256}, 2, 128},   // MN-major B, 4 panels
                                         {{2, 32, 128}, 2, 128},  // two pipeline stages, 2 panels
                                         {{128, 32}, 2, 64},    // block_K = 32
                                         {{64, 16}, 2, 32}}) {  // block_K = 16
    SCOPED_TRACE(::testing::Message() << "cols " << c.shape.back() << ", swizzle " << c.swz);
    ASSERT_EQ(gmma_swizzle_bytes(c.shape.back(), c.bytes), c.swz);
    Layout l = make_gmma_layout(c.shape, c.bytes, c.swz);
    std::string why;
    ASSERT_TRUE(l.is_bijective(&why)) << why;
    EXPECT_TRUE(rows_vectorizable(l, c.bytes));
    EXPECT_TRUE(chunk_preserving(l));
    const int64_t rows = c.shape[c.shape.size() - 2], cols = c.shape.back(), panel = c.swz / c.bytes;
    const int64_t mask = c.swz / 16 - 1;
    for_each_index(c.shape, [&](const std::vector<int64_t>& idx) {
      int64_t stage = c.shape.size() == 3 ? idx[0] : 0;
      int64_t r = idx[idx.size() - 2], col = idx.back();
      int64_t linear = stage * rows * cols * c.bytes + (col / panel) * rows * c.swz + r * c.swz + (col % panel) * c.bytes;
      int64_t hw = linear ^ (((linear >> 7) & mask) << 4);
      EXPECT_EQ(l.apply_flat(idx) * c.bytes, hw);
      return !::testing::Test::HasFailure();
    });
  }
  // For 128-byte rows the gmma layout is the ldmatrix swizzle.
  EXPECT_TRUE(make_gmma_layout({3, 64, 64}, 2, 128).same_map(make_swizzled_layout({3, 64, 64}, 2)));
  EXPECT_EQ(gmma_swizzle_bytes(48, 2), 0);  // 96-byte rows: no gmma layout
  EXPECT_THROW(make_gmma_layout({12, 64}, 2, 128), LayoutError);  // rows not a multiple of 8
  EXPECT_FALSE(chunk_preserving(make_padded_layout({8, 8}, 12)));
}

}  // namespace
}  // namespace tl
