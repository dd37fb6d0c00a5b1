// Pass-level tests of Ascend Developer mode (issue 15): scope inference by use, the cube/vector
// split (ascend_cv_split), vid reduction (ascend_vid_reduction) and cross-core sync
// (ascend_cross_sync). End-to-end values are checked in tests/python/ascend/test_ascend_developer.py.
#include "pass_test_util.h"

namespace tl {
namespace {

using testing::expect_pass_error;
using testing::run_pass;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// gemm into a fragment, exp of it into another fragment, both copied out (minicv).
const char* kMinicv = R"(
func @minicv(A: global float16[64, 32], B: global float16[32, 64], C: global float32[64, 64], D: global float32[64, 64]) {
  kernel(grid=[1], blocks=[cid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_threads = 1} {
    alloc a: shared float16[64, 32]
    alloc b: shared float16[32, 64]
    alloc c: fragment float32[64, 64]
    alloc d: fragment float32[64, 64]
    copy(A[0 :+ 64, 0 :+ 32], a[0 :+ 64, 0 :+ 32])
    copy(B[0 :+ 32, 0 :+ 64], b[0 :+ 32, 0 :+ 64])
    gemm(a[0 :+ 64, 0 :+ 32], b[0 :+ 32, 0 :+ 64], c[0 :+ 64, 0 :+ 64]) {clear_accum = true, k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    tile.exp(d[0 :+ 64, 0 :+ 64], c[0 :+ 64, 0 :+ 64])
    copy(c[0 :+ 64, 0 :+ 64], C[0 :+ 64, 0 :+ 64])
    copy(d[0 :+ 64, 0 :+ 64], D[0 :+ 64, 0 :+ 64])
  }
})";

TEST(AscendInferScope, BufferOfBothCoresIsAmbiguousWithoutTheSplit) {
  expect_pass_error<SyntaxError>("ascend_infer_scope", kMinicv, "the memory of buffer 'c' is ambiguous", "ascend");
}

TEST(AscendInferScope, WithTheSplitGemmResultIsL0CAndVectorOnlyFragmentIsUB) {
  std::string t = print_func(run_pass("ascend_infer_scope", kMinicv, "npuir"));
  EXPECT_TRUE(has(t, "alloc a: L1 float16[64, 32]")) << t;
  EXPECT_TRUE(has(t, "alloc c: L0C float32[64, 64]")) << t;
  EXPECT_TRUE(has(t, "alloc d: UB float32[64, 64]")) << t;
}

PrimFunc split(const char* src, const std::string& target = "npuir") {
  PrimFunc f = run_pass("ascend_infer_scope", src, target);
  PassContext ctx;
  ctx.target = Target::parse(target);
  PassRunner r(f, ctx);
  r.run("ascend_cv_split", *find_pass("ascend_cv_split"));
  return r.func();
}

TEST(AscendCvSplit, GemmResultReadByVectorGoesThroughAWorkspace) {
  PrimFunc out = split(kMinicv);
  std::string t = print_func(out);
  // The vector op reads the UB twin, which is filled from L0C through GM before it.
  EXPECT_TRUE(has(t, "alloc c_ub: UB float32[64, 64]")) << t;
  EXPECT_TRUE(has(t, "copy(c[0 :+ 64, 0 :+ 64], cv_ws0_c[0 :+ 64, 0 :+ 64])")) << t;
  EXPECT_TRUE(has(t, "copy(cv_ws0_c[0 :+ 64, 0 :+ 64], c_ub[0 :+ 64, 0 :+ 64])")) << t;
  EXPECT_TRUE(has(t, "tile.exp(d[0 :+ 64, 0 :+ 64], c_ub[0 :+ 64, 0 :+ 64])")) << t;
  // The gemm result itself is copied out from L0C (the vector work does not rewrite it).
  EXPECT_TRUE(has(t, "copy(c[0 :+ 64, 0 :+ 64], C[0 :+ 64, 0 :+ 64])")) << t;
  EXPECT_LT(t.find("cv_ws0_c[0 :+ 64, 0 :+ 64], c_ub"), t.find("tile.exp")) << t;
  auto ws = out.attrs().at("ascend.cv_workspaces").as_str_list();
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0], "cv_ws0_c");
  EXPECT_TRUE(attr_bool(out.attrs(), "enable_auto_sync", false));
}

TEST(AscendCvSplit, OffWithoutCvCombine) {
  PrimFunc f = parse_func(R"(
func @k(A: global float32[64]) {
  kernel(grid=[1], blocks=[cid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_threads = 1} {
    alloc u: UB float32[64]
    copy(A[0 :+ 64], u[0 :+ 64])
  }
})", "<k>");
  PassContext ctx;
  ctx.target = Target::parse("ascend");
  PrimFunc out = (*find_pass("ascend_cv_split"))(f, ctx);
  EXPECT_EQ(out.get(), f.get());
}

// A gemm accumulating into an L0C buffer that vector code modified: every gemm into the buffer
// computes into a fresh accumulator c_part; the vector core copies (initC=True) or adds (initC=False)
// it into its copy c_ub, through GM workspaces.
const char* kRescaledAccumulator = R"(
func @k(A: global float16[64, 32], B: global float16[32, 64], C: global float32[64, 64]) {
  kernel(grid=[1], blocks=[cid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_threads = 1} {
    alloc a: shared float16[64, 32]
    alloc b: shared float16[32, 64]
    alloc c: fragment float32[64, 64]
    copy(A[0 :+ 64, 0 :+ 32], a[0 :+ 64, 0 :+ 32])
    copy(B[0 :+ 32, 0 :+ 64], b[0 :+ 32, 0 :+ 64])
    gemm(a[0 :+ 64, 0 :+ 32], b[0 :+ 32, 0 :+ 64], c[0 :+ 64, 0 :+ 64]) {clear_accum = true, k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    tile.mul(c[0 :+ 64, 0 :+ 64], c[0 :+ 64, 0 :+ 64], 2.0f32)
    gemm(a[0 :+ 64, 0 :+ 32], b[0 :+ 32, 0 :+ 64], c[0 :+ 64, 0 :+ 64]) {clear_accum = CLEAR, k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    copy(c[0 :+ 64, 0 :+ 64], C[0 :+ 64, 0 :+ 64])
  }
})";

std::string with_clear(const std::string& clear) {
  std::string s = kRescaledAccumulator;
  s.replace(s.find("CLEAR"), 5, clear);
  return s;
}

TEST(AscendCvSplit, VectorModifiedGemmAccumulatorGetsAFreshOne) {
  std::string src = with_clear("false");
  std::string t = print_func(split(src.c_str()));
  EXPECT_TRUE(has(t, "alloc c_part: L0C float32[64, 64]") && has(t, "alloc c_part_ub: UB float32[64, 64]")) << t;
  // Both gemms write the part; nothing but the vector copy holds c's value afterwards.
  EXPECT_FALSE(has(t, "c[0 :+ 64, 0 :+ 64]) {clear_accum")) << t;
  EXPECT_TRUE(has(t, "tile.add(c_ub[0 :+ 64, 0 :+ 64], c_ub[0 :+ 64, 0 :+ 64], c_part_ub[0 :+ 64, 0 :+ 64])")) << t;
  EXPECT_TRUE(has(t, "cv_ws")) << t;
}

TEST(AscendCvSplit, RunTimeInitOnAVectorModifiedAccumulatorFailsClosed) {
  std::string src = with_clear("e:(cid == 0)");
  try {
    split(src.c_str());
    ADD_FAILURE() << "expected a SyntaxError";
  } catch (const SyntaxError& e) {
    EXPECT_TRUE(has(e.what(), "'c' (L0C)") && has(e.what(), "initC decided at run time")) << e.what();
  }
}

TEST(AscendVidReduction, RowsOfUBTilesSplitAndGMRegionsOffsetByVid) {
  PrimFunc f = run_pass("ascend_vid_reduction", R"(
func @k(X: global float32[64, 128], Bias: global float32[128], Y: global float32[64, 128]) {
  kernel(grid=[1], blocks=[cid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_threads = 2} {
    alloc x: UB float32[64, 128]
    alloc bias: UB float32[128]
    copy(X[0 :+ 64, 0 :+ 128], x[0 :+ 64, 0 :+ 128])
    copy(Bias[0 :+ 128], bias[0 :+ 128])
    for i: int32 in parallel(0, 64) {
      for j: int32 in parallel(0, 128) {
        x[i, j] = x[i, j] + bias[j]
      }
    }
    copy(x[0 :+ 64, 0 :+ 128], Y[0 :+ 64, 0 :+ 128])
  }
})", "ascend");
  std::string t = print_func(f);
  EXPECT_TRUE(has(t, "alloc x: UB float32[32, 128]")) << t;
  EXPECT_TRUE(has(t, "alloc bias: UB float32[128]")) << t;  // a column vector stays whole
  EXPECT_TRUE(has(t, "copy(X[vid * 32 :+ 32, 0 :+ 128], x[0 :+ 32, 0 :+ 128])")) << t;
  EXPECT_TRUE(has(t, "copy(x[0 :+ 32, 0 :+ 128], Y[vid * 32 :+ 32, 0 :+ 128])")) << t;
  EXPECT_TRUE(has(t, "in parallel(0, 32)")) << t;
  EXPECT_TRUE(has(t, "npu_vid = true")) << t;
}

TEST(AscendCrossSync, HandOffInALoopGetsForwardAndBackFlags) {
  PrimFunc f = run_pass("ascend_cross_sync", R"(
func @k(O: global float32[64, 64]) free[cv_ws0_s: global float32[64, 64]] {ascend.cv_workspaces = s:["cv_ws0_s"]} {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc s: L0C float32[64, 64]
    alloc u: UB float32[32, 64]
    for k: int32 in serial(0, 4) {
      attr "scope" = "C" {
        copy(s[0 :+ 64, 0 :+ 64], cv_ws0_s[0 :+ 64, 0 :+ 64])
      }
      attr "scope" = "V" {
        copy(cv_ws0_s[vid * 32 :+ 32, 0 :+ 64], u[0 :+ 32, 0 :+ 64])
        copy(u[0 :+ 32, 0 :+ 64], O[vid * 32 :+ 32, 0 :+ 64])
      }
    }
  }
})", "ascend");
  std::string t = print_func(f);
  EXPECT_EQ(attr_int(f.attrs(), "ascend.cross_syncs_inserted", 0), 6);
  // forward flag 0 from FIX to the vector cores, back flag 1 from MTE2 to the cube
  EXPECT_TRUE(has(t, "ascend.set_cross_flag<void>(\"fix\", 0, 2)")) << t;
  EXPECT_TRUE(has(t, "ascend.wait_cross_flag<void>(0)")) << t;
  EXPECT_TRUE(has(t, "ascend.set_cross_flag<void>(\"mte2\", 1, 2)")) << t;
  EXPECT_TRUE(has(t, "ascend.wait_cross_flag<void>(1)")) << t;
  // the back flag is pre-armed before the loop and drained after it
  size_t loop = t.find("for k");
  EXPECT_LT(t.find("set_cross_flag<void>(\"mte2\", 1, 2)"), loop) << t;
  EXPECT_GT(t.rfind("wait_cross_flag<void>(1)"), t.rfind("O[vid")) << t;
}

TEST(AscendCrossSync, UserFlagIdsAreAvoided) {
  PrimFunc f = run_pass("ascend_cross_sync", R"(
func @k(O: global float32[64, 64]) free[cv_ws0_s: global float32[64, 64]] {ascend.cv_workspaces = s:["cv_ws0_s"]} {
  kernel(grid=[1, 2], blocks=[cid: int32, vid: int32], threads=[], thread_vars=[]) {is_npu = true, npu_vid = true} {
    alloc s: L0C float32[64, 64]
    alloc u: UB float32[32, 64]
    attr "scope" = "C" {
      evaluate ascend.set_cross_flag<void>("fix", 5, 2)
      copy(s[0 :+ 64, 0 :+ 64], cv_ws0_s[0 :+ 64, 0 :+ 64])
    }
    attr "scope" = "V" {
      evaluate ascend.wait_cross_flag<void>(5)
      copy(cv_ws0_s[vid * 32 :+ 32, 0 :+ 64], u[0 :+ 32, 0 :+ 64])
      copy(u[0 :+ 32, 0 :+ 64], O[vid * 32 :+ 32, 0 :+ 64])
    }
  }
})", "ascend");
  std::string t = print_func(f);
  EXPECT_TRUE(has(t, "set_cross_flag<void>(\"fix\", 6, 2)")) << t;
  EXPECT_TRUE(has(t, "wait_cross_flag<void>(6)")) << t;
  EXPECT_EQ(attr_int(f.attrs(), "ascend.cross_syncs_inserted", 0), 2);
}

}  // namespace
}  // namespace tl
