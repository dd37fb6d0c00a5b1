// The ascend pass pipeline end to end on C++-built Expert kernels: gemm_v0 expansion, auto sync.
#include <cstdlib>
#include <iostream>

#include "ascend_test_util.h"

namespace tl::test {

namespace {
const DataType f16 = DataType::Float(16), f32 = DataType::Float32();

// README-style Expert GEMM with gemm_v0: for each tile, K loop of GM->L1 copies and gemm_v0, then
// L0C->GM. `barriers`: the barrier_all calls users write around gemm_v0; none are needed.
PrimFunc gemm_v0_kernel(int64_t M, int64_t N, int64_t K, int64_t bm, int64_t bn, int64_t bk, int64_t cores,
                        bool barriers, std::vector<Stmt> extra_front = {}, std::vector<Buffer> extra_allocs = {}) {
  Buffer A = buf("A", {M, K}, f16, MemScope::kGlobal), B = buf("B", {K, N}, f16, MemScope::kGlobal),
         C = buf("C", {M, N}, f16, MemScope::kGlobal);
  Buffer A1 = buf("A_L1", {bm, bk}, f16, MemScope::kL1), B1 = buf("B_L1", {bk, bn}, f16, MemScope::kL1);
  Buffer C0 = buf("C_L0", {bm, bn}, f32, MemScope::kL0C);
  Var cid("cid"), vid("vid"), w("w"), k("k"), t("t");
  int64_t nt = N / bn, tiles = (M / bm) * nt;
  AttrMap ga;
  ga["init"] = Attr(eq(k, make_int(0)));
  std::vector<Stmt> kb = {copy(region(A, {{floordiv(t, make_int(nt)) * bm, bm}, {k * bk, bk}}), full(A1), 200),
                          copy(region(B, {{k * bk, bk}, {floormod(t, make_int(nt)) * bn, bn}}), full(B1), 201)};
  if (barriers) kb.push_back(barrier_all(202));
  kb.push_back(op("gemm_v0", {full(A1), full(B1), full(C0)}, 203, ga));
  if (barriers) kb.push_back(barrier_all(204));
  std::vector<Stmt> tile = {serial(k, make_int(K / bk), make_seq(kb)),
                            copy(full(C0), region(C, {{floordiv(t, make_int(nt)) * bm, bm},
                                                      {floormod(t, make_int(nt)) * bn, bn}}), 205)};
  if (barriers) tile.push_back(barrier_all(206));
  Stmt loop = serial(w, make_int((tiles + cores - 1) / cores),
                     make_let(t, w * cores + cid, make_if(t < make_int(tiles), make_seq(tile))));
  std::vector<Stmt> body = extra_front;
  body.push_back(loop);
  std::vector<Buffer> allocs = {A1, B1, C0};
  for (auto& b : extra_allocs) allocs.push_back(b);
  return npu_kernel("gemm_v0", {A, B, C}, cores, cid, vid, allocs, scope("C", make_seq(body)));
}

void check(const HostTensor& C, const HostTensor& A, const HostTensor& B, int64_t M, int64_t N, int64_t K) {
  HostTensor R = tensor({M, N}, f32);
  gemm_reference(A, B, &R, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) ASSERT_NEAR(C.get(i), R.get(i), 0.05) << i;
}
}  // namespace

TEST(AscendPipeline, GemmV0NeedsNoUserFlags) {
  int64_t M = 256, N = 256, K = 512;
  for (bool barriers : {true, false}) {
    PrimFunc low = lower(gemm_v0_kernel(M, N, K, 128, 128, 128, 4, barriers));
    EXPECT_GT(count_calls(low, "ascend.set_flag"), 8);  // the macro's own flags are in the IR
    auto A = tensor({M, K}, f16, 3), B = tensor({K, N}, f16, 4), C = tensor({M, N}, f16);
    run(low, {&A, &B, &C});
    check(C, A, B, M, N, K);
  }
}

TEST(AscendPipeline, GemmV0ChunksKToFitHalfOfL0) {
  // 128 x 256 tiles: a K chunk of 128 would need 64 KiB of L0B, so the macro uses chunks of 64.
  int64_t M = 128, N = 256, K = 256;
  PrimFunc low = lower(gemm_v0_kernel(M, N, K, 128, 256, 256, 1, false));
  auto A = tensor({M, K}, f16, 5), B = tensor({K, N}, f16, 6), C = tensor({M, N}, f16);
  run(low, {&A, &B, &C});
  check(C, A, B, M, N, K);
}

TEST(AscendPipeline, UserFlagCollidingWithGemmV0IsCaught) {
  // The user pre-arms MTE1->MTE2 id 0 for their own double buffering; gemm_v0 sets the same flag.
  PrimFunc f = gemm_v0_kernel(128, 128, 128, 128, 128, 128, 1, false, {set_flag("mte1", "mte2", 0, 210)});
  auto A = tensor({128, 128}, f16, 1), B = tensor({128, 128}, f16, 2), C = tensor({128, 128}, f16);
  expect_sync_error(lower(f), {&A, &B, &C}, {"double set", "(\"mte1\", \"mte2\", 0)", "kernel.py:210"});
}

TEST(AscendPipeline, UserL0ABufferWithGemmV0IsCaught) {
  Buffer mine = buf("my_l0a", {64, 64}, f16, MemScope::kL0A);
  Buffer G = buf("G", {64, 64}, f16, MemScope::kGlobal);
  // The user's L0A buffer is used (filled) before the gemm: it needs L0A space that gemm_v0 owns.
  PrimFunc f = gemm_v0_kernel(128, 128, 128, 128, 128, 128, 1, false, {op("fill", {full(mine), make_float(0.0, f16)}, 211)},
                              {mine});
  try {
    lower(f);
    FAIL() << "expected a ResourceError";
  } catch (const ResourceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("L0A over capacity"), std::string::npos) << m;
    EXPECT_NE(m.find("my_l0a"), std::string::npos) << m;
    EXPECT_NE(m.find("gemm_v0"), std::string::npos) << m;
  }
}

TEST(AscendPipeline, AutoSyncMakesFlagFreeGemmRaceFree) {
  GemmConfig g;
  g.M = 512;
  g.N = 512;
  g.K = 1024;
  g.cores = 8;
  g.hand_flags = false;
  PrimFunc raw = expert_gemm(g);
  auto A = tensor({g.M, g.K}, g.in, 21), B = tensor({g.K, g.N}, g.in, 22), C = tensor({g.M, g.N}, g.out);
  // Without flags the strict checker refuses it...
  expect_sync_error(lower(raw), {&A, &B, &C}, {"race"});
  // ... with auto sync it passes, with no barrier_all, and runs about as fast as the hand-synced one.
  PrimFunc low = lower(raw, auto_sync());
  EXPECT_EQ(count_calls(low, "ascend.barrier_all"), 0) << print_func(low);
  if (std::getenv("TL_TEST_PRINT_IR")) std::cout << print_func(low);
  EXPECT_GT(attr_int(low.attrs(), "ascend.syncs_inserted", 0), 0);
  auto st = run(low, {&A, &B, &C});
  check(C, A, B, g.M, g.N, g.K);
  g.hand_flags = true;
  auto C2 = tensor({g.M, g.N}, g.out);
  auto hand = run(lower(expert_gemm(g)), {&A, &B, &C2});
  EXPECT_LT(st.cycles, 1.10 * hand.cycles) << "auto " << st.cycles << " vs hand " << hand.cycles;
  RecordProperty("auto_over_hand", std::to_string(st.cycles / hand.cycles));
  if (std::getenv("TL_TEST_PRINT_IR")) std::cout << "auto " << st.cycles << " hand " << hand.cycles << "\n";
}

TEST(AscendPipeline, AutoSyncKeepsHandFlagsAndAddsNothing) {
  GemmConfig g;
  g.M = 256;
  g.N = 256;
  g.K = 512;
  g.cores = 2;
  PrimFunc low = lower(expert_gemm(g), auto_sync());
  EXPECT_EQ(attr_int(low.attrs(), "ascend.syncs_inserted", -1), 0) << print_func(low);
}

}  // namespace tl::test
