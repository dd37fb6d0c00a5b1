// lower_tile_ops: Before/Expected on printed IR (built with the IRBuilder until the textual IR
// parser lands), error paths, and the target hook.
#include "transform/lower_tile_ops.h"

#include "op/op_test_util.h"
#include "pass_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32();

PassContext cpu_ctx(AttrMap configs = {}) {
  PassContext ctx;
  ctx.target = Target::parse("cpu");
  ctx.configs = std::move(configs);
  return ctx;
}

// copy of one tile of A[N] per block, N = 96 or 100.
PrimFunc tile_copy(int64_t n) {
  Buffer A = global("A", f32, {c(n)}), B = global("B", f32, {c(n)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({ceildiv(c(n), c(32))}, {bx}, {}, {}, {});
  Buffer S = shared("S", f32, {c(32)});
  b.alloc(S);
  b.emit(op_at(4, "copy", {region(A, {{bx * 32, c(32)}}), full(S)}));
  b.emit(op_at(5, "copy", {full(S), region(B, {{bx * 32, c(32)}})}));
  b.exit();
  return b.finish_func("tile_copy", {tensor_param(A), tensor_param(B)});
}

TEST(LowerTileOps, UsesBlockRangesToDropProvableGuards) {
  // 96 = 3 * 32: every access is in bounds, no guard.
  tl::testing::expect_pass("lower_tile_ops", R"(
func @tile_copy(A: global float32[96], B: global float32[96]) {
  kernel(grid=[3], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[32]
    copy(A[bx * 32 :+ 32], S[0 :+ 32])
    copy(S[0 :+ 32], B[bx * 32 :+ 32])
  }
})", R"(
func @tile_copy(A: global float32[96], B: global float32[96]) {
  kernel(grid=[3], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[32]
    for i0: int32 in parallel(0, 32) {
      S[i0] = A[bx * 32 + i0]
    }
    for i0: int32 in parallel(0, 32) {
      B[bx * 32 + i0] = S[i0]
    }
  }
})");
  // 100: the last block has a tail; reads fill 0, writes are dropped.
  const char* tail = R"(
func @tile_copy(A: global float32[100], B: global float32[100]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[32]
    copy(A[bx * 32 :+ 32], S[0 :+ 32])
    copy(S[0 :+ 32], B[bx * 32 :+ 32])
  }
})";
  tl::testing::expect_pass("lower_tile_ops", tail, R"(
func @tile_copy(A: global float32[100], B: global float32[100]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[32]
    for i0: int32 in parallel(0, 32) {
      S[i0] = select(bx * 32 + i0 < 100, A[bx * 32 + i0], 0.0f32)
    }
    for i0: int32 in parallel(0, 32) {
      if (bx * 32 + i0 < 100) {
        B[bx * 32 + i0] = S[i0]
      }
    }
  }
})");
  // tl.disable_safe_memory_legalize turns guards off.
  tl::testing::expect_pass("lower_tile_ops", tail, R"(
func @tile_copy(A: global float32[100], B: global float32[100]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: shared float32[32]
    for i0: int32 in parallel(0, 32) {
      S[i0] = A[bx * 32 + i0]
    }
    for i0: int32 in parallel(0, 32) {
      B[bx * 32 + i0] = S[i0]
    }
  }
})", "cpu", {{"tl.disable_safe_memory_legalize", Attr(true)}});
}

TEST(LowerTileOps, LoopAndLetRangesReachTheOps) {
  // for k in [0, 4): let base = k * 16; copy A[base : base + 16] (A has 64 elements) -> no guard.
  Buffer A = global("A", f32, {c(64)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Buffer S = shared("S", f32, {c(16)});
  b.alloc(S);
  Var k("k"), base("base");
  b.enter_for(k, 0, c(4), ForKind::kSerial);
  b.let(base, k * 16);
  b.emit(op_at(3, "copy", {region(A, {{base, c(16)}}), full(S)}));
  b.exit();
  b.exit();
  PassContext ctx = cpu_ctx();
  PrimFunc out = lower_tile_ops(b.finish_func("f", {tensor_param(A)}), ctx, nullptr);
  EXPECT_NE(print_func(out).find("S[i0] = A[base + i0]"), std::string::npos) << print_func(out);
}

TEST(LowerTileOps, TargetHookReplacesChosenOps) {
  PassContext ctx = cpu_ctx();
  int calls = 0;
  TargetTileOpLowering hook = [&](const TileOpNode& op, const LowerContext& lc) -> Stmt {
    ++calls;
    EXPECT_TRUE(lc.var_ranges.size() >= 1);  // bx is known inside the kernel
    if (op.args[1].region.buffer.name() == "B")  // the store copy only
      return make_evaluate(make_call(DataType::Void(), "my.copy_out", {}));
    return Stmt();
  };
  std::string text = print_func(lower_tile_ops(tile_copy(96), ctx, hook));
  EXPECT_EQ(calls, 2);
  EXPECT_NE(text.find("evaluate my.copy_out()"), std::string::npos) << text;
  EXPECT_NE(text.find("S[i0] = A[bx * 32 + i0]"), std::string::npos) << text;
}

TEST(LowerTileOps, ErrorsNameTheOpAndTarget) {
  Buffer A = shared("A", f32, {c(8)}), B = shared("B", f32, {c(8)});
  auto func_with = [&](Stmt op) {
    IRBuilder b;
    b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
    b.alloc(A);
    b.alloc(B);
    b.emit(op);
    b.exit();
    return b.finish_func("f", {});
  };
  PassContext ctx = cpu_ctx();
  try {
    lower_tile_ops(func_with(op_at(8, "tile.sort", {full(A), full(B)})), ctx, nullptr);
    ADD_FAILURE() << "expected NotImplemented";
  } catch (const NotImplemented& e) {
    EXPECT_NE(std::string(e.what()).find("kernel.py:8:5: T.tile.sort: not implemented: T.tile.sort on target cpu"),
              std::string::npos)
        << e.what();
  }
  try {
    lower_tile_ops(func_with(op_at(9, "tile.gather_mask", {full(A), full(B)})), ctx, nullptr);
    ADD_FAILURE() << "expected NotImplemented";
  } catch (const NotImplemented& e) {
    EXPECT_NE(std::string(e.what()).find("not implemented: tile op 'tile.gather_mask' on target cpu"), std::string::npos)
        << e.what();
  }
  // Malformed ops are caught by their check before lowering.
  Buffer C = shared("C", f32, {c(4)});
  EXPECT_THROW(lower_tile_ops(func_with(op_at(9, "copy", {full(A), full(C)})), ctx, nullptr), ValueError);
}

TEST(LowerTileOps, RegisteredPassUsesTheTargetsHook) {
  const PassFn* pass = find_pass("lower_tile_ops");
  ASSERT_NE(pass, nullptr);
  ASSERT_NE(find_target_tile_op_lowering(Target::kCPU), nullptr);
  Buffer A = shared("A", f32, {c(16), c(16)}), B = shared("B", f32, {c(16), c(16)}), C = fragment("C", f32, {c(16), c(16)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  b.alloc(A);
  b.alloc(B);
  b.alloc(C);
  b.emit(op_at(1, "gemm", {full(A), full(B), full(C)}));
  b.exit();
  PassContext ctx = cpu_ctx();
  std::string text = print_func((*pass)(b.finish_func("f", {}), ctx));
  EXPECT_NE(text.find("tl.cpu.gemm"), std::string::npos) << text;
}

}  // namespace
}  // namespace tl
