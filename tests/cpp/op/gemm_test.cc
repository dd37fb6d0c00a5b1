#include "op/gemm.h"

#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32(), f16 = DataType::Float(16);

TEST(GemmOp, ChecksShapesDtypesAndAttributes) {
  Buffer A = shared("A_s", f16, {c(64), c(32)}), B = shared("B_s", f16, {c(32), c(48)});
  Buffer Bt = shared("Bt_s", f16, {c(48), c(32)}), C = fragment("C_l", f32, {c(64), c(48)});
  expect_check_ok(op_at(1, "gemm", {full(A), full(B), full(C)}));
  expect_check_ok(op_at(1, "gemm", {full(A), full(Bt), full(C)}, {{"transpose_B", Attr(true)}}));
  // K of A (32) vs K of a transposed-by-mistake B (48).
  expect_check_error<ValueError>(op_at(9, "gemm", {full(A), full(Bt), full(C)}),
                                 {"kernel.py:9:5: T.gemm: ", "K extent (reduction) of A (32) and B (48) differ",
                                  "Bt_s[0:48, 0:32] (shared float16[48, 32])", "pass transpose_B=True"});
  Buffer Cwide = fragment("C_w", f32, {c(64), c(64)});
  expect_check_error<ValueError>(op_at(9, "gemm", {full(A), full(Bt), full(Cwide)}),
                                 {"K extent (reduction) of A (32) and B (48) differ: A A_s[0:64, 0:32]"});
  Buffer Csmall = fragment("C_s", f32, {c(32), c(48)});
  expect_check_error<ValueError>(op_at(2, "gemm", {full(A), full(B), full(Csmall)}), {"M extent (rows) of A (64) and C (32)"});
  Buffer Ci = fragment("C_i", DataType::Int32(), {c(64), c(48)});
  Buffer A8 = shared("A8", DataType::Int(8), {c(64), c(32)}), B8 = shared("B8", DataType::Int(8), {c(32), c(48)});
  expect_check_ok(op_at(1, "gemm", {full(A8), full(B8), full(Ci)}));
  expect_check_error<TypeError>(op_at(1, "gemm", {full(A8), full(B8), full(C)}), {"unsupported dtypes A int8, B int8, C float32"});
  Buffer C16 = fragment("C16", DataType::Int(16), {c(64), c(48)});
  expect_check_error<TypeError>(op_at(1, "gemm", {full(A8), full(B8), full(C16)}), {"must be int32 or int64"});
  expect_check_error<ValueError>(op_at(1, "gemm", {full(A), full(B), full(C)}, {{"policy", Attr("Diagonal")}}),
                                 {"unknown policy 'Diagonal'", "'Square'"});
  Buffer A3 = shared("A3", f16, {c(2), c(64), c(32)});
  // A pipeline-stage index as a leading unit dimension is fine; a larger one is not.
  expect_check_ok(op_at(1, "gemm", {region(A3, {{c(1), c(1)}, {c(0), c(64)}, {c(0), c(32)}}), full(B), full(C)}));
  expect_check_error<ValueError>(op_at(1, "gemm", {full(A3), full(B), full(C)}),
                                 {"only the last two dimensions of a gemm operand may be larger than 1"});
  expect_check_error<TypeError>(op_at(1, "gemm", {full(A), full(B)}), {"expects 3 arguments"});
}

TEST(GemmOp, AccessReadsCUnlessAlwaysCleared) {
  Buffer A = shared("A", f32, {c(8), c(8)}), B = shared("B", f32, {c(8), c(8)}), C = fragment("C", f32, {c(8), c(8)});
  auto acc = get_tile_op("gemm").effects(as_op(op_at(1, "gemm", {full(A), full(B), full(C)})));
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"A", "B", "C"}));
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"C"});
  acc = get_tile_op("gemm").effects(as_op(op_at(1, "gemm", {full(A), full(B), full(C)}, {{"clear_accum", Attr(true)}})));
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"A", "B"}));
  Var k("k");
  acc = get_tile_op("gemm").effects(as_op(op_at(1, "gemm", {full(A), full(B), full(C)}, {{"clear_accum", Attr(eq(k, c(0)))}})));
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"A", "B", "C"}));
}

TEST(GemmOp, LoopFormAccumulatesInCsDtype) {
  Buffer A = shared("A", f16, {c(4), c(8)}), B = shared("B", f16, {c(6), c(8)}), C = fragment("C", f32, {c(4), c(6)});
  Var ko("ko");
  Stmt s = lower(op_at(1, "gemm", {full(A), full(B), full(C)},
                       {{"transpose_B", Attr(true)}, {"clear_accum", Attr(eq(ko, c(0)))}}));
  EXPECT_EQ(print_stmt(s),
            "if (ko == 0) {\n"
            "  for i: int32 in parallel(0, 4) {\n"
            "    for j: int32 in parallel(0, 6) {\n"
            "      C[i, j] = 0.0f32\n"
            "    }\n"
            "  }\n"
            "}\n"
            "for i: int32 in parallel(0, 4) {\n"
            "  for k: int32 in serial(0, 8) {\n"
            "    for j: int32 in parallel(0, 6) {\n"
            "      C[i, j] = C[i, j] + cast<float32>(A[i, k]) * cast<float32>(B[j, k])\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(GemmOp, AscendSpellingsShareTheAnalysis) {
  Buffer A = shared("A", f16, {c(16), c(16)}), B = shared("B", f16, {c(16), c(16)}), C = fragment("C", f32, {c(16), c(16)});
  GemmOperands g = analyze_gemm(as_op(op_at(1, "gemm_v0", {full(A), full(B), full(C)}, {{"init", Attr(true)}, {"transpose_A", Attr(true)}})));
  EXPECT_TRUE(is_const_value(g.clear_accum, 1));
  EXPECT_TRUE(g.trans_A);
  g = analyze_gemm(as_op(op_at(1, "mma", {full(A), full(B), full(C)})));
  EXPECT_TRUE(is_const_value(g.clear_accum, 0));
  expect_check_error<TypeError>(op_at(1, "mma", {full(A), full(B)}), {"T.mma(A, B, C)"});
}

}  // namespace
}  // namespace tl
