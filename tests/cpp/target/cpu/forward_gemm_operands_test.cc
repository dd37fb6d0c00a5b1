#include "target/cpu/forward_gemm_operands.h"

#include "pass_test_util.h"

namespace tl {
namespace {

// TileLang's GEMM example with one 256-deep step: the staged copies of A and B feed only the GEMM.
// `a_rows`: A's and C's rows (256 fills both blocks; 200 leaves the second block's tile partly
// outside A).
std::string staged(int a_rows) {
  const std::string r = std::to_string(a_rows);
  return R"(
func @gemm(A: global float32[)" + r + R"(, 256], B: global float32[256, 256], C: global float32[)" + r + R"(, 256]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc A_shared: shared float32[128, 256]
    alloc B_shared: shared float32[256, 128]
    alloc C_local: fragment float32[128, 128]
    copy(A[by * 128 :+ 128, 0 :+ 256], A_shared[0 :+ 128, 0 :+ 256])
    copy(B[0 :+ 256, bx * 128 :+ 128], B_shared[0 :+ 256, 0 :+ 128])
    gemm(A_shared[0 :+ 128, 0 :+ 256], B_shared[0 :+ 256, 0 :+ 128], C_local[0 :+ 128, 0 :+ 128]) {clear_accum = e:(true), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    copy(C_local[0 :+ 128, 0 :+ 128], C[by * 128 :+ 128, bx * 128 :+ 128])
  }
})";
}

const char* kGemmAttrs =
    R"({clear_accum = e:(true), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false})";

// Both operands forwarded: the GEMM reads the global tiles, the copies become no-ops, and the two
// staging buffers, named by nothing any more, lose their allocations.
TEST(ForwardGemmOperands, ForwardedStagingBuffersAreNotAllocated) {
  tl::testing::expect_pass("forward_gemm_operands", staged(256), std::string(R"(
func @gemm(A: global float32[256, 256], B: global float32[256, 256], C: global float32[256, 256]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc C_local: fragment float32[128, 128]
    evaluate 0
    evaluate 0
    gemm(A[by * 128 :+ 128, 0 :+ 256], B[0 :+ 256, bx * 128 :+ 128], C_local[0 :+ 128, 0 :+ 128]) )") + kGemmAttrs + R"(
    copy(C_local[0 :+ 128, 0 :+ 128], C[by * 128 :+ 128, bx * 128 :+ 128])
  }
})");
}

// A's tile lies inside A only in the first row of blocks: the pair is versioned, so A_shared keeps
// its (guarded) copy and its allocation; B_shared still goes.
TEST(ForwardGemmOperands, VersionedStagingBufferKeepsItsAllocation) {
  tl::testing::expect_pass("forward_gemm_operands", staged(200), std::string(R"(
func @gemm(A: global float32[200, 256], B: global float32[256, 256], C: global float32[200, 256]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc A_shared: shared float32[128, 256]
    alloc C_local: fragment float32[128, 128]
    if (!(by < 1)) {
      copy(A[by * 128 :+ 128, 0 :+ 256], A_shared[0 :+ 128, 0 :+ 256])
    }
    evaluate 0
    if (by < 1) {
      gemm(A[by * 128 :+ 128, 0 :+ 256], B[0 :+ 256, bx * 128 :+ 128], C_local[0 :+ 128, 0 :+ 128]) )") + kGemmAttrs + R"(
    } else {
      gemm(A_shared[0 :+ 128, 0 :+ 256], B[0 :+ 256, bx * 128 :+ 128], C_local[0 :+ 128, 0 :+ 128]) )" + kGemmAttrs + R"(
    }
    copy(C_local[0 :+ 128, 0 :+ 128], C[by * 128 :+ 128, bx * 128 :+ 128])
  }
})");
}

// A staging buffer the kernel also reads elsewhere is not forwarded: copy and allocation stay.
TEST(ForwardGemmOperands, StagingBufferWithOtherUsesStays) {
  std::string src = staged(256);
  const std::string tail = "    copy(C_local[0 :+ 128, 0 :+ 128], C[by * 128 :+ 128, bx * 128 :+ 128])\n";
  src.replace(src.find(tail), tail.size(), tail + "    C[by * 128, bx] = B_shared[0, 0]\n");
  std::string want = std::string(R"(
func @gemm(A: global float32[256, 256], B: global float32[256, 256], C: global float32[256, 256]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc B_shared: shared float32[256, 128]
    alloc C_local: fragment float32[128, 128]
    evaluate 0
    copy(B[0 :+ 256, bx * 128 :+ 128], B_shared[0 :+ 256, 0 :+ 128])
    gemm(A[by * 128 :+ 128, 0 :+ 256], B_shared[0 :+ 256, 0 :+ 128], C_local[0 :+ 128, 0 :+ 128]) )") + kGemmAttrs + R"(
    copy(C_local[0 :+ 128, 0 :+ 128], C[by * 128 :+ 128, bx * 128 :+ 128])
    C[by * 128, bx] = B_shared[0, 0]
  }
})";
  tl::testing::expect_pass("forward_gemm_operands", src, want);
}

}  // namespace
}  // namespace tl
