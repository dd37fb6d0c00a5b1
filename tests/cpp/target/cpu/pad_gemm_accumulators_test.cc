#include "target/cpu/pad_gemm_accumulators.h"

#include "pass_test_util.h"

namespace tl {
namespace {

// One block: C_local (m x n of `c`, `strides` appended to its allocation when given) = A x B (of
// `ab`, k deep), then C_local copied to C; `extra`: statements after the copy.
std::string block(const std::string& ab, const std::string& c, int m, int n, int k, const std::string& strides = "",
                  const std::string& extra = "") {
  const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  return "func @gemm(A: global " + ab + "[" + M + ", " + K + "], B: global " + ab + "[" + K + ", " + N +
         "], C: global " + c + "[" + M + ", " + N + "]) {\n"
         "  kernel(grid=[1, 1], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {\n"
         "    alloc C_local: fragment " + c + "[" + M + ", " + N + "]" + (strides.empty() ? "" : " " + strides) + "\n"
         "    gemm(A[0 :+ " + M + ", 0 :+ " + K + "], B[0 :+ " + K + ", 0 :+ " + N + "], C_local[0 :+ " + M + ", 0 :+ " +
         N + R"(]) {clear_accum = e:(true), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false})" +
         "\n    copy(C_local[0 :+ " + M + ", 0 :+ " + N + "], C[0 :+ " + M + ", 0 :+ " + N + "])\n" + extra +
         "  }\n}";
}

// Rows a whole number of KiB apart (2 KiB: 512 floats; 1 KiB: 256 int32) under a bf16, fp16 or int8
// GEMM: 64 bytes more per row.
TEST(PadGemmAccumulators, KiBRowsOfAmxAccumulatorsGetLongerStrides) {
  tl::testing::expect_pass("pad_gemm_accumulators", block("bfloat16", "float32", 512, 512, 256),
                           block("bfloat16", "float32", 512, 512, 256, "strides[528, 1]"));
  tl::testing::expect_pass("pad_gemm_accumulators", block("float16", "float32", 64, 512, 256),
                           block("float16", "float32", 64, 512, 256, "strides[528, 1]"));
  tl::testing::expect_pass("pad_gemm_accumulators", block("int8", "int32", 512, 256, 512),
                           block("int8", "int32", 512, 256, 512, "strides[272, 1]"));
}

// Left alone: an fp32 GEMM (its micro-kernel's C access is not tile-shaped), rows of 1.5 KiB, fewer
// than 16 rows, C_local's address taken outside the tile ops, and the pass switched off.
TEST(PadGemmAccumulators, OtherAccumulatorsStay) {
  const std::string kept[] = {
      block("float32", "float32", 512, 512, 256),
      block("bfloat16", "float32", 64, 384, 256),
      block("bfloat16", "float32", 8, 512, 256),
      block("bfloat16", "float32", 64, 512, 256, "",
            "    evaluate tl.cpu.copy_stream<void>(tl.address_of<handle>(C[0, 0]), "
            "tl.address_of<handle>(C_local[0, 0]), 512)\n"),
  };
  for (const std::string& src : kept) tl::testing::expect_pass("pad_gemm_accumulators", src, src);
  const std::string off = block("bfloat16", "float32", 512, 512, 256);
  tl::testing::expect_pass("pad_gemm_accumulators", off, off, "cpu", {{"tl.disable_cpu_gemm_padding", Attr(true)}});
}

}  // namespace
}  // namespace tl
