// Before/Expected tests of the ascend scheduling passes: core placement, scope inference,
// T.Pipelined multi-versioning, gemm_v0 expansion (mirrors src/target/ascend/ascend_*.cc).
#include "pass_test_util.h"

namespace tl {
namespace {

using testing::expect_pass;
using testing::run_pass;

TEST(AscendPlaceCores, UnscopedStatementsGoToTheCoreOfTheirMemories) {
  expect_pass("ascend_place_cores", R"(
func @place(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc a: UB float32[32]
    alloc l: L1 float16[16, 16]
    copy(A[vid * 32 :+ 32], a[0 :+ 32])
    attr "scope" = "V" {
      tile.exp(a[0 :+ 32], a[0 :+ 32])
    }
    copy(a[0 :+ 32], B[vid * 32 :+ 32])
    fill(l[0 :+ 16, 0 :+ 16], 0.0f16)
    for i: int32 in serial(0, 2) {
      copy(A[i * 32 :+ 32], a[0 :+ 32])
      fill(l[0 :+ 16, 0 :+ 16], 1.0f16)
    }
  }
})", R"(
func @place(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc a: UB float32[32]
    alloc l: L1 float16[16, 16]
    attr "scope" = "V" {
      copy(A[vid * 32 :+ 32], a[0 :+ 32])
    }
    attr "scope" = "V" {
      tile.exp(a[0 :+ 32], a[0 :+ 32])
    }
    attr "scope" = "V" {
      copy(a[0 :+ 32], B[vid * 32 :+ 32])
    }
    attr "scope" = "C" {
      fill(l[0 :+ 16, 0 :+ 16], 0.0f16)
    }
    for i: int32 in serial(0, 2) {
      attr "scope" = "V" {
        copy(A[i * 32 :+ 32], a[0 :+ 32])
      }
      attr "scope" = "C" {
        fill(l[0 :+ 16, 0 :+ 16], 1.0f16)
      }
    }
  }
})", "ascend");
}

const char* kPipe = R"(
func @pipe(A: global float16[128, 64], C: global float32[64, 64]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc a: shared float16[64, 64]
    alloc c: fragment float32[64, 64]
    attr "scope" = "C" {
      for k: int32 in pipelined(0, 2) {cross_interval = 1, num_stages = 2} {
        copy(A[k * 64 :+ 64, 0 :+ 64], a[0 :+ 64, 0 :+ 64])
        gemm(a[0 :+ 64, 0 :+ 64], a[0 :+ 64, 0 :+ 64], c[0 :+ 64, 0 :+ 64]) {clear_accum = e:(k == 0), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
      }
      copy(c[0 :+ 64, 0 :+ 64], C[0 :+ 64, 0 :+ 64])
    }
  }
})";

TEST(AscendInferScope, SharedFeedingTheCubeIsL1AndFragmentIsL0C) {
  PrimFunc out = run_pass("ascend_infer_scope", kPipe, "ascend");
  std::string text = print_func(out);
  EXPECT_NE(text.find("alloc a: L1 float16[64, 64]"), std::string::npos) << text;
  EXPECT_NE(text.find("alloc c: L0C float32[64, 64]"), std::string::npos) << text;
  EXPECT_EQ(attr_bool(out.attrs(), "ascend.scopes_inferred", false), true);
}

TEST(AscendMultiVersion, PipelinedCopyDestinationsGetStages) {
  PrimFunc scoped = run_pass("ascend_infer_scope", kPipe, "ascend");
  PassContext ctx;
  ctx.target = Target::parse("ascend");
  PrimFunc out = (*find_pass("ascend_multi_version"))(scoped, ctx);
  std::string text = print_func(out);
  EXPECT_NE(text.find("alloc a: L1 float16[2, 64, 64]"), std::string::npos) << text;
  EXPECT_NE(text.find("for k: int32 in serial(0, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("copy(A[k * 64 :+ 64, 0 :+ 64], a[floormod(k, 2) :+ 1, 0 :+ 64, 0 :+ 64])"),
            std::string::npos) << text;
  EXPECT_TRUE(attr_bool(out.attrs(), "ascend.pipelined", false));
}

// The multi-versioning shared with cuda (transform/plan_pipeline.h): x gets a stage dimension in
// its allocation, its tile-op region and its scalar load; y, also used before the loop, keeps one.
TEST(AscendMultiVersion, SharedVersioningRewritesRegionsLoadsAndAllocations) {
  expect_pass("ascend_multi_version", R"(
func @f(A: global float32[128], B: global float32[2]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc x: UB float32[64]
    alloc y: UB float32[64]
    y[0] = 0.0f32
    for k: int32 in pipelined(0, 2) {num_stages = 2} {
      copy(A[k * 64 :+ 64], x[0 :+ 64])
      copy(A[k * 64 :+ 64], y[0 :+ 64])
      B[k] = x[1] + y[1]
    }
  }
})", R"(
func @f(A: global float32[128], B: global float32[2]) {ascend.pipelined = true} {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc x: UB float32[2, 64]
    alloc y: UB float32[64]
    y[0] = 0.0f32
    for k: int32 in serial(0, 2) {ascend_pipelined = true, num_stages = 2} {
      copy(A[k * 64 :+ 64], x[floormod(k, 2) :+ 1, 0 :+ 64])
      copy(A[k * 64 :+ 64], y[0 :+ 64])
      B[k] = x[floormod(k, 2), 1] + y[1]
    }
  }
})", "ascend");
}

TEST(AscendMultiVersion, NestedPipelinedIsAnError) {
  EXPECT_THROW(run_pass("ascend_multi_version", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    for i: int32 in pipelined(0, 2) {num_stages = 2} {
      for j: int32 in pipelined(0, 2) {num_stages = 2} {
        A[i + j] = 0.0f32
      }
    }
  }
})", "ascend"), SyntaxError);
}

TEST(AscendExpandGemm, GemmV0BecomesItsRealSequence) {
  PrimFunc out = run_pass("ascend_expand_gemm", R"(
func @g(A: global float16[64, 64]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc a: L1 float16[128, 256]
    alloc b: L1 float16[256, 128]
    alloc c: L0C float32[128, 128]
    attr "scope" = "C" {
      gemm_v0(a[0 :+ 128, 0 :+ 256], b[0 :+ 256, 0 :+ 128], c[0 :+ 128, 0 :+ 128]) {init = e:(true), transpose_A = false, transpose_B = false}
    }
  }
})", "ascend");
  std::string text = print_func(out);
  // K = 256 in chunks of 128 (a 128 x 128 fp16 chunk is exactly half of L0A / L0B).
  for (const char* part : {"alloc gemm_v0_L0A: L0A float16[2, 128, 128]", "alloc gemm_v0_L0B: L0B float16[2, 128, 128]",
                           "annotate_address(gemm_v0_L0A[0 :+ 2, 0 :+ 128, 0 :+ 128], 0)",
                           "for gemm_v0_k: int32 in serial(0, 2)",
                           "evaluate ascend.wait_flag<void>(\"m\", \"mte1\", floormod(gemm_v0_k, 2))",
                           "copy(a[0 :+ 128, gemm_v0_k * 128 :+ 128], gemm_v0_L0A[floormod(gemm_v0_k, 2) :+ 1, 0 :+ 128, 0 :+ 128])",
                           "evaluate ascend.pipe_barrier<void>(\"m\")", "{init = e:(gemm_v0_k == 0)",
                           "evaluate ascend.set_flag<void>(\"m\", \"fix\", 0)",
                           "evaluate ascend.set_flag<void>(\"mte1\", \"mte2\", 0)"})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
}

TEST(AscendExpandGemm, GemmOnL0OperandsIsOneMma) {
  PrimFunc out = run_pass("ascend_expand_gemm", R"(
func @g(A: global float16[64, 64]) {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc a: L0A float16[16, 32]
    alloc b: L0B float16[16, 32]
    alloc c: L0C float32[16, 16]
    attr "scope" = "C" {
      gemm(a[0 :+ 16, 0 :+ 32], b[0 :+ 16, 0 :+ 32], c[0 :+ 16, 0 :+ 16]) {clear_accum = e:(false), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = true}
    }
  }
})", "ascend");
  std::string text = print_func(out);
  EXPECT_NE(text.find("mma(a[0 :+ 16, 0 :+ 32], b[0 :+ 16, 0 :+ 32], c[0 :+ 16, 0 :+ 16]) {init = e:(false), "
                      "transpose_A = false, transpose_B = true}"),
            std::string::npos) << text;
}

}  // namespace
}  // namespace tl
