// The mma.sync fragments against the PTX ISA tables ("Matrix Fragments for mma.m16n8k16 /
// m16n8k8 / m16n8k32"), written here in the ISA's own per-element form, independently of the
// digit representation of src/layout.
#include <gtest/gtest.h>

#include <set>

#include "ir/error.h"
#include "layout/layout.h"
#include "layout/mma_layout.h"

namespace tl {
namespace {

struct RC {
  int64_t row, col;
};

// PTX ISA, m16n8k16 .f16/.bf16, multiplicand A (a0..a7).
RC ptx_a_f16(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
  int col = t * 2 + (i & 1) + (i >= 4 ? 8 : 0);
  return {row, col};
}
// m16n8k16 .f16/.bf16, multiplicand B (b0..b3): row = k, col = n.
RC ptx_b_f16(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {t * 2 + (i & 1) + (i >= 2 ? 8 : 0), g};
}
// Accumulators C/D of m16n8k16 / m16n8k8 / m16n8k32 (c0..c3), f32 and s32 alike.
RC ptx_c(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i < 2 ? g : g + 8, t * 2 + (i & 1)};
}
// m16n8k8 .tf32, A (a0..a3) and B (b0, b1).
RC ptx_a_tf32(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {(i == 0 || i == 2) ? g : g + 8, (i < 2) ? t : t + 4};
}
RC ptx_b_tf32(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {i == 0 ? t : t + 4, g};
}
// m16n8k32 .s8/.u8, A (a0..a15) and B (b0..b7).
RC ptx_a_s8(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  int row = (i < 4 || (i >= 8 && i < 12)) ? g : g + 8;
  int col = t * 4 + (i & 3) + (i >= 8 ? 16 : 0);
  return {row, col};
}
RC ptx_b_s8(int lane, int i) {
  int g = lane >> 2, t = lane % 4;
  return {t * 4 + (i & 3) + (i >= 4 ? 16 : 0), g};
}

void expect_matches_table(const Fragment& f, int regs, RC (*table)(int, int), const char* what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(f.num_threads(), 32) << f.str();
  ASSERT_EQ(f.num_regs(), regs) << f.str();
  ASSERT_EQ(f.replicate(), 1);
  std::set<std::pair<int64_t, int64_t>> covered;
  for (int lane = 0; lane < 32; ++lane) {
    for (int i = 0; i < regs; ++i) {
      RC rc = table(lane, i);
      std::vector<int64_t> idx;
      ASSERT_TRUE(f.index_at(lane, i, &idx));
      EXPECT_EQ(idx[0], rc.row) << "lane " << lane << " element " << i;
      EXPECT_EQ(idx[1], rc.col) << "lane " << lane << " element " << i;
      EXPECT_EQ(f.thread_at({rc.row, rc.col}), lane);
      EXPECT_EQ(f.reg_at({rc.row, rc.col}), i);
      covered.insert({rc.row, rc.col});
    }
  }
  EXPECT_EQ(static_cast<int64_t>(covered.size()), f.num_elements());
  std::string why;
  EXPECT_TRUE(f.is_bijective(&why)) << why;
}

TEST(MmaLayout, WarpFragmentsMatchPtxTables) {
  expect_matches_table(mma_warp_fragment_a(DataType::Float(16)), 8, ptx_a_f16, "A f16");
  expect_matches_table(mma_warp_fragment_a(DataType::BFloat16()), 8, ptx_a_f16, "A bf16");
  expect_matches_table(mma_warp_fragment_b(DataType::Float(16)), 4, ptx_b_f16, "B f16");
  expect_matches_table(mma_warp_fragment_c(), 4, ptx_c, "C");
  expect_matches_table(mma_warp_fragment_a(DataType::Float32()), 4, ptx_a_tf32, "A tf32");
  expect_matches_table(mma_warp_fragment_b(DataType::Float32()), 2, ptx_b_tf32, "B tf32");
  expect_matches_table(mma_warp_fragment_a(DataType::Int(8)), 16, ptx_a_s8, "A s8");
  expect_matches_table(mma_warp_fragment_b(DataType::Int(8)), 8, ptx_b_s8, "B s8");
  EXPECT_EQ(mma_k(DataType::Float(16)), 16);
  EXPECT_EQ(mma_k(DataType::Float32()), 8);
  EXPECT_EQ(mma_k(DataType::Int(8)), 32);
  EXPECT_THROW(mma_k(DataType::Float(64)), NotImplemented);
}

TEST(MmaLayout, ExpressionsAgreeWithIntegers) {
  Fragment f = mma_warp_fragment_a(DataType::Float(16));
  Var i("i"), j("j"), t("t"), r("r");
  Expr te = f.thread_of({i, j});
  Expr re = f.reg_of({i, j});
  std::vector<Expr> back = f.index_of(t, r);
  for (int64_t row = 0; row < 16; ++row) {
    for (int64_t col = 0; col < 16; ++col) {
      std::map<Var, int64_t, VarLess> env{{i, row}, {j, col}};
      int64_t lane = eval_index(te, env), reg = eval_index(re, env);
      EXPECT_EQ(lane, f.thread_at({row, col}));
      EXPECT_EQ(reg, f.reg_at({row, col}));
      std::map<Var, int64_t, VarLess> inv{{t, lane}, {r, reg}};
      EXPECT_EQ(eval_index(back[0], inv), row);
      EXPECT_EQ(eval_index(back[1], inv), col);
    }
  }
}

// Which warp (thread / 32) owns each accumulator element: the warp tile of the partition.
TEST(MmaLayout, BlockAccumulatorFollowsWarpTiles) {
  const int64_t M = 128, N = 64;
  WarpPartition w{2, 2};
  Fragment c = make_mma_c_fragment(M, N, w);
  EXPECT_EQ(c.num_threads(), 128);
  EXPECT_EQ(c.num_regs(), M * N / 128);
  std::string why;
  ASSERT_TRUE(c.is_bijective(&why)) << why;
  for (int64_t row = 0; row < M; ++row) {
    for (int64_t col = 0; col < N; ++col) {
      int64_t t = c.thread_at({row, col});
      int64_t warp = t / 32, lane = t % 32;
      EXPECT_EQ(warp / w.warps_n, row / (M / w.warps_m));
      EXPECT_EQ(warp % w.warps_n, col / (N / w.warps_n));
      // Inside the warp, the instruction-level C table applies to the 16 x 8 sub-tile.
      RC rc = ptx_c(static_cast<int>(lane), static_cast<int>(c.reg_at({row, col}) % 4));
      EXPECT_EQ(rc.row, row % 16);
      EXPECT_EQ(rc.col, col % 8);
    }
  }
}

TEST(MmaLayout, OperandFragmentsReplicateAcrossTheOtherWarps) {
  WarpPartition w{2, 4};
  Fragment a = make_mma_a_fragment(64, 32, w, DataType::Float(16));
  EXPECT_EQ(a.num_threads(), 256);
  EXPECT_EQ(a.replicate(), 4);
  std::string why;
  ASSERT_TRUE(a.is_bijective(&why)) << why;
  for (int64_t rep = 0; rep < 4; ++rep) {
    int64_t t = a.thread_at({40, 17}, rep);
    EXPECT_EQ(t / 32 / w.warps_n, 1);  // rows 32..63 belong to warp row 1
    EXPECT_EQ(t / 32 % w.warps_n, rep);
  }
  Fragment b = make_mma_b_fragment(32, 64, w, DataType::BFloat16());
  EXPECT_EQ(b.replicate(), 2);
  ASSERT_TRUE(b.is_bijective(&why)) << why;
}

// Flash attention feeds the accumulator of one GEMM as the A operand of the next: with all warps
// along M the two layouts must be identical, so no data moves between threads.
TEST(MmaLayout, AccumulatorEqualsNextOperandWithFullRow) {
  WarpPartition w = compute_warp_partition(128, 64, 4, GemmWarpPolicy::kFullRow);
  EXPECT_EQ(w.warps_m, 4);
  EXPECT_EQ(w.warps_n, 1);
  Fragment c = make_mma_c_fragment(128, 64, w);
  Fragment a = make_mma_a_fragment(128, 64, w, DataType::Float(16));
  EXPECT_TRUE(c.same_as(a)) << c.str() << "\n" << a.str();
  // With warps split along N the operand is replicated and the layouts differ.
  WarpPartition sq{2, 2};
  EXPECT_FALSE(make_mma_c_fragment(128, 64, sq).same_as(make_mma_a_fragment(128, 64, sq, DataType::Float(16))));
}

TEST(MmaLayout, WarpPartitionPolicies) {
  WarpPartition s = compute_warp_partition(128, 128, 4, GemmWarpPolicy::kSquare);
  EXPECT_EQ(s.warps_m, 2);
  EXPECT_EQ(s.warps_n, 2);
  WarpPartition fc = compute_warp_partition(128, 128, 4, GemmWarpPolicy::kFullCol);
  EXPECT_EQ(fc.warps_m, 1);
  EXPECT_EQ(fc.warps_n, 4);
  // 32 rows cannot hold 4 warps of 16 rows: FullRow settles for 2 x 2.
  WarpPartition fr = compute_warp_partition(32, 128, 4, GemmWarpPolicy::kFullRow);
  EXPECT_EQ(fr.warps_m, 2);
  EXPECT_EQ(fr.warps_n, 2);
  EXPECT_THROW(compute_warp_partition(16, 8, 4, GemmWarpPolicy::kSquare), LayoutError);
  EXPECT_EQ(parse_gemm_warp_policy("FullRow"), GemmWarpPolicy::kFullRow);
  EXPECT_THROW(parse_gemm_warp_policy("Diagonal"), ValueError);
}

// wgmma m64nNk16 accumulators (PTX ISA, "Register fragment for matrix D" of wgmma): thread t of a
// warpgroup holds d[i] at row 16 * (t / 32) + (t % 32) / 4 + 8 * ((i / 2) % 2) and column
// 8 * (i / 4) + 2 * (t % 4) + i % 2; further 64-row instruction tiles follow in registers, and
// warpgroups split the block tile.
TEST(MmaLayout, WgmmaAccumulatorIsTheInstructionsDFragment) {
  struct Case {
    int64_t m, n;
    WarpgroupPartition p;
  };
  for (const Case& c : std::vector<Case>{{64, 256, {1, 1}}, {128, 256, {2, 1}}, {256, 128, {2, 1}},
                                         {128, 128, {1, 2}}, {128, 64, {1, 1}}}) {
    SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << " over " << c.p.wg_m << "x" << c.p.wg_n);
    Fragment f = make_wgmma_c_fragment(c.m, c.n, c.p);
    const int64_t mw = c.m / c.p.wg_m, nw = c.n / c.p.wg_n;
    ASSERT_EQ(f.num_threads(), 128 * c.p.wg_m * c.p.wg_n);
    ASSERT_EQ(f.num_regs(), mw / 64 * nw / 2);
    for (int64_t t = 0; t < f.num_threads(); ++t) {
      int64_t wg = t / 128, lt = t % 128;
      for (int64_t r = 0; r < f.num_regs(); ++r) {
        int64_t mi = r / (nw / 2), i = r % (nw / 2);
        int64_t row = (wg / c.p.wg_n) * mw + 64 * mi + 16 * (lt / 32) + (lt % 32) / 4 + 8 * ((i / 2) % 2);
        int64_t col = (wg % c.p.wg_n) * nw + 8 * (i / 4) + 2 * (lt % 4) + i % 2;
        std::vector<int64_t> idx;
        ASSERT_TRUE(f.index_at(t, r, &idx));
        EXPECT_EQ(idx, (std::vector<int64_t>{row, col})) << "thread " << t << " reg " << r;
      }
    }
  }
}

// The register A operand of wgmma is the mma.sync m16n8k16 A fragment of each warp's 16 rows, and
// flash attention's P = softmax(Q K^T) goes from one GEMM's accumulator to the next one's A
// without moving: the two layouts coincide when warpgroups only split M.
TEST(MmaLayout, WgmmaAccumulatorEqualsNextRegisterOperand) {
  for (WarpgroupPartition p : {WarpgroupPartition{1, 1}, WarpgroupPartition{2, 1}}) {
    Fragment c = make_wgmma_c_fragment(128, 64, p);
    Fragment a = make_wgmma_a_fragment(128, 64, p, DataType::Float(16));
    EXPECT_TRUE(c.same_as(a)) << c.str() << "\n" << a.str();
  }
  Fragment a = make_wgmma_a_fragment(64, 32, {1, 1}, DataType::BFloat16());
  for (int64_t t = 0; t < 128; ++t)
    for (int64_t r = 0; r < a.num_regs(); ++r) {
      std::vector<int64_t> idx;
      ASSERT_TRUE(a.index_at(t, r, &idx));
      RC rc = ptx_a_f16(static_cast<int>(t % 32), static_cast<int>(r % 8));
      EXPECT_EQ(idx[0], 16 * (t / 32) + rc.row);
      EXPECT_EQ(idx[1], 16 * (r / 8) + rc.col);
    }
  Fragment rep = make_wgmma_a_fragment(64, 32, {1, 2}, DataType::Float(16));
  EXPECT_EQ(rep.replicate(), 2);
  EXPECT_THROW(make_wgmma_a_fragment(64, 32, {1, 1}, DataType::Float32()), NotImplemented);
}

TEST(MmaLayout, WarpgroupPartitions) {
  WarpgroupPartition p;
  ASSERT_TRUE(compute_warpgroup_partition(128, 256, 2, GemmWarpPolicy::kSquare, &p));
  EXPECT_EQ(p.wg_m, 2);
  EXPECT_EQ(p.wg_n, 1);
  // 64 rows cannot hold two warpgroups: they split N.
  ASSERT_TRUE(compute_warpgroup_partition(64, 256, 2, GemmWarpPolicy::kSquare, &p));
  EXPECT_EQ(p.wg_m, 1);
  EXPECT_EQ(p.wg_n, 2);
  ASSERT_TRUE(compute_warpgroup_partition(128, 128, 2, GemmWarpPolicy::kFullCol, &p));
  EXPECT_EQ(p.wg_n, 2);
  // N beyond 256 per warpgroup, or M not in 64-row tiles: no wgmma.
  EXPECT_FALSE(compute_warpgroup_partition(64, 512, 1, GemmWarpPolicy::kSquare, &p));
  EXPECT_FALSE(compute_warpgroup_partition(32, 64, 1, GemmWarpPolicy::kSquare, &p));
}

}  // namespace
}  // namespace tl
