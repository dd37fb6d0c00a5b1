#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32(), f16 = DataType::Float(16);

TEST(TileElementwiseOp, UnaryAndBinaryChecks) {
  Buffer A = shared("A", f16, {c(4), c(16)}), B = shared("B", f16, {c(4), c(16)}), Cc = shared("C", f16, {c(16), c(4)});
  Buffer I = shared("I", DataType::Int32(), {c(4), c(16)});
  expect_check_ok(op_at(1, "tile.exp", {full(B), full(A)}));
  expect_check_ok(op_at(1, "tile.abs", {full(I), full(I)}));
  expect_check_error<TypeError>(op_at(2, "tile.exp", {full(I), full(A)}),
                                {"kernel.py:2:5: T.tile.exp: ", "buffer 'I' has dtype int32", "floating-point"});
  expect_check_error<ValueError>(op_at(2, "tile.sqrt", {full(Cc), full(A)}), {"[16, 4] and [4, 16]"});
  expect_check_ok(op_at(1, "tile.add", {full(B), full(A), make_float(2.0)}));
  expect_check_ok(op_at(1, "tile.max", {full(B), full(A), full(B)}));
  expect_check_error<ValueError>(op_at(1, "tile.mul", {full(B), full(A), full(Cc)}), {"dst", "b C[0:16, 0:4]"});
  expect_check_error<TypeError>(op_at(1, "tile.sub", {full(B), full(A)}), {"T.tile.sub(dst, a, b)"});
  auto acc = get_tile_op("tile.add").effects(as_op(op_at(1, "tile.add", {full(B), full(A), full(Cc)})));
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"B"});
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"A", "C"}));
  acc = get_tile_op("tile.axpy").effects(as_op(op_at(1, "tile.axpy", {full(B), full(A), make_float(2.0)})));
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"B", "A"}));
}

// The effect model names the argument of each region (the Ascend simulator's operand roles come from
// it): the roles are per argument, also when two arguments are the same region.
TEST(TileElementwiseOp, EffectsNameTheirArguments) {
  Buffer A = shared("A", f16, {c(4), c(16)}), B = shared("B", f16, {c(4), c(16)});
  auto acc = get_tile_op("tile.add").effects(as_op(op_at(1, "tile.add", {full(B), full(B), full(A)})));
  EXPECT_EQ(acc.write_args, std::vector<int>{0});
  EXPECT_EQ(acc.read_args, (std::vector<int>{1, 2}));
  EXPECT_TRUE(acc.writes_arg(0));
  EXPECT_FALSE(acc.reads_arg(0));
  EXPECT_TRUE(acc.reads_arg(1));
  EXPECT_FALSE(acc.writes_arg(1));
  // tile.axpy(dst, src, alpha) reads and writes dst; alpha is no region.
  acc = get_tile_op("tile.axpy").effects(as_op(op_at(1, "tile.axpy", {full(B), full(A), make_float(2.0)})));
  EXPECT_EQ(acc.read_args, (std::vector<int>{0, 1}));
  EXPECT_EQ(acc.write_args, std::vector<int>{0});
  EXPECT_FALSE(acc.reads_arg(2));
  // gemm(A, B, C) with clear_accum: C is written, not read.
  Buffer Ga = shared("Ga", f32, {c(8), c(8)}), Gb = shared("Gb", f32, {c(8), c(8)}), Gc = fragment("Gc", f32, {c(8), c(8)});
  acc = get_tile_op("gemm").effects(
      as_op(op_at(1, "gemm", {full(Ga), full(Gb), full(Gc)}, {{"clear_accum", Attr(true)}})));
  EXPECT_EQ(acc.read_args, (std::vector<int>{0, 1}));
  EXPECT_EQ(acc.write_args, std::vector<int>{2});
  ASSERT_EQ(acc.reads.size(), acc.read_args.size());
  ASSERT_EQ(acc.writes.size(), acc.write_args.size());
}

TEST(TileElementwiseOp, LoopFormsComputeInFloat32) {
  Buffer A = shared("A", f16, {c(8)}), B = shared("B", f16, {c(8)});
  EXPECT_EQ(print_stmt(lower(op_at(1, "tile.silu", {full(B), full(A)}))),
            "for i0: int32 in parallel(0, 8) {\n"
            "  B[i0] = cast<float16>(cast<float32>(A[i0]) * sigmoid(cast<float32>(A[i0])))\n"
            "}\n");
  EXPECT_EQ(print_stmt(lower(op_at(1, "tile.relu", {full(B), full(A)}))),
            "for i0: int32 in parallel(0, 8) {\n"
            "  B[i0] = cast<float16>(max(cast<float32>(A[i0]), 0.0f32))\n"
            "}\n");
}

TEST(TileElementwiseOp, CastCompareSelect) {
  Buffer X = shared("X", f32, {c(16)}), I = shared("I", DataType::Int32(), {c(16)}), H = shared("H", f16, {c(16)});
  Buffer M = shared("M", DataType::UInt(8), {c(2)}), Mb = shared("Mb", DataType::Bool(), {c(16)});
  expect_check_error<ValueError>(op_at(1, "tile.cast", {full(I), full(X)}, {{"mode", Attr("CAST_UP")}}),
                                 {"unknown mode 'CAST_UP'", "'CAST_ODD'"});
  // Nearest-even float->float is a plain cast; other modes use tl.cast_rounding.
  EXPECT_NE(print_stmt(lower(op_at(1, "tile.cast", {full(H), full(X)}, {{"mode", Attr("CAST_RINT")}}))).find("H[i0] = cast<float16>(X[i0])"),
            std::string::npos);
  EXPECT_NE(print_stmt(lower(op_at(1, "tile.cast", {full(I), full(X)}, {{"mode", Attr("CAST_NONE")}}))).find("tl.cast_rounding<int32>(X[i0], \"CAST_NONE\")"),
            std::string::npos);
  expect_check_ok(op_at(1, "tile.compare", {full(M), full(X), make_float(0.0)}, {{"mode", Attr("LT")}}));
  expect_check_ok(op_at(1, "tile.compare", {full(Mb), full(X), full(X)}, {{"mode", Attr("EQ")}}));
  expect_check_ok(op_at(1, "tile.compare", {full(X), full(X), full(X)}, {{"mode", Attr("EQ")}}));  // 1.0 / 0.0
  Buffer P = shared("P", DataType::Handle(), {c(16)});
  expect_check_error<TypeError>(op_at(1, "tile.compare", {full(P), full(X), full(X)}, {{"mode", Attr("EQ")}}),
                                {"compare writes a mask"});
  Buffer M3 = shared("M3", DataType::UInt(8), {c(3)});
  expect_check_error<ValueError>(op_at(1, "tile.compare", {full(M3), full(X), full(X)}), {"bit mask", "got [3]"});
  expect_check_ok(op_at(1, "tile.select", {full(X), full(M), full(X), make_float(0.0)}));
  expect_check_ok(op_at(1, "tile.select", {full(X), full(Mb), full(X), full(X)}));
}

TEST(TileElementwiseOp, TransposeBroadcastAndOpsWithoutLoopForm) {
  Buffer A = shared("A", f32, {c(4), c(8)}), At = shared("At", f32, {c(8), c(4)}), col = shared("col", f32, {c(4), c(1)});
  expect_check_ok(op_at(1, "tile.transpose", {full(At), full(A)}));
  expect_check_error<ValueError>(op_at(1, "tile.transpose", {full(A), full(A)}), {"dst [n, m] for src [m, n]"});
  expect_check_ok(op_at(1, "tile.broadcast", {full(A), full(col)}));
  EXPECT_EQ(print_stmt(lower(op_at(1, "tile.broadcast", {full(A), full(col)}))),
            "for i0: int32 in parallel(0, 4) {\n"
            "  for i1: int32 in parallel(0, 8) {\n"
            "    A[i0, i1] = col[i0, 0]\n"
            "  }\n"
            "}\n");
  for (const char* op : {"tile.sort", "tile.topk", "tile.reduce_sum", "tile.reduce_max", "tile.reduce_min"}) {
    const TileOp* def = find_tile_op(op);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_FALSE(def->has_loop_form()) << op;
  }
}

}  // namespace
}  // namespace tl
