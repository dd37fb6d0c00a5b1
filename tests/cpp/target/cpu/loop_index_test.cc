#include "target/cpu/loop_index.h"

#include <gtest/gtest.h>

#include "arith/analyzer.h"

namespace tl {
namespace {

// A loop `for i in [min, min + 16)` (its body irrelevant) and its variable.
struct Loop {
  Var i{"i"};
  Stmt s;
  explicit Loop(Expr min) : s(make_for(i, std::move(min), make_int(16), ForKind::kSerial, make_evaluate(make_int(0)))) {}
  const ForNode* node() const { return s.as<ForNode>(); }
};

void expect_start(const Expr& idx, const ForNode* n, const Expr& want) {
  std::optional<Expr> got = unit_stride_start(idx, n);
  ASSERT_TRUE(got.has_value());
  Analyzer an;
  EXPECT_TRUE(is_zero(an.simplify(*got - want))) << to_string(*got) << " vs " << to_string(want);
}

// (something free of i) + i, in either order, i alone, and i widened to int64: the start is the
// index at i = min.
TEST(UnitStrideStart, OffsetPlusLoopVariable) {
  Var x("x"), y("y", DataType::Int64());
  Loop l(make_int(3));
  expect_start(x + l.i, l.node(), x + make_int(3));
  expect_start(l.i + x * make_int(8), l.node(), x * make_int(8) + make_int(3));
  expect_start(make_cast(DataType::Int64(), l.i) + y, l.node(), y + make_int(3, DataType::Int64()));
  Loop from_x(x);
  expect_start(from_x.i, from_x.node(), x);
  expect_start(make_int(2) * from_x.i - from_x.i + make_int(5), from_x.node(), x + make_int(5));
}

// Any other stride or shape: no run start.
TEST(UnitStrideStart, OtherIndicesHaveNone) {
  Var x("x");
  Loop l(make_int(0));
  EXPECT_FALSE(unit_stride_start(l.i * make_int(2), l.node()).has_value());
  EXPECT_FALSE(unit_stride_start(x - l.i, l.node()).has_value());
  EXPECT_FALSE(unit_stride_start(l.i * l.i + x, l.node()).has_value());
  EXPECT_FALSE(unit_stride_start(x, l.node()).has_value());
  Var other("j");
  EXPECT_FALSE(unit_stride_start(other + x, l.node()).has_value());
}

}  // namespace
}  // namespace tl
