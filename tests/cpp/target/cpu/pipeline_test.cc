#include "target/cpu/pipeline.h"

#include "ir/functor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "pass_test_util.h"

namespace tl {
namespace {

TEST(CpuPipeline, RunsThePassesInOrderAndLeavesOnlyWhatCodegenEmits) {
  PrimFunc f = parse_func(R"(
func @gemm_relu(A: global float16[64, 32], B: global float16[32, 64], C: global float32[64, 64]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc A_s: shared float16[32, 16]
    alloc B_s: shared float16[16, 32]
    alloc C_l: fragment float32[32, 32]
    fill(C_l[0 :+ 32, 0 :+ 32], 0.0f32)
    for k: int32 in pipelined(0, 2) {num_stages = 2} {
      copy(A[by * 32 :+ 32, k * 16 :+ 16], A_s[0 :+ 32, 0 :+ 16])
      copy(B[k * 16 :+ 16, bx * 32 :+ 32], B_s[0 :+ 16, 0 :+ 32])
      gemm(A_s[0 :+ 32, 0 :+ 16], B_s[0 :+ 16, 0 :+ 32], C_l[0 :+ 32, 0 :+ 32])
    }
    for i: int32 in parallel(0, 32) {
      for j: int32 in parallel(0, 32) {
        C[by * 32 + i, bx * 32 + j] = max(C_l[i, j], 0.0f32)
      }
    }
  }
})", "gemm.tir");
  PassContext ctx;
  ctx.target = Target::parse("cpu");
  PrimFunc out = lower_cpu(f, ctx);
  std::vector<std::string> stages;
  for (auto& [name, fn] : ctx.stages) stages.push_back(name);
  EXPECT_EQ(stages, (std::vector<std::string>{"input", "config_index_bitwidth", "check_cpu_constructs", "serialize_threads", "simplify", "forward_gemm_operands", "coarsen_gemm_blocks", "pad_gemm_accumulators", "lower_tile_ops", "legalize_safe_memory_access",
                                              "legalize_cpu_loops", "fuse_elementwise_loops", "flatten_buffer_access", "simplify",
                                              "convert_bf16_rows", "stream_global_stores", "vectorize_math_loops"}));
  int tile_ops = 0, multi_index = 0, non_cpu_loops = 0, gemm_calls = 0;
  post_order_visit(out.body(), [&](const Stmt& s) {
    if (s.as<TileOpNode>()) ++tile_ops;
    if (auto* st = s.as<BufferStoreNode>(); st && st->indices.size() > 1) ++multi_index;
    if (auto* fo = s.as<ForNode>(); fo && fo->for_kind != ForKind::kSerial && fo->for_kind != ForKind::kVectorized &&
                                    fo->for_kind != ForKind::kUnrolled)
      ++non_cpu_loops;
  });
  for_each_expr(out.body(), [&](const Expr& e) {
    if (auto* c = e.as<CallNode>(); c && c->op == "tl.cpu.gemm") ++gemm_calls;
    if (auto* l = e.as<BufferLoadNode>(); l && l->indices.size() > 1) ++multi_index;
  });
  EXPECT_EQ(tile_ops, 0);
  EXPECT_EQ(multi_index, 0);
  EXPECT_EQ(non_cpu_loops, 0);
  EXPECT_EQ(gemm_calls, 1) << print_func(out);
  // Every stage prints as text that reads back (TL_DUMP_IR output can be fed to tl-opt).
  for (auto& [name, fn] : ctx.stages) {
    PrimFunc back = parse_func(print_func(fn), name);
    EXPECT_TRUE(structural_equal(back, fn)) << name << ":\n" << print_func(fn);
  }
}

}  // namespace
}  // namespace tl
