// The simulator end to end on hand-built Expert kernels: values, and every kind of sync error.
#include "sim_test_util.h"

namespace tl::test {

namespace {

constexpr int64_t kN = 4096, kBlocks = 4, kBlock = kN / kBlocks, kHalf = kBlock / 2;
const DataType f16 = DataType::Float(16);

// Expert vector add: each AIV handles half of a block's slice.
//   flags: which of the two hand-written flag pairs to emit (MTE2->V, V->MTE3).
PrimFunc vector_add(bool flag_in, bool flag_out, std::vector<Buffer>* params) {
  Buffer A = buf("A", {kN}, f16, MemScope::kGlobal), B = buf("B", {kN}, f16, MemScope::kGlobal),
         C = buf("C", {kN}, f16, MemScope::kGlobal);
  Buffer a = buf("a_ub", {kHalf}, f16, MemScope::kUB), b = buf("b_ub", {kHalf}, f16, MemScope::kUB),
         c = buf("c_ub", {kHalf}, f16, MemScope::kUB);
  Var cid("cid"), vid("vid");
  Expr base = cid * make_int(kBlock) + vid * make_int(kHalf);
  std::vector<Stmt> s;
  s.push_back(copy(region(A, {{base, kHalf}}), full(a), 10));
  s.push_back(copy(region(B, {{base, kHalf}}), full(b), 11));
  if (flag_in) {
    s.push_back(set_flag("mte2", "v", 0, 12));
    s.push_back(wait_flag("mte2", "v", 0, 13));
  }
  s.push_back(op("tile.add", {full(c), full(a), full(b)}, 14));
  if (flag_out) {
    s.push_back(set_flag("v", "mte3", 0, 15));
    s.push_back(wait_flag("v", "mte3", 0, 16));
  }
  s.push_back(copy(full(c), region(C, {{base, kHalf}}), 17));
  *params = {A, B, C};
  return npu_kernel("vadd", *params, kBlocks, cid, vid, {a, b, c}, scope("V", make_seq(s)));
}

}  // namespace

TEST(SimEngine, VectorAddWithFlags) {
  std::vector<Buffer> ps;
  PrimFunc f = vector_add(true, true, &ps);
  auto A = tensor({kN}, f16, 1), B = tensor({kN}, f16, 2), C = tensor({kN}, f16);
  auto st = run(f, {&A, &B, &C});
  for (int64_t i = 0; i < kN; ++i) {
    double want = half_ref(float(A.get(i) + B.get(i)));
    ASSERT_NEAR(C.get(i), want, 1e-3) << i;
  }
  EXPECT_GT(st.cycles, 0);
  EXPECT_EQ(st.blocks, kBlocks);
  EXPECT_EQ(st.instructions, kBlocks * 2 * 4);
  EXPECT_GT(st.utilisation[1][int(sim::Pipe::kMTE2)], 0);
}

TEST(SimEngine, MissingFlagIsARawRaceOnUB) {
  std::vector<Buffer> ps;
  PrimFunc f = vector_add(false, true, &ps);
  auto A = tensor({kN}, f16, 1), B = tensor({kN}, f16, 2), C = tensor({kN}, f16);
  expect_sync_error(f, {&A, &B, &C},
                    {"race (RAW) on UB", "MTE2", "pipe V", "kernel.py:10", "kernel.py:14", "block 0 AIV0",
                     "T.set_flag(\"mte2\", \"v\", id)"});
}

TEST(SimEngine, MissingOutputFlagIsARawRace) {
  std::vector<Buffer> ps;
  PrimFunc f = vector_add(true, false, &ps);
  auto A = tensor({kN}, f16, 1), B = tensor({kN}, f16, 2), C = tensor({kN}, f16);
  expect_sync_error(f, {&A, &B, &C}, {"RAW", "c_ub", "pipe V", "pipe MTE3", "kernel.py:14", "kernel.py:17"});
}

TEST(SimEngine, LenientModeOrdersSilently) {
  std::vector<Buffer> ps;
  PrimFunc f = vector_add(false, false, &ps);
  auto A = tensor({kN}, f16, 1), B = tensor({kN}, f16, 2), C = tensor({kN}, f16);
  sim::SimOptions o;
  o.lenient = true;
  run(f, {&A, &B, &C}, o);
  for (int64_t i = 0; i < kN; ++i) ASSERT_NEAR(C.get(i), A.get(i) + B.get(i), 2e-3) << i;
}

TEST(SimEngine, DoubleSetIsReported) {
  Buffer A = buf("A", {64}, f16, MemScope::kGlobal);
  Var cid("cid"), vid("vid");
  Stmt body = scope("V", make_seq({set_flag("mte2", "v", 3, 20), set_flag("mte2", "v", 3, 21),
                                    wait_flag("mte2", "v", 3, 22), wait_flag("mte2", "v", 3, 23)}));
  PrimFunc f = npu_kernel("dbl", {A}, 1, cid, vid, {}, body);
  auto a = tensor({64}, f16);
  expect_sync_error(f, {&a}, {"double set", "(\"mte2\", \"v\", 3)", "kernel.py:21", "kernel.py:20"});
}

TEST(SimEngine, DeadlockNamesPipeEventAndLocation) {
  Buffer A = buf("A", {64}, f16, MemScope::kGlobal);
  Var cid("cid"), vid("vid");
  Stmt body = scope("V", make_seq({wait_flag("v", "mte3", 5, 30)}));
  PrimFunc f = npu_kernel("dl", {A}, 2, cid, vid, {}, body);
  auto a = tensor({64}, f16);
  expect_sync_error(f, {&a}, {"deadlock", "pipe MTE3", "T.wait_flag(\"v\", \"mte3\", 5)", "kernel.py:30"});
}

TEST(SimEngine, FlagLeftSetAtKernelEnd) {
  Buffer A = buf("A", {64}, f16, MemScope::kGlobal);
  Var cid("cid"), vid("vid");
  Stmt body = scope("C", make_seq({set_flag("mte1", "mte2", 1, 40)}));
  PrimFunc f = npu_kernel("left", {A}, 1, cid, vid, {}, body);
  auto a = tensor({64}, f16);
  expect_sync_error(f, {&a}, {"flag left set", "(\"mte1\", \"mte2\", 1)", "kernel.py:40", "block 0 AIC"});
}

TEST(SimEngine, VectorPipeNeedsBarrierBetweenDependentOps) {
  Buffer A = buf("A", {256}, DataType::Float32(), MemScope::kGlobal);
  Buffer x = buf("x", {128}, DataType::Float32(), MemScope::kUB), y = buf("y", {128}, DataType::Float32(), MemScope::kUB);
  Var cid("cid"), vid("vid");
  auto build = [&](bool barrier) {
    std::vector<Stmt> s = {copy(region(A, {{vid * 128, 128}}), full(x), 50), set_flag("mte2", "v", 0),
                           wait_flag("mte2", "v", 0), op("tile.exp", {full(y), full(x)}, 51)};
    if (barrier) s.push_back(pipe_barrier("v", 52));
    s.push_back(op("tile.mul", {full(y), full(y), make_float(2.0)}, 53));
    s.push_back(set_flag("v", "mte3", 0));
    s.push_back(wait_flag("v", "mte3", 0));
    s.push_back(copy(full(y), region(A, {{vid * 128, 128}}), 54));
    return npu_kernel("vv", {A}, 1, cid, vid, {x, y}, scope("V", make_seq(s)));
  };
  auto a = tensor({256}, DataType::Float32(), 7);
  auto a0 = a;
  expect_sync_error(build(false), {&a}, {"race (RAW) on UB", "pipe V", "T.pipe_barrier(\"v\")", "kernel.py:51",
                                         "kernel.py:53"});
  a = a0;
  run(build(true), {&a});
  for (int i = 0; i < 256; ++i) ASSERT_NEAR(a.get(i), 2 * std::exp(a0.get(i)), 1e-4 * (1 + std::exp(a0.get(i))));
}

}  // namespace tl::test
