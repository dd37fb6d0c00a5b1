#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <chrono>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/tile_op.h"

namespace tl {
namespace {

// A registered op whose check wants a region first: proves the verifier consults the registry.
class CheckedOp final : public TileOp {
 public:
  CheckedOp() : TileOp("test.verifier_checked", TileOpKind::kElementwise) {}
  void verify(const TileOpNode& op) const override {
    if (op.args.empty() || !op.args[0].is_region())
      throw_error<TypeError>(op_error_prefix(op), "the first argument must be a buffer region");
  }
  AccessRegions effects(const TileOpNode&) const override { return {}; }
  Stmt lower_loops(const TileOpNode&, const LowerContext&) const override { return Stmt(); }
};
TileOpRegistration checked_op(std::make_unique<CheckedOp>());

void expect_valid(const std::string& text) {
  PrimFunc f = parse_func(text, "ok.tir");
  EXPECT_NO_THROW(verify(f)) << text;
}

// The error is a VerifyError at `where` (line:col of the offending statement) mentioning `what`.
void expect_invalid_text(const std::string& text, const std::string& where, const std::string& what) {
  PrimFunc f = parse_func(text, "bad.tir");
  try {
    verify(f);
    ADD_FAILURE() << "verify accepted:\n" << text;
  } catch (const VerifyError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("bad.tir:" + where + ": IR verification failed in function 'f': ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(Verifier, AcceptsWellFormedFunctions) {
  expect_valid(R"(func @f dyn[m: int32](A: global float32[m, 64], B: global float32[m, 64], n: int32) free[li: int32, lj: int32] {
  kernel(grid=[floordiv(m + 31, 32)], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S: shared float32[32, 64]
    alloc V: local.var float32[1]
    copy(A[bx * 32 :+ 32, 0 :+ 64], S[0 :+ 32, 0 :+ 64])
    annotate_layout(S[0 :+ 32, 0 :+ 64]) {exprs = e:[li * 64 + lj], kind = "custom", vars = e:[li, lj]}
    for i: int32 in parallel(0, 32) {
      for j: int32 in serial(0, 64) {
        let x: float32 = S[i, j]
        if (x > 0.0f32) {
          break
        }
        S[i * 64 + j] = x + cast<float32>(n)
      }
    }
    test.verifier_checked(S[0 :+ 32, 0 :+ 64])
    unknown.op_by_someone_else(S[0 :+ 32, 0 :+ 64], 3)
    copy(S[0 :+ 32, 0 :+ 64], B[bx * 32 :+ 32, 0 :+ 64])
  }
})");
}

// IR the parser would refuse (it resolves names and checks index counts) is built directly,
// with spans as the frontend would give them.
Span at(int line, int col = 3) { return Span{std::make_shared<const std::string>("bad.tir"), line, col}; }

void expect_invalid(const PrimFunc& f, const std::string& where, const std::string& what) {
  try {
    verify(f);
    ADD_FAILURE() << "verify accepted:\n" << print_func(f);
  } catch (const VerifyError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(where + ": IR verification failed in function 'f': ", 0), 0u) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(Verifier, UndefinedVariable) {
  Buffer A("A", DataType::Int32(), {make_int(4)}, MemScope::kGlobal);
  Var i("i"), k("k"), x("x"), bx("bx"), tx("tx");
  // A loop variable used after its loop.
  Stmt loop = make_for(i, 0, 4, ForKind::kSerial, make_store(A, {i}, 0, at(3, 5)), {}, at(2));
  expect_invalid(PrimFunc("f", {{"A", Var(), A}}, make_seq({loop, make_store(A, {0}, i, at(5))})), "bad.tir:5:3",
                 "variable 'i' (int32) is used outside any scope that defines it");
  // A free variable declared only for the text.
  expect_invalid(parse_func("func @f(A: global int32[4]) free[k: int32] {\n  A[0] = k\n}", "bad.tir"), "bad.tir:2:3",
                 "variable 'k'");
  // Kernel extents are evaluated outside the kernel: they cannot use its block vars.
  expect_invalid(PrimFunc("f", {}, make_kernel({make_int(4)}, {bx}, {bx}, {tx}, {}, make_nop(), at(2))), "bad.tir:2:3",
                 "variable 'bx'");
  // A let's value is evaluated before its variable exists.
  expect_invalid(PrimFunc("f", {{"A", Var(), A}}, make_let(x, x + 1, make_store(A, {0}, x), at(2))), "bad.tir:2:3",
                 "variable 'x'");
  // Without spans the function is named and the statement shown.
  try {
    verify(PrimFunc("f", {{"A", Var(), A}}, make_store(A, {0}, k)));
    ADD_FAILURE();
  } catch (const VerifyError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("IR verification failed in function 'f': variable 'k'", 0), 0u) << e.what();
  }
}

TEST(Verifier, BufferOutsideItsAllocation) {
  Buffer A("A", DataType::Float32(), {make_int(4)}, MemScope::kGlobal);
  Buffer S("S", DataType::Float32(), {make_int(4)}, MemScope::kShared);
  Stmt alloc = make_allocate(S, make_store(S, {0}, make_float(1.0), at(3, 5)), at(2));
  expect_invalid(PrimFunc("f", {{"A", Var(), A}}, make_seq({alloc, make_store(A, {0}, make_load(S, {0}), at(5))})),
                 "bad.tir:5:3", "buffer 'S' (shared) is used outside its allocation scope");
  expect_invalid(parse_func("func @f(A: global float32[4]) free[T: shared float32[4]] {\n  copy(T[0 :+ 4], A[0 :+ 4])\n}",
                            "bad.tir"),
                 "bad.tir:2:3", "buffer 'T'");
  expect_invalid(parse_func("func @f(A: global float32[4]) free[T: shared float32[4]] {\n  attr \"x\" = buf:T {\n  }\n}",
                            "bad.tir"),
                 "bad.tir:2:3", "buffer 'T'");
}

TEST(Verifier, IndexCountAndRegionRank) {
  Buffer A("A", DataType::Float32(), {make_int(4), make_int(4)}, MemScope::kGlobal);
  Buffer B("B", DataType::Float32(), {make_int(4), make_int(4), make_int(4)}, MemScope::kGlobal);
  Expr bad_load(std::make_shared<BufferLoadNode>(DataType::Float32(), B, std::vector<Expr>{make_int(0), make_int(0)}));
  expect_invalid(PrimFunc("f", {{"A", Var(), A}, {"B", Var(), B}}, make_store(A, {0, 0}, bad_load, at(2))), "bad.tir:2:3",
                 "buffer 'B' has 3 dimensions but is indexed with 2 indices");
  Stmt bad_store(std::make_shared<BufferStoreNode>(B, std::vector<Expr>{make_int(0), make_int(0)}, make_float(0.0), at(3)));
  expect_invalid(PrimFunc("f", {{"B", Var(), B}}, bad_store), "bad.tir:3:3", "indexed with 2 indices");
  expect_valid("func @f(A: global float32[4, 4]) {\n  A[5] = A[0, 1]\n}");  // one flat index is allowed
  expect_invalid(parse_func("func @f(A: global float32[4, 4]) {\n  fill(A[0 :+ 4], 0.0f32)\n}", "bad.tir"), "bad.tir:2:3",
                 "region of buffer 'A' has 1 ranges but the buffer has 2 dimensions");
}

TEST(Verifier, TileOpChecksRunThroughTheRegistry) {
  PrimFunc f = parse_func("func @f(A: global float32[4]) {\n  test.verifier_checked(1)\n}", "op.tir");
  try {
    verify(f);
    ADD_FAILURE() << "no error";
  } catch (const TypeError& e) {  // the op's own typed error, unchanged
    EXPECT_STREQ(e.what(), "op.tir:2:3: T.test.verifier_checked: the first argument must be a buffer region");
  }
}

TEST(Verifier, KernelNesting) {
  expect_invalid_text(R"(func @f() {
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
    for i: int32 in serial(0, 2) {
      kernel(grid=[2], blocks=[by: int32], threads=[], thread_vars=[]) {
      }
    }
  }
})",
                 "4:7", "T.Kernel is nested inside another T.Kernel");
  expect_valid(R"(func @f() {
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
  }
  kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
  }
})");
}

TEST(Verifier, LoopControl) {
  expect_invalid_text("func @f() {\n  break\n}", "2:3", "'break' is outside any loop");
  expect_invalid_text("func @f() {\n  if (true) {\n    continue\n  }\n}", "3:5", "'continue' is outside any loop");
  expect_invalid_text(R"(func @f() {
  for i: int32 in serial(0, 4) {
    kernel(grid=[2], blocks=[bx: int32], threads=[], thread_vars=[]) {
      break
    }
  }
})",
                 "4:7", "'break' is outside any loop");
  expect_invalid_text("func @f() {\n  for i: int32 in parallel(0, 4) {\n    break\n  }\n}", "3:5",
                 "'break' directly inside a parallel loop");
  expect_valid("func @f() {\n  for i: int32 in unrolled(0, 4) {\n    if (i == 2) {\n      continue\n    }\n  }\n}");
}

TEST(Verifier, MessageNamesTheStatement) {
  Buffer A("A", DataType::Int32(), {make_int(4)}, MemScope::kGlobal);
  Expr bad(std::make_shared<BufferLoadNode>(DataType::Int32(), A, std::vector<Expr>{1, 2, 3}));
  try {
    verify(PrimFunc("f", {{"A", Var(), A}}, make_store(A, {0}, bad, at(2))));
    FAIL();
  } catch (const VerifyError& e) {
    EXPECT_NE(std::string(e.what()).find("\n  in `A[0] = A[1, 2, 3]`"), std::string::npos) << e.what();
  }
}

TEST(Verifier, IsLinearOnLongFunctions) {
  // 20000 statements in one loop nest: verification stays fast (a quadratic walk would not).
  std::string text = "func @f(A: global int32[64]) {\n  for i: int32 in serial(0, 64) {\n";
  for (int k = 0; k < 20000; ++k) text += "    A[i] = A[i] + " + std::to_string(k) + "\n";
  text += "  }\n}\n";
  PrimFunc f = parse_func(text);
  auto t0 = std::chrono::steady_clock::now();
  verify(f);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(ms, 1000.0);
}

}  // namespace
}  // namespace tl
