// The race checker: box geometry, and races across cores and blocks on GM, cross-core flags, sync_all.
#include "kernels.h"
#include "sim/race_checker.h"

namespace tl::test {

using sim::Box;
using sim::make_box;

TEST(SimBox, StridedOverlapAndContainment) {
  int64_t ext[2] = {4, 8}, st[2] = {64, 1};
  Box a = make_box(0, 2, 2, ext, st);  // 4 rows of 16 bytes, row stride 128 bytes
  EXPECT_EQ(a.row_bytes, 16);
  EXPECT_EQ(a.nd, 1);
  int64_t ext2[2] = {4, 8};
  Box b = make_box(16, 2, 2, ext2, st);  // the next 16 bytes of each row: disjoint
  int64_t lo, hi;
  EXPECT_FALSE(sim::box_overlap(a, b, &lo, &hi));
  Box c = make_box(8, 2, 2, ext2, st);  // overlaps by 8 bytes per row
  ASSERT_TRUE(sim::box_overlap(a, c, &lo, &hi));
  EXPECT_EQ(lo, 8);
  EXPECT_EQ(hi, 16);
  int64_t e3[2] = {2, 4};
  Box d = make_box(128 + 4, 2, 2, e3, st);  // rows 1-2, bytes 4..12
  EXPECT_TRUE(sim::box_contains(a, d));
  EXPECT_FALSE(sim::box_contains(d, a));
  int64_t e4[1] = {64}, s4[1] = {1};
  Box flat = make_box(0, 2, 1, e4, s4);  // contiguous rows merge into one run
  EXPECT_EQ(flat.nd, 0);
  EXPECT_EQ(flat.row_bytes, 128);
}

// One access is compared only with the earlier ones that touch the same pages of its rows: a GM
// tile a few rows high in a wide tensor must not share pages with every other tile of its rows
// (the checker then did work growing with the square of the tensor's width: a 1024 x 32768
// element-wise kernel took 82 s to simulate). The work per access stays flat as the tensor widens.
TEST(SimRaceChecker, WorkPerAccessDoesNotGrowWithTensorWidth) {
  auto per_access = [](int64_t tiles) {
    sim::RaceChecker rc(nullptr);
    const int64_t rows = 64, tile_elems = 128, width = tiles * tile_elems;
    sim::VClock vc;
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t ext[2] = {rows, tile_elems}, st[2] = {width, 1};
      sim::AccessInfo a;
      a.box = make_box(t * tile_elems * 4, 4, 2, ext, st);
      a.write = true;
      a.block = static_cast<int>(t);  // unordered blocks writing disjoint tiles: no race
      rc.access(a, vc);
    }
    return static_cast<double>(rc.comparisons()) / static_cast<double>(tiles);
  };
  double narrow = per_access(64), wide = per_access(256);
  EXPECT_GT(narrow, 0.0);
  EXPECT_LE(wide, narrow * 1.05) << "comparisons per access: " << narrow << " for 64 tiles, " << wide << " for 256";
}

// A value read again and again by one pipe and never written (LayerNorm's per-row mean, loaded by the
// scalar unit for every tile) keeps one record per box: each read supersedes the earlier reads of its
// pipe that it covers. A later unordered write still races with it (reported with the latest read).
TEST(SimRaceChecker, RepeatedReadsOfOnePipeDoNotPileUp) {
  sim::RaceChecker rc(nullptr);
  sim::VClock vc;
  int64_t one = 1;
  for (uint32_t k = 1; k <= 1000; ++k) {
    sim::AccessInfo r;
    r.mem = sim::Mem::kUB;
    r.space = 1;
    r.core = 1;
    r.pipe = sim::Pipe::kS;
    r.epoch = k;
    r.box = make_box(64 + 4 * (k % 8), 4, 1, &one, &one);  // 8 scalars read in turn
    rc.access(r, vc);
  }
  EXPECT_EQ(rc.live_records(), 8u);
  // A write by the vector pipe that nothing orders after the reads: still a race.
  sim::AccessInfo w;
  w.mem = sim::Mem::kUB;
  w.space = 1;
  w.core = 1;
  w.pipe = sim::Pipe::kV;
  w.epoch = 1;
  w.write = true;
  int64_t ext = 8, st = 1;
  w.box = make_box(64, 4, 1, &ext, &st);
  EXPECT_THROW(rc.check(w, vc), SyncError);
  // Ordered after the last read of the S pipe, it is ordered after all of them (no race).
  sim::VClock after;
  after.c[sim::clock_index(1, sim::Pipe::kS)] = 1000;
  EXPECT_NO_THROW(rc.check(w, after));
  // Reads of another core or pipe are not superseded.
  sim::AccessInfo v = w;
  v.write = false;
  v.epoch = 2;
  rc.access(v, vc);
  EXPECT_EQ(rc.live_records(), 9u);
}

namespace {
const DataType f16 = DataType::Float(16), f32 = DataType::Float32();

// Cube: C_tile = A_tile @ B into a GM workspace; vector: out = workspace + bias. One 64x64 tile per block.
PrimFunc cube_to_vector(bool cross_flag, int64_t blocks) {
  int64_t t = 64;
  Buffer A = buf("A", {blocks * t, t}, f16, MemScope::kGlobal), B = buf("B", {t, t}, f16, MemScope::kGlobal);
  Buffer Bias = buf("bias", {t, t}, f32, MemScope::kGlobal), Out = buf("out", {blocks * t, t}, f32, MemScope::kGlobal);
  Buffer W = buf("workspace", {blocks * t, t}, f32, MemScope::kGlobal);
  Buffer a1 = buf("a_l1", {t, t}, f16, MemScope::kL1), b1 = buf("b_l1", {t, t}, f16, MemScope::kL1);
  Buffer a0 = buf("a_l0", {t, t}, f16, MemScope::kL0A), b0 = buf("b_l0", {t, t}, f16, MemScope::kL0B);
  Buffer c0 = buf("c_l0", {t, t}, f32, MemScope::kL0C);
  Buffer x = buf("x_ub", {t / 2, t}, f32, MemScope::kUB), bb = buf("b_ub", {t / 2, t}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  AttrMap init;
  init["init"] = Attr(make_bool(true));
  std::vector<Stmt> cube = {copy(region(A, {{cid * t, t}, {make_int(0), t}}), full(a1), 100),
                            copy(full(B), full(b1), 101),
                            set_flag("mte2", "mte1", 0),
                            wait_flag("mte2", "mte1", 0),
                            copy(full(a1), full(a0), 102),
                            copy(full(b1), full(b0), 103),
                            set_flag("mte1", "m", 0),
                            wait_flag("mte1", "m", 0),
                            op("mma", {full(a0), full(b0), full(c0)}, 104, init),
                            set_flag("m", "fix", 0),
                            wait_flag("m", "fix", 0),
                            copy(full(c0), region(W, {{cid * t, t}, {make_int(0), t}}), 105)};
  if (cross_flag) cube.push_back(set_cross("fix", 0, 2, 106));
  Expr row = cid * t + vid * (t / 2);
  std::vector<Stmt> vec;
  if (cross_flag) vec.push_back(wait_cross(0, 110));
  vec.push_back(copy(region(W, {{row, t / 2}, {make_int(0), t}}), full(x), 111));
  vec.push_back(copy(region(Bias, {{vid * (t / 2), t / 2}, {make_int(0), t}}), full(bb), 112));
  vec.push_back(set_flag("mte2", "v", 0));
  vec.push_back(wait_flag("mte2", "v", 0));
  vec.push_back(op("tile.add", {full(x), full(x), full(bb)}, 113));
  vec.push_back(set_flag("v", "mte3", 0));
  vec.push_back(wait_flag("v", "mte3", 0));
  vec.push_back(copy(full(x), region(Out, {{row, t / 2}, {make_int(0), t}}), 114));
  return npu_kernel("cv", {A, B, Bias, Out, W}, blocks, cid, vid, {a1, b1, a0, b0, c0, x, bb},
                    make_seq({scope("C", make_seq(cube)), scope("V", make_seq(vec))}));
}
}  // namespace

TEST(SimCrossCore, CubeToVectorThroughWorkspace) {
  int64_t blocks = 3, t = 64;
  auto A = tensor({blocks * t, t}, f16, 1), B = tensor({t, t}, f16, 2), Bias = tensor({t, t}, f32, 3);
  auto Out = tensor({blocks * t, t}, f32), W = tensor({blocks * t, t}, f32);
  run(cube_to_vector(true, blocks), {&A, &B, &Bias, &Out, &W});
  HostTensor R = tensor({blocks * t, t}, f32);
  gemm_reference(A, B, &R, blocks * t, t, t);
  for (int64_t i = 0; i < blocks * t; ++i)
    for (int64_t j = 0; j < t; ++j)
      ASSERT_NEAR(Out.get(i * t + j), R.get(i * t + j) + Bias.get((i % t) * t + j), 1e-3) << i << "," << j;
}

TEST(SimCrossCore, MissingCrossFlagIsAGmRaceBetweenCores) {
  int64_t blocks = 2, t = 64;
  auto A = tensor({blocks * t, t}, f16, 1), B = tensor({t, t}, f16, 2), Bias = tensor({t, t}, f32, 3);
  auto Out = tensor({blocks * t, t}, f32), W = tensor({blocks * t, t}, f32);
  expect_sync_error(cube_to_vector(false, blocks), {&A, &B, &Bias, &Out, &W},
                    {"race", "on GM tensor 'workspace'", "pipe FIX", "pipe MTE2", "kernel.py:105", "kernel.py:111",
                     "block 0 AIC", "set_cross_flag"});
}

TEST(SimCrossCore, WriteWriteAcrossBlocks) {
  // Every block writes the same GM rows, each its own values: a WAW race between blocks. (Blocks
  // writing identical bytes get a warning instead: tests/python/ascend/test_ascend_ascendc_route.py.)
  Buffer O = buf("O", {64}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {32}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  Stmt body = scope("V", make_seq({op("fill", {full(x), make_cast(f32, cid) + make_float(1.0)}, 120), set_flag("v", "mte3", 0),
                                    wait_flag("v", "mte3", 0), copy(full(x), region(O, {{vid * 32, 32}}), 121)}));
  auto o = tensor({64}, f32);
  expect_sync_error(npu_kernel("ww", {O}, 2, cid, vid, {x}, body), {&o},
                    {"race (WAW) on GM tensor 'O'", "block 0 AIV", "block 1 AIV", "kernel.py:121"});
}

namespace {
// Phase 1: block b writes row b of W; sync_all; phase 2: block b reads row (b+1)%n.
PrimFunc exchange(bool with_sync, int64_t blocks) {
  Buffer W = buf("W", {blocks, 64}, f32, MemScope::kGlobal), O = buf("O", {blocks, 64}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {1, 64}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  std::vector<Stmt> s = {op("fill", {full(x), make_cast(f32, cid) + make_float(1.0)}, 130), set_flag("v", "mte3", 0),
                         wait_flag("v", "mte3", 0), copy(full(x), region(W, {{cid, 1}, {make_int(0), 64}}), 131)};
  if (with_sync) s.push_back(call("ascend.sync_all", {}, 132));
  s.push_back(set_flag("mte3", "mte2", 0));
  s.push_back(wait_flag("mte3", "mte2", 0));
  s.push_back(copy(region(W, {{floormod(cid + 1, make_int(blocks)), 1}, {make_int(0), 64}}), full(x), 133));
  s.push_back(set_flag("mte2", "mte3", 0));
  s.push_back(wait_flag("mte2", "mte3", 0));
  s.push_back(copy(full(x), region(O, {{cid, 1}, {make_int(0), 64}}), 134));
  Stmt body = scope("V", make_if(eq(vid, make_int(0)), make_seq(s)));
  // vid 1 idles, but still takes part in sync_all: give it its own sync_all call.
  if (with_sync) body = make_seq({body, scope("V", make_if(eq(vid, make_int(1)), call("ascend.sync_all", {}, 135)))});
  return npu_kernel("xchg", {W, O}, blocks, cid, vid, {x}, body);
}
}  // namespace

TEST(SimCrossCore, SyncAllOrdersBlocks) {
  int64_t n = 4;
  auto W = tensor({n, 64}, f32), O = tensor({n, 64}, f32);
  run(exchange(true, n), {&W, &O});
  for (int64_t b = 0; b < n; ++b) ASSERT_EQ(O.get(b * 64 + 5), double((b + 1) % n + 1));
  auto W2 = tensor({n, 64}, f32), O2 = tensor({n, 64}, f32);
  expect_sync_error(exchange(false, n), {&W2, &O2}, {"race (RAW) on GM tensor 'W'", "kernel.py:131", "kernel.py:133"});
}

TEST(SimCrossCore, SyncAllWithMoreBlocksThanCoresDeadlocks) {
  auto W = tensor({30, 64}, f32), O = tensor({30, 64}, f32);
  expect_sync_error(exchange(true, 30), {&W, &O}, {"deadlock", "T.sync_all", "30 blocks", "24"});
}

TEST(SimCrossCore, VectorToCubeNeedsBothVectorCores) {
  // Mode 2 from the vector side: the cube's counter rises only when both AIVs have set.
  Buffer O = buf("O", {64}, f32, MemScope::kGlobal);
  Var cid("cid"), vid("vid");
  Stmt only_v0 = scope("V", make_if(eq(vid, make_int(0)), set_cross("v", 3, 2, 140)));
  Stmt cube = scope("C", wait_cross(3, 141));
  auto o = tensor({64}, f32);
  expect_sync_error(npu_kernel("v2c", {O}, 1, cid, vid, {}, make_seq({only_v0, cube})), {&o},
                    {"deadlock", "T.wait_cross_flag(3)", "kernel.py:141"});
  Stmt both = scope("V", set_cross("v", 3, 2, 142));
  run(npu_kernel("v2c_ok", {O}, 1, cid, vid, {}, make_seq({both, cube})), {&o});
}

TEST(SimCrossCore, CrossFlagOverflow) {
  Buffer O = buf("O", {64}, f32, MemScope::kGlobal);
  Var cid("cid"), vid("vid"), i("i");
  Stmt sets = scope("C", serial(i, make_int(20), set_cross("fix", 1, 2, 150)));
  auto o = tensor({64}, f32);
  expect_sync_error(npu_kernel("ovf", {O}, 1, cid, vid, {}, sets), {&o}, {"cross-core flag 1 overflow", "kernel.py:150"});
}

}  // namespace tl::test

namespace tl::test {

TEST(SimCrossCore, WarOnL1BetweenMte1AndMte2) {
  // MTE2 reloads the L1 tile while MTE1 may still be reading it: a WAR race on L1.
  Buffer A = buf("A", {2, 64, 64}, DataType::Float(16), MemScope::kGlobal);
  Buffer a1 = buf("a_l1", {64, 64}, DataType::Float(16), MemScope::kL1);
  Buffer a0 = buf("a_l0", {64, 64}, DataType::Float(16), MemScope::kL0A);
  Var cid("cid"), vid("vid");
  Stmt body = scope("C", make_seq({copy(region(A, {{make_int(0), 1}, {make_int(0), 64}, {make_int(0), 64}}), full(a1), 400),
                                    set_flag("mte2", "mte1", 0), wait_flag("mte2", "mte1", 0),
                                    copy(full(a1), full(a0), 401),
                                    copy(region(A, {{make_int(1), 1}, {make_int(0), 64}, {make_int(0), 64}}), full(a1), 402)}));
  auto At = tensor({2, 64, 64}, DataType::Float(16), 1);
  expect_sync_error(npu_kernel("war", {A}, 1, cid, vid, {a1, a0}, body), {&At},
                    {"race (WAR) on L1", "pipe MTE1", "pipe MTE2", "kernel.py:401", "kernel.py:402", "block 0 AIC"});
}

TEST(SimCrossCore, Mode1OrdersTheTwoVectorCores) {
  // AIV0 writes row 0 of W, AIV1 reads it after a mode-1 barrier between the two vector cores.
  Buffer W = buf("W", {2, 64}, f32, MemScope::kGlobal), O = buf("O", {64}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {1, 64}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  auto build = [&](bool barrier) {
    std::vector<Stmt> v0 = {op("fill", {full(x), make_float(7.0)}, 410), set_flag("v", "mte3", 0), wait_flag("v", "mte3", 0),
                            copy(full(x), region(W, {{make_int(0), 1}, {make_int(0), 64}}), 411)};
    std::vector<Stmt> v1 = {copy(region(W, {{make_int(0), 1}, {make_int(0), 64}}), full(x), 412), set_flag("mte2", "mte3", 0),
                            wait_flag("mte2", "mte3", 0), copy(full(x), BufferRegion(O, {Range(0, make_int(64))}), 413)};
    if (barrier) {
      v0.push_back(set_cross("mte3", 5, 1, 414));
      v0.push_back(wait_cross(5, 415));
      v1.insert(v1.begin(), wait_cross(5, 416));
      v1.insert(v1.begin(), set_cross("mte2", 5, 1, 417));
    }
    Stmt body = scope("V", make_if(eq(vid, make_int(0)), make_seq(v0), make_seq(v1)));
    return npu_kernel("m1", {W, O}, 1, cid, vid, {x}, body);
  };
  auto Wt = tensor({2, 64}, f32), Ot = tensor({64}, f32);
  run(build(true), {&Wt, &Ot});
  for (int i = 0; i < 64; ++i) ASSERT_EQ(Ot.get(i), 7.0);
  expect_sync_error(build(false), {&Wt, &Ot}, {"race", "GM tensor 'W'", "block 0 AIV0", "block 0 AIV1"});
}

TEST(SimCrossCore, Mode0IsABarrierOfAllCubeCores) {
  // Every cube core writes its row of W from L0C, then (mode-0 barrier) reads its neighbour's row.
  int64_t n = 3, t = 16;
  Buffer W = buf("W", {n * t, t}, f32, MemScope::kGlobal);
  Buffer A = buf("A", {t, t}, DataType::Float(16), MemScope::kGlobal);
  Buffer a1 = buf("a1", {t, t}, DataType::Float(16), MemScope::kL1), a0 = buf("a0", {t, t}, DataType::Float(16), MemScope::kL0A);
  Buffer b0 = buf("b0", {t, t}, DataType::Float(16), MemScope::kL0B), c0 = buf("c0", {t, t}, f32, MemScope::kL0C);
  Buffer r1 = buf("r1", {t, t}, f32, MemScope::kL1);
  Var cid("cid"), vid("vid");
  AttrMap init;
  init["init"] = Attr(make_bool(true));
  auto build = [&](bool barrier) {
    std::vector<Stmt> s = {copy(full(A), full(a1)), set_flag("mte2", "mte1", 0), wait_flag("mte2", "mte1", 0),
                           copy(full(a1), full(a0)), copy(full(a1), full(b0)), set_flag("mte1", "m", 0),
                           wait_flag("mte1", "m", 0), op("mma", {full(a0), full(b0), full(c0)}, 420, init),
                           set_flag("m", "fix", 0), wait_flag("m", "fix", 0),
                           copy(full(c0), region(W, {{cid * t, t}, {make_int(0), t}}), 421)};
    if (barrier) {
      s.push_back(set_cross("fix", 2, 0, 422));
      s.push_back(wait_cross(2, 423));
    }
    s.push_back(copy(region(W, {{floormod(cid + 1, make_int(n)) * t, t}, {make_int(0), t}}), full(r1), 424));
    return npu_kernel("m0", {W, A}, n, cid, vid, {a1, a0, b0, c0, r1}, scope("C", make_seq(s)));
  };
  auto Wt = tensor({n * t, t}, f32), At = tensor({t, t}, DataType::Float(16), 3);
  run(build(true), {&Wt, &At});
  expect_sync_error(build(false), {&Wt, &At}, {"race (", "on GM tensor 'W'", "kernel.py:421", "kernel.py:424"});
}

TEST(SimCrossCore, AtomicAddsFromManyBlocksDoNotRace) {
  Buffer O = buf("O", {64}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {32}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  Stmt body = scope("V", make_seq({op("fill", {full(x), make_cast(f32, cid + 1)}, 430), set_flag("v", "mte3", 0),
                                    wait_flag("v", "mte3", 0),
                                    op("atomic_add", {region(O, {{vid * 32, 32}}), full(x)}, 431)}));
  auto Ot = tensor({64}, f32);
  run(npu_kernel("atom", {O}, 5, cid, vid, {x}, body), {&Ot});
  for (int i = 0; i < 64; ++i) ASSERT_EQ(Ot.get(i), 15.0);  // 1 + 2 + 3 + 4 + 5
}

}  // namespace tl::test
