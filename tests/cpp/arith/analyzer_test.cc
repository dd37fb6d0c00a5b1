#include "arith/analyzer.h"

#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/printer.h"

namespace tl {
namespace {

TEST(Analyzer, ScopesNestAndRestore) {
  Analyzer an;
  Var x("x");
  an.bind(x, Range(0, 100));
  {
    auto outer = an.bind_scoped(x, Range(0, 10));
    EXPECT_TRUE(an.can_prove(x < 10));
    {
      auto inner = an.assume(x < 5);
      EXPECT_TRUE(an.can_prove(x < 5));
    }
    EXPECT_FALSE(an.can_prove(x < 5));
    EXPECT_TRUE(an.can_prove(x < 10));
  }
  EXPECT_FALSE(an.can_prove(x < 10));
  EXPECT_TRUE(an.can_prove(x < 100));
  // Scopes can be moved (e.g. into a vector) and still end once.
  std::vector<Analyzer::Scope> scopes;
  scopes.push_back(an.bind_scoped(x, Range(0, 2)));
  scopes.push_back(an.assume(x > 0));
  EXPECT_EQ(print_expr(an.simplify(x)), "1");
  scopes.pop_back();
  scopes.pop_back();
  EXPECT_EQ(print_expr(an.simplify(x)), "x");
}

TEST(Analyzer, KernelIndicesBindAndRestoreTogether) {
  Analyzer an;
  Var n("n"), bx("bx"), by("by"), tx("tx");
  Stmt k = make_kernel({make_int(4), n}, {bx, by}, {make_int(128)}, {tx}, {}, make_evaluate(make_int(0)));
  auto* kn = k.as<KernelLaunchNode>();
  ASSERT_NE(kn, nullptr);
  auto ranges = kernel_index_ranges(*kn);
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_TRUE(ranges[0].first.same_as(bx));
  EXPECT_TRUE(ranges[2].first.same_as(tx));
  {
    auto scope = an.bind_kernel_scoped(*kn);
    EXPECT_TRUE(an.can_prove(bx < 4 && bx >= 0));
    EXPECT_TRUE(an.can_prove(by < n));
    EXPECT_TRUE(an.can_prove(tx * 4 + 3 < 512));
    {
      // Rewritten extents replace the kernel's own.
      auto inner = an.bind_kernel_scoped(*kn, {make_int(2), make_int(8)}, {make_int(64)});
      EXPECT_TRUE(an.can_prove(tx < 64));
      EXPECT_TRUE(an.can_prove(by < 8));
    }
    EXPECT_FALSE(an.can_prove(tx < 64));
    EXPECT_TRUE(an.can_prove(tx < 128));
  }
  EXPECT_FALSE(an.can_prove(bx < 4));
  EXPECT_FALSE(an.can_prove(tx < 128));
}

TEST(Analyzer, DynamicDimsAreNonNegative) {
  Var n("n");
  Buffer a("A", DataType::Float32(), {n}, MemScope::kGlobal);
  PrimFunc f("f", {Param{"A", Var(), a}}, make_evaluate(make_int(0)));
  Analyzer an;
  EXPECT_FALSE(an.can_prove(n >= 0));
  an.bind_dynamic_dims(f);
  EXPECT_TRUE(an.can_prove(n >= 0));
}

TEST(Analyzer, CanProveIsConservative) {
  Analyzer an;
  Var x("x"), y("y");
  EXPECT_FALSE(an.can_prove(x < y));
  EXPECT_FALSE(an.can_prove(x));  // not a condition
  EXPECT_FALSE(an.can_prove(Expr()));
  EXPECT_TRUE(an.can_prove(ne(x * 2, 1)));
  EXPECT_TRUE(an.can_prove(floormod(x, 4) < 4));
  EXPECT_TRUE(an.can_prove(floordiv(x, 4) * 4 <= x));
  EXPECT_TRUE(an.can_prove(ceildiv(x, 128) * 128 >= x));
}

TEST(Analyzer, CanProveEqual) {
  Analyzer an;
  Var x("x"), y("y");
  EXPECT_TRUE(an.can_prove_equal(x * 2 + y, y + x + x));
  EXPECT_TRUE(an.can_prove_equal(floordiv(x, 8) * 8 + floormod(x, 8), x));
  EXPECT_FALSE(an.can_prove_equal(x, y));
  Var f("f", DataType::Float32());
  EXPECT_TRUE(an.can_prove_equal(f, f));
  EXPECT_FALSE(an.can_prove_equal(f + 1.0f, f + 1.0f + 0.0f));
}

TEST(Analyzer, BindingKinds) {
  Analyzer an;
  Var i("i"), v("v"), d("d");
  an.bind(i, Range(4, 4));
  an.bind(v, i * 2);
  an.bind(d, ConstIntBound(0, ConstIntBound::kPosInf));
  EXPECT_EQ(an.const_int_bound(i), ConstIntBound(4, 7));
  EXPECT_EQ(an.const_int_bound(v), ConstIntBound(8, 14));
  EXPECT_TRUE(an.can_prove(d >= 0));
  // The let value is kept as a variable: simplify does not substitute it.
  EXPECT_EQ(print_expr(an.simplify(v + 1)), "v + 1");
  an.unbind(i);
  EXPECT_FALSE(an.can_prove(i >= 4));
  EXPECT_THROW(an.bind(Var(), Range(0, 1)), ValueError);
}

TEST(Analyzer, EmptyLoopRangeIsVacuous) {
  Analyzer an;
  Var i("i"), n("n");
  an.bind(n, ConstIntBound(0, 10));
  an.bind(i, Range(0, n));  // may run zero times
  EXPECT_EQ(an.const_int_bound(i), ConstIntBound(0, 9));
}

}  // namespace
}  // namespace tl
