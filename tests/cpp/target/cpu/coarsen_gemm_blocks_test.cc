#include "target/cpu/coarsen_gemm_blocks.h"

#include <thread>

#include "pass_test_util.h"
#include "runtime/backend.h"

namespace tl {
namespace {

// TileLang's GEMM example after forward_gemm_operands: C_local [bm, bn] = A-tile x B-tile, then the
// copy of all of it to the global C-tile (strings of IR text); `extra`: statements after the copy.
std::string example(const std::string& grid, int bm, int bn, const std::string& a, const std::string& b,
                    const std::string& c, const std::string& extra = "", const std::string& trans_b = "false") {
  const std::string tile = "C_local[0 :+ " + std::to_string(bm) + ", 0 :+ " + std::to_string(bn) + "]";
  return R"(
func @gemm(A: global int8[2048, 2048], B: global int8[2048, 2048], C: global int32[2048, 2048]) {
  kernel(grid=)" + grid + R"(, blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {use_swizzle_panel = 4} {
    alloc A_shared: shared int8[128, 32]
    alloc C_local: fragment int32[)" + std::to_string(bm) + ", " + std::to_string(bn) + R"(]
    gemm()" + a + ", " + b + ", " + tile +
         R"() {clear_accum = e:(true), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = )" + trans_b +
         R"(}
    copy()" + tile + ", " + c + R"()
)" + extra + R"(  }
})";
}

// One worker: the largest tile up to 512 x 512 that leaves at least 4 blocks.
TEST(CoarsenGemmBlocks, ExampleBlocksBecome512Tiles) {
  tl::testing::expect_pass(
      "coarsen_gemm_blocks",
      example("[16, 16]", 128, 128, "A[by * 128 :+ 128, 0 :+ 2048]", "B[0 :+ 2048, bx * 128 :+ 128]",
              "C[by * 128 :+ 128, bx * 128 :+ 128]"),
      example("[4, 4]", 512, 512, "A[by * 512 :+ 512, 0 :+ 2048]", "B[0 :+ 2048, bx * 512 :+ 512]",
              "C[by * 512 :+ 512, bx * 512 :+ 512]"),
      "cpu", {{"tl.cpu_num_threads", Attr(int64_t(1))}});
}

// 16 workers keep 4 blocks each: 64 blocks of 256 x 256.
TEST(CoarsenGemmBlocks, KeepsFourBlocksPerWorker) {
  tl::testing::expect_pass(
      "coarsen_gemm_blocks",
      example("[16, 16]", 128, 128, "A[by * 128 :+ 128, 0 :+ 2048]", "B[0 :+ 2048, bx * 128 :+ 128]",
              "C[by * 128 :+ 128, bx * 128 :+ 128]"),
      example("[8, 8]", 256, 256, "A[by * 256 :+ 256, 0 :+ 2048]", "B[0 :+ 2048, bx * 256 :+ 256]",
              "C[by * 256 :+ 256, bx * 256 :+ 256]"),
      "cpu", {{"tl.cpu_num_threads", Attr(int64_t(16))}});
}

// A transposed B ([N, K]), constant offsets, block variables in the other roles (bx over rows),
// and a grid whose row extent has no divisor that fits (5 x 128 > 512): only the columns coarsen.
TEST(CoarsenGemmBlocks, TransposedBOffsetsAndOneDimension) {
  tl::testing::expect_pass(
      "coarsen_gemm_blocks",
      example("[5, 8]", 128, 64, "A[bx * 128 + 64 :+ 128, 0 :+ 1024]", "B[by * 64 :+ 64, 1024 :+ 1024]",
              "C[bx * 128 + 64 :+ 128, by * 64 + 8 :+ 64]", "", "true"),
      example("[5, 1]", 128, 512, "A[bx * 128 + 64 :+ 128, 0 :+ 1024]", "B[by * 512 :+ 512, 1024 :+ 1024]",
              "C[bx * 128 + 64 :+ 128, by * 512 + 8 :+ 512]", "", "true"),
      "cpu", {{"tl.cpu_num_threads", Attr(int64_t(1))}});
}

// Left alone: an epilogue statement, a C used elsewhere, a grid too small to split, the pass off.
TEST(CoarsenGemmBlocks, LeavesOtherKernelsAlone) {
  const AttrMap one = {{"tl.cpu_num_threads", Attr(int64_t(1))}};
  const std::string plain = example("[16, 16]", 128, 128, "A[by * 128 :+ 128, 0 :+ 2048]",
                                    "B[0 :+ 2048, bx * 128 :+ 128]", "C[by * 128 :+ 128, bx * 128 :+ 128]");
  const std::string epilogue =
      example("[16, 16]", 128, 128, "A[by * 128 :+ 128, 0 :+ 2048]", "B[0 :+ 2048, bx * 128 :+ 128]",
              "C[by * 128 :+ 128, bx * 128 :+ 128]", "    C[by * 128, bx] = C_local[0, 0]\n");
  tl::testing::expect_pass("coarsen_gemm_blocks", epilogue, epilogue, "cpu", one);
  const std::string small = example("[2, 2]", 128, 128, "A[by * 128 :+ 128, 0 :+ 2048]",
                                    "B[0 :+ 2048, bx * 128 :+ 128]", "C[by * 128 :+ 128, bx * 128 :+ 128]");
  tl::testing::expect_pass("coarsen_gemm_blocks", small, small, "cpu", {{"tl.cpu_num_threads", Attr(int64_t(2))}});
  const std::string same_var = example("[16, 16]", 128, 128, "A[by * 128 :+ 128, 0 :+ 2048]",
                                       "B[0 :+ 2048, by * 128 :+ 128]", "C[by * 128 :+ 128, by * 128 :+ 128]");
  tl::testing::expect_pass("coarsen_gemm_blocks", same_var, same_var, "cpu", one);
  tl::testing::expect_pass("coarsen_gemm_blocks", plain, plain, "cpu",
                           {{"tl.cpu_num_threads", Attr(int64_t(1))}, {"tl.disable_cpu_block_coarsening", Attr(true)}});
}


// example_gemm_autotune's epilogue: C_local -> C_shared (float16) -> C. The staging tile takes the
// coarse shape too; a staging tile of another shape, or read by something else, keeps the grid.
TEST(CoarsenGemmBlocks, StagingCopiesOfTheWholeTile) {
  auto kernel = [](const std::string& grid, int bm, int bn, int stage_m) {
    const std::string m = std::to_string(bm), n = std::to_string(bn), sm = std::to_string(stage_m);
    return R"(
func @gemm(A: global float16[1024, 512], B: global float16[512, 1024], C: global float16[1024, 1024]) {
  kernel(grid=)" + grid + R"(, blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc C_local: fragment float32[)" + m + ", " + n + R"(]
    alloc C_shared: shared float16[)" + sm + ", " + n + R"(]
    gemm(A[by * )" + m + " :+ " + m + R"(, 0 :+ 512], B[0 :+ 512, bx * )" + n + " :+ " + n + R"(], C_local[0 :+ )" + m +
           ", 0 :+ " + n + R"(]) {clear_accum = e:(true), transpose_A = false, transpose_B = false}
    copy(C_local[0 :+ )" + m + ", 0 :+ " + n + R"(], C_shared[0 :+ )" + m + ", 0 :+ " + n + R"(])
    copy(C_shared[0 :+ )" + m + ", 0 :+ " + n + R"(], C[by * )" + m + " :+ " + m + ", bx * " + n + " :+ " + n + R"(])
  }
})";
  };
  const AttrMap one = {{"tl.cpu_num_threads", Attr(int64_t(1))}};
  tl::testing::expect_pass("coarsen_gemm_blocks", kernel("[8, 8]", 128, 128, 128), kernel("[2, 2]", 512, 512, 512),
                           "cpu", one);
  const std::string taller = kernel("[8, 8]", 128, 128, 256);  // C_shared [256, 128]: not the tile
  tl::testing::expect_pass("coarsen_gemm_blocks", taller, taller, "cpu", one);
}


// examples/gemm_relu's epilogue: the bias row staged per block and relu on C_local. The bias tile
// runs along the columns, so it takes the coarse width; the nest's loops the coarse extents.
std::string relu_kernel(const std::string& grid, int t, const std::string& value) {
  const std::string n = std::to_string(t);
  return R"(
func @gemm(A: global float32[512, 96], B: global float32[96, 512], Bias: global float32[512], C: global float32[512, 512]) {
  kernel(grid=)" + grid + R"(, blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc C_local: fragment float32[)" + n + ", " + n + R"(]
    alloc bias_local: fragment float32[)" + n + R"(]
    gemm(A[by * )" + n + " :+ " + n + R"(, 0 :+ 96], B[0 :+ 96, bx * )" + n + " :+ " + n + R"(], C_local[0 :+ )" + n +
         ", 0 :+ " + n + R"(]) {clear_accum = e:(true), transpose_A = false, transpose_B = false}
    copy(Bias[bx * )" + n + " :+ " + n + R"(], bias_local[0 :+ )" + n + R"(])
    for i: int32 in parallel(0, )" + n + R"() {
      for j: int32 in parallel(0, )" + n + R"() {
        C_local[i, j] = )" + value + R"(
      }
    }
    copy(C_local[0 :+ )" + n + ", 0 :+ " + n + R"(], C[by * )" + n + " :+ " + n + ", bx * " + n + " :+ " + n + R"(])
  }
})";
}

TEST(CoarsenGemmBlocks, ElementWiseEpilogueWithABiasRow) {
  const AttrMap one = {{"tl.cpu_num_threads", Attr(int64_t(1))}};
  const std::string relu = "max(C_local[i, j] + bias_local[j], 0.0f32)";
  tl::testing::expect_pass("coarsen_gemm_blocks", relu_kernel("[4, 4]", 128, relu), relu_kernel("[2, 2]", 256, relu),
                           "cpu", one);
  // a global position (bx * 128 + j) is the same in the coarse tile: coarsened
  const std::string global_col = "C_local[i, j] + cast<float32>(bx * 128 + j)";
  const std::string global_col_coarse = "C_local[i, j] + cast<float32>(bx * 256 + j)";
  tl::testing::expect_pass("coarsen_gemm_blocks", relu_kernel("[4, 4]", 128, global_col),
                           relu_kernel("[2, 2]", 256, global_col_coarse), "cpu", one);
  // a tile-local index, a transposed tile access, a bias read at another column: left as written
  for (const std::string v : {"C_local[i, j] + cast<float32>(j)", "C_local[j, i]", "C_local[i, j] + bias_local[i]"}) {
    const std::string k = relu_kernel("[4, 4]", 128, v);
    tl::testing::expect_pass("coarsen_gemm_blocks", k, k, "cpu", one);
  }
}


// The worker count the grid is planned for is part of the cpu kernel cache key: the hardware
// threads by default, tl.cpu_num_threads when set.
TEST(CoarsenGemmBlocks, WorkerCountIsInTheCacheKey) {
  const int64_t hw = std::max<int64_t>(1, std::thread::hardware_concurrency());
  EXPECT_EQ(cpu_grid_workers({}), hw);
  EXPECT_EQ(cpu_grid_workers({{"tl.cpu_num_threads", Attr(int64_t(3))}}), 3);
  CompileOptions opts;
  opts.target = Target::parse("cpu");
  auto backend = make_backend(opts.target);
  EXPECT_NE(backend->compiler_version(opts).find("grid workers " + std::to_string(hw) + "\n"), std::string::npos);
  opts.pass_configs = validate_pass_configs({{"tl.cpu_num_threads", Attr(int64_t(3))}});
  EXPECT_NE(backend->compiler_version(opts).find("grid workers 3\n"), std::string::npos);
}

}  // namespace
}  // namespace tl
