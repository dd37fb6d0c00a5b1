#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

TEST(FillOp, ChecksAccessAndLoopForm) {
  Buffer S = shared("S", DataType::Float(16), {c(4), c(8)});
  expect_check_ok(op_at(1, "fill", {full(S), make_float(1.5)}));
  expect_check_ok(op_at(1, "tile.fill", {full(S), make_int(0)}));
  expect_check_error<TypeError>(op_at(2, "fill", {full(S), full(S)}), {"kernel.py:2:5: T.fill: ", "argument 'value' must be a scalar"});
  expect_check_error<TypeError>(op_at(2, "fill", {make_float(1.0), full(S)}), {"argument 'dst' must be a buffer"});
  auto acc = get_tile_op("fill").effects(as_op(op_at(1, "fill", {full(S), make_float(1.5)})));
  EXPECT_TRUE(acc.reads.empty());
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"S"});
  EXPECT_EQ(print_stmt(lower(op_at(1, "fill", {region(S, {{c(1), c(1)}, {c(0), c(8)}}), make_float(1.5)}))),
            "for i0: int32 in parallel(0, 8) {\n"
            "  S[1, i0] = 1.5f16\n"
            "}\n");
}

TEST(FillOp, GlobalTailWritesAreDropped) {
  Buffer G = global("G", DataType::Float32(), {c(100)});
  Var bx("bx");
  LowerContext ctx;
  ctx.var_ranges[bx] = Range(c(0), c(4));
  EXPECT_EQ(print_stmt(lower(op_at(1, "fill", {region(G, {{bx * 32, c(32)}}), make_float(0.0)}), ctx)),
            "for i0: int32 in parallel(0, 32) {\n"
            "  if (bx * 32 + i0 < 100) {\n"
            "    G[bx * 32 + i0] = 0.0f32\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace tl
