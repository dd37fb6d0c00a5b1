#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32(), f16 = DataType::Float(16);

Stmt reduce_op(const BufferRegion& src, const BufferRegion& dst, const std::string& type, int64_t dim, bool clear = true) {
  return op_at(5, "reduce", {src, dst}, {{"type", Attr(type)}, {"dim", Attr(dim)}, {"clear", Attr(clear)}});
}

TEST(ReduceOp, Checks) {
  Buffer X = fragment("X", f32, {c(16), c(32)}), row = fragment("row", f32, {c(16)}), col = fragment("col", f32, {c(32)});
  expect_check_ok(reduce_op(full(X), full(row), "max", 1));
  expect_check_ok(reduce_op(full(X), full(col), "sum", 0));
  expect_check_ok(reduce_op(full(X), full(row), "absmax", -1));  // negative dims count from the end
  expect_check_error<ValueError>(reduce_op(full(X), full(col), "sum", 1),
                                 {"kernel.py:5:5: T.reduce: ", "dst col[0:32] (fragment float32[32])",
                                  "must have src's shape [16, 32] without dimension 1, i.e. [16], but has [32]"});
  expect_check_error<ValueError>(reduce_op(full(X), full(row), "sum", 2), {"dim 2 is out of range", "(rank 2)"});
  expect_check_error<ValueError>(reduce_op(full(X), full(row), "mean", 1), {"unknown type 'mean'", "'absmax'"});
  Buffer B = fragment("B", DataType::Bool(), {c(16), c(32)});
  expect_check_error<TypeError>(reduce_op(full(B), full(row), "sum", 1), {"buffer 'B' has dtype bool"});
}

TEST(ReduceOp, AccessReadsDstWithoutClear) {
  Buffer X = fragment("X", f32, {c(4), c(8)}), r = fragment("r", f32, {c(4)});
  auto acc = get_tile_op("reduce").effects(as_op(reduce_op(full(X), full(r), "sum", 1, true)));
  EXPECT_EQ(names(acc.reads), std::vector<std::string>{"X"});
  acc = get_tile_op("reduce").effects(as_op(reduce_op(full(X), full(r), "sum", 1, false)));
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"X", "r"}));
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"r"});
}

TEST(ReduceOp, LoopForms) {
  Buffer X = fragment("X", f16, {c(4), c(8)}), rmax = fragment("rmax", f16, {c(4)}), cl = fragment("cl", f32, {c(8)});
  // Innermost dimension: a float32 scalar accumulator per row.
  EXPECT_EQ(print_stmt(lower(reduce_op(full(X), full(rmax), "max", 1))),
            "for i0: int32 in parallel(0, 4) {\n"
            "  alloc acc: local.var float32[1]\n"
            "  acc[0] = -inf_f32\n"
            "  for r: int32 in serial(0, 8) {\n"
            "    acc[0] = max(acc[0], cast<float32>(X[i0, r]))\n"
            "  }\n"
            "  rmax[i0] = cast<float16>(acc[0])\n"
            "}\n");
  // Outer dimension, float32 dst, no clear: accumulate whole rows into dst in place.
  EXPECT_EQ(print_stmt(lower(reduce_op(full(X), full(cl), "abssum", 0, false))),
            "for r: int32 in serial(0, 4) {\n"
            "  for i0: int32 in parallel(0, 8) {\n"
            "    cl[i0] = cl[i0] + abs(cast<float32>(X[r, i0]))\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace tl
