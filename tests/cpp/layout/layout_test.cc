#include "layout/layout.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "layout/swizzle.h"

namespace tl {
namespace {

TEST(Layout, RowMajorPaddedAndPrinting) {
  Layout rm = make_row_major_layout({4, 8});
  EXPECT_EQ(rm.apply_flat({2, 3}), 19);
  std::string why;
  EXPECT_TRUE(rm.is_bijective(&why)) << why;
  Layout pad = make_padded_layout({4, 8}, 12);
  EXPECT_EQ(pad.apply_flat({2, 3}), 27);
  EXPECT_FALSE(pad.is_bijective(&why));  // 48 slots for 32 elements
  EXPECT_NE(rm.str().find("row_major"), std::string::npos);
  Var i("i"), j("j");
  std::vector<Expr> m = rm.map({i + 1, j});
  EXPECT_EQ(eval_index(m[0], {{i, 1}, {j, 5}}), 21);
  EXPECT_TRUE(rm.same_map(make_row_major_layout({4, 8})));
  // One 128-byte line has phase 0: the swizzle is the identity there, and not beyond.
  EXPECT_TRUE(rm.same_map(make_swizzled_layout({4, 8}, 4)));
  EXPECT_FALSE(make_row_major_layout({16, 8}).same_map(make_swizzled_layout({16, 8}, 4)));
}

TEST(Layout, EvalIndexCoversIndexArithmetic) {
  Var x("x"), y("y");
  std::map<Var, int64_t, VarLess> env{{x, -7}, {y, 2}};
  EXPECT_EQ(eval_index(floordiv(x, y), env), -4);
  EXPECT_EQ(eval_index(floormod(x, y), env), 1);
  EXPECT_EQ(eval_index(make_binary(BinOp::kBitXor, y, make_int(7)), env), 5);
  EXPECT_EQ(eval_index(make_select(x < y, x, y), env), -7);
  EXPECT_THROW(eval_index(x + Var("z"), env), ValueError);
}

}  // namespace
}  // namespace tl
