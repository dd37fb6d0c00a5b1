#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32();

TEST(CumsumOp, ChecksAndLoopForm) {
  Buffer X = fragment("X", f32, {c(4), c(8)}), Y = fragment("Y", f32, {c(4), c(8)}), Z = fragment("Z", f32, {c(8), c(4)});
  expect_check_ok(op_at(1, "cumsum", {full(X), full(X)}, {{"dim", Attr(int64_t(1))}}));
  expect_check_error<ValueError>(op_at(6, "cumsum", {full(X), full(Z)}), {"kernel.py:6:5: T.cumsum: ", "[4, 8] and [8, 4]"});
  expect_check_error<ValueError>(op_at(6, "cumsum", {full(X), full(Y)}, {{"dim", Attr(int64_t(3))}}), {"dim 3 is out of range"});
  EXPECT_EQ(print_stmt(lower(op_at(1, "cumsum", {full(X), full(Y)}, {{"dim", Attr(int64_t(0))}, {"reverse", Attr(true)}}))),
            "for i0: int32 in parallel(0, 8) {\n"
            "  Y[3, i0] = X[3, i0]\n"
            "}\n"
            "for s: int32 in serial(1, 3) {\n"
            "  for i0: int32 in parallel(0, 8) {\n"
            "    Y[3 - s, i0] = Y[4 - s, i0] + X[3 - s, i0]\n"
            "  }\n"
            "}\n");
  auto acc = get_tile_op("cumsum").effects(as_op(op_at(1, "cumsum", {full(X), full(Y)})));
  EXPECT_EQ(names(acc.reads), std::vector<std::string>{"X"});
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"Y"});
}

}  // namespace
}  // namespace tl
