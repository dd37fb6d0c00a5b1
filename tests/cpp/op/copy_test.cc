#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32();

TEST(CopyOp, ChecksArgumentsAndShapes) {
  Buffer A = global("A", f32, {c(1024), c(512)});
  Buffer S = shared("A_s", DataType::Float(16), {c(64), c(32)});
  expect_check_ok(op_at(3, "copy", {region(A, {{c(0), c(64)}, {c(32), c(32)}}), full(S)}));
  // Unit dimensions are dropped before matching: a row of A into a 1-D tile.
  Buffer row = shared("row", f32, {c(32)});
  expect_check_ok(op_at(3, "copy", {region(A, {{c(5), c(1)}, {c(0), c(32)}}), full(row)}));
  expect_check_error<ValueError>(op_at(12, "copy", {region(A, {{c(0), c(128)}, {c(0), c(32)}}), full(S)}),
                                 {"kernel.py:12:5: T.copy: ", "src A[0:128, 0:32] (global float32[1024, 512])",
                                  "dst A_s[0:64, 0:32] (shared float16[64, 32])", "[128, 32] and [64, 32]"});
  expect_check_error<TypeError>(op_at(4, "copy", {full(A)}), {"T.copy: expects 2 arguments, got 1", "T.copy(src, dst)"});
  expect_check_error<TypeError>(op_at(4, "copy", {full(A), make_float(1.0)}), {"argument 'dst' must be a buffer"});
  expect_check_error<ValueError>(op_at(4, "copy", {full(S), region(row, {{c(16), c(32)}})}),
                                 {"lies outside the buffer", "16:48 of 32"});
}

TEST(CopyOp, AccessRegions) {
  Buffer A = global("A", f32, {c(64)}), S = shared("S", f32, {c(64)});
  Stmt s = op_at(1, "copy", {full(A), full(S)});
  AccessRegions acc = get_tile_op("copy").effects(as_op(s));
  EXPECT_EQ(names(acc.reads), std::vector<std::string>{"A"});
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"S"});
}

TEST(CopyOp, LoopFormGuardsOnlyWhatCanBeOutOfBounds) {
  Buffer A = global("A", f32, {c(1000), c(64)});
  Buffer S = shared("S", f32, {c(128), c(64)});
  Var by("by");
  LowerContext ctx;
  ctx.var_ranges[by] = Range(c(0), c(8));  // by in [0, 8): rows up to 1023 >= 1000, columns in range
  Stmt load = lower(op_at(1, "copy", {region(A, {{by * 128, c(128)}, {c(0), c(64)}}), full(S)}), ctx);
  EXPECT_EQ(print_stmt(load),
            "for i0: int32 in parallel(0, 128) {\n"
            "  for i1: int32 in parallel(0, 64) {\n"
            "    S[i0, i1] = select(by * 128 + i0 < 1000, A[by * 128 + i0, i1], 0.0f32)\n"
            "  }\n"
            "}\n");
  Stmt store = lower(op_at(1, "copy", {full(S), region(A, {{by * 128, c(128)}, {c(0), c(64)}})}), ctx);
  EXPECT_EQ(print_stmt(store),
            "for i0: int32 in parallel(0, 128) {\n"
            "  if (by * 128 + i0 < 1000) {\n"
            "    for i1: int32 in parallel(0, 64) {\n"
            "      A[by * 128 + i0, i1] = S[i0, i1]\n"
            "    }\n"
            "  }\n"
            "}\n");
  // No guard when every access is provably inside; none either when guards are turned off.
  ctx.var_ranges[by] = Range(c(0), c(7));
  EXPECT_EQ(print_stmt(lower(op_at(1, "copy", {region(A, {{by * 128, c(128)}, {c(0), c(64)}}), full(S)}), ctx))
                .find("select"),
            std::string::npos);
  LowerContext off;
  off.guard_global_bounds = false;
  EXPECT_EQ(print_stmt(lower(op_at(1, "copy", {region(A, {{by * 128, c(128)}, {c(0), c(64)}}), full(S)}), off))
                .find("select"),
            std::string::npos);
}

TEST(CopyOp, DynamicDimensionIsGuardedAndDtypeConverted) {
  Var m("m");
  Buffer A = global("A", DataType::Float(16), {m});
  Buffer S = shared("S", f32, {c(32)});
  Var bx("bx");
  LowerContext ctx;
  ctx.var_ranges[bx] = Range(c(0), ceildiv(m, c(32)));
  EXPECT_EQ(print_stmt(lower(op_at(1, "copy", {region(A, {{bx * 32, c(32)}}), full(S)}), ctx)),
            "for i0: int32 in parallel(0, 32) {\n"
            "  S[i0] = cast<float32>(select(bx * 32 + i0 < m, A[bx * 32 + i0], 0.0f16))\n"
            "}\n");
}

}  // namespace
}  // namespace tl
