// The shared liveness analysis (transform/buffer_liveness.h) that cuda's plan_shared_memory and
// ascend's memory planner both use: intervals from loads, stores and tile-op effects; loops keep
// alive what they use across iterations unless the allocation is inside; concurrent roles overlap.
#include "transform/buffer_liveness.h"

#include <gtest/gtest.h>

#include "ir/parser.h"

namespace tl {
namespace {

std::map<std::string, LiveInterval> intervals(const std::string& text, const LivenessOptions& opts = {}) {
  PrimFunc f = parse_func(text, "<test>");
  std::map<std::string, LiveInterval> out;
  for (auto& li : buffer_live_intervals(f.body(), opts)) out[li.buffer.name()] = li;
  return out;
}
bool overlap(const LiveInterval& a, const LiveInterval& b) { return !(a.last < b.first || b.last < a.first); }

TEST(BufferLiveness, SequentialUsesAreDisjointAndLoopsExtendLifetimes) {
  auto l = intervals(R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[128]
    alloc S1: shared float32[128]
    alloc S2: shared float32[128]
    alloc S3: shared float32[128]
    S0[tx] = A[tx]
    B[tx] = S0[127 - tx]
    for k: int32 in serial(0, 4) {
      S1[tx] = A[tx]
      B[tx] = S1[tx]
      S2[tx] = B[tx]
    }
    A[tx] = S2[tx]
  }
})");
  ASSERT_EQ(l.size(), 4u);
  EXPECT_TRUE(l["S0"].used);
  EXPECT_LE(l["S0"].first, l["S0"].last);
  EXPECT_FALSE(overlap(l["S0"], l["S1"]));  // S0 dies before the loop
  // S1 is written and read within one iteration, but the loop keeps it alive throughout: S2, first
  // written after S1's last read, still overlaps it.
  EXPECT_TRUE(overlap(l["S1"], l["S2"]));
  EXPECT_FALSE(l["S3"].used);  // allocated, never touched
  EXPECT_EQ(l["S0"].order, 0);
  EXPECT_EQ(l["S3"].order, 3);
}

TEST(BufferLiveness, AnAllocationInsideTheLoopIsNotCarried) {
  auto l = intervals(R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for k: int32 in serial(0, 4) {
      alloc T0: shared float32[128]
      alloc T1: shared float32[128]
      T0[tx] = A[tx]
      B[tx] = T0[tx]
      T1[tx] = B[tx]
      A[tx] = T1[tx]
    }
  }
})");
  EXPECT_FALSE(overlap(l["T0"], l["T1"]));
}

TEST(BufferLiveness, TileOpEffectsAndTrackedScopes) {
  LivenessOptions opts;
  opts.track = [](const Buffer& b) { return b.scope() == MemScope::kShared; };
  auto l = intervals(R"(
func @main(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    alloc S0: shared float32[64]
    alloc S1: shared float32[64]
    alloc F: local.fragment float32[64]
    copy(A[0 :+ 64], S0[0 :+ 64])
    copy(S0[0 :+ 64], B[0 :+ 64])
    copy(B[0 :+ 64], S1[0 :+ 64])
    copy(S1[0 :+ 64], F[0 :+ 64])
  }
})", opts);
  ASSERT_EQ(l.size(), 2u);  // the fragment is not tracked
  EXPECT_TRUE(l["S0"].used && l["S1"].used);
  EXPECT_FALSE(overlap(l["S0"], l["S1"]));
  EXPECT_LT(l["S0"].last, l["S1"].first);
}

TEST(BufferLiveness, ConcurrentRolesOverlap) {
  const char* text = R"(
func @main(A: global float32[128], B: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[256], thread_vars=[tx: int32]) {
    alloc P: shared float32[128]
    alloc C: shared float32[128]
    attr "cuda.warp_specialize" = 1 {
      if (tx < 128) {
        C[tx] = A[tx]
        B[tx] = C[tx]
      } else {
        P[tx - 128] = A[tx - 128]
        B[tx - 128] = P[tx - 128]
      }
    }
  }
})";
  EXPECT_FALSE(overlap(intervals(text)["P"], intervals(text)["C"]));  // as sequential branches
  LivenessOptions opts;
  opts.concurrent_attr = "cuda.warp_specialize";
  auto l = intervals(text, opts);
  EXPECT_TRUE(overlap(l["P"], l["C"]));  // the roles run at the same time
}

}  // namespace
}  // namespace tl
