// Automatic intra-core sync: kernels without hand-written flags pass the strict checker, with few
// syncs, rotating ids for ping-pong buffers, and ids that avoid the user's.
#include <cstdlib>
#include <iostream>

#include "ascend_test_util.h"

namespace tl::test {

namespace {
const DataType f32 = DataType::Float32(), f16 = DataType::Float(16);

bool flags_use_rotating_ids(const PrimFunc& f) {
  bool found = false;
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* e = s.as<EvaluateNode>();
    auto* c = e ? e->value.as<CallNode>() : nullptr;
    if (c && c->op == "ascend.wait_flag" && c->args.size() == 3 && !is_const_int(c->args[2])) found = true;
  });
  return found;
}
}  // namespace

TEST(AscendInsertSync, VectorAddNeedsTwoPairs) {
  int64_t n = 2048, half = 1024;
  Buffer A = buf("A", {n}, f16, MemScope::kGlobal), B = buf("B", {n}, f16, MemScope::kGlobal),
         C = buf("C", {n}, f16, MemScope::kGlobal);
  Buffer a = buf("a", {half}, f16, MemScope::kUB), b = buf("b", {half}, f16, MemScope::kUB),
         c = buf("c", {half}, f16, MemScope::kUB);
  Var cid("cid"), vid("vid");
  Stmt body = make_seq({copy(region(A, {{vid * half, half}}), full(a), 10),
                        copy(region(B, {{vid * half, half}}), full(b), 11), op("tile.add", {full(c), full(a), full(b)}, 12),
                        copy(full(c), region(C, {{vid * half, half}}), 13)});
  // Unscoped, as many Expert kernels leave GM<->UB copies: placement puts them on the vector core.
  PrimFunc f = npu_kernel("vadd", {A, B, C}, 1, cid, vid, {a, b, c}, body);
  PrimFunc low = lower(f, auto_sync());
  EXPECT_EQ(attr_int(low.attrs(), "ascend.syncs_inserted", 0), 4) << print_func(low);
  auto At = tensor({n}, f16, 1), Bt = tensor({n}, f16, 2), Ct = tensor({n}, f16);
  run(low, {&At, &Bt, &Ct});
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(Ct.get(i), At.get(i) + Bt.get(i), 2e-3);
}

TEST(AscendInsertSync, DependentVectorOpsGetPipeBarrier) {
  Buffer X = buf("X", {256}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {128}, f32, MemScope::kUB), y = buf("y", {128}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  Stmt body = scope("V", make_seq({copy(region(X, {{vid * 128, 128}}), full(x)), op("tile.exp", {full(y), full(x)}),
                                    op("tile.add", {full(y), full(y), full(x)}), op("tile.mul", {full(y), full(y), make_float(0.5)}),
                                    copy(full(y), region(X, {{vid * 128, 128}}))}));
  PrimFunc low = lower(npu_kernel("vv", {X}, 1, cid, vid, {x, y}, body), auto_sync());
  EXPECT_EQ(count_calls(low, "ascend.pipe_barrier"), 2) << print_func(low);
  auto Xt = tensor({256}, f32, 5);
  auto X0 = Xt;
  run(low, {&Xt});
  for (int i = 0; i < 256; ++i) ASSERT_NEAR(Xt.get(i), 0.5 * (std::exp(X0.get(i)) + X0.get(i)), 1e-4);
}

TEST(AscendInsertSync, ScalarAccessesSyncWithTheVectorPipe) {
  // The scalar unit reads a vector result (the max of a row) and writes a UB element the vector
  // pipe then uses.
  Buffer X = buf("X", {1, 64}, f32, MemScope::kGlobal), O = buf("O", {1, 64}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {1, 64}, f32, MemScope::kUB), m = buf("m", {1}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid"), mv("mv", f32);
  AttrMap red;
  red["type"] = Attr("max");
  red["dim"] = Attr(int64_t(0));  // in the squeezed source shape [64]
  red["clear"] = Attr(true);
  Stmt work = make_seq({copy(full(X), full(x)), op("reduce", {full(x), full(m)}, 0, red),
                        make_let(mv, make_load(m, {make_int(0)}),
                                 make_seq({make_store(x, {make_int(0), make_int(0)}, mv * make_float(2.0)),
                                           op("tile.sub", {full(x), full(x), mv}), copy(full(x), full(O))}))});
  Stmt body = scope("V", make_if(eq(vid, make_int(0)), work));
  PrimFunc low = lower(npu_kernel("scalar", {X, O}, 1, cid, vid, {x, m}, body), auto_sync());
  auto Xt = tensor({1, 64}, f32, 9), Ot = tensor({1, 64}, f32);
  run(low, {&Xt, &Ot});
  double mx = -1e9;
  for (int i = 0; i < 64; ++i) mx = std::max(mx, Xt.get(i));
  EXPECT_NEAR(Ot.get(0), 2 * mx - mx, 1e-5);
  for (int i = 1; i < 64; ++i) ASSERT_NEAR(Ot.get(i), Xt.get(i) - mx, 1e-5);
}

namespace {
// y[i] = exp(x[i]) * x[i] over `chunks` chunks on AIV0, through `slots` UB buffers indexed k % slots.
PrimFunc scale_loop(int64_t chunk, int64_t chunks, int64_t slots) {
  Buffer X = buf("X", {chunks * chunk}, f32, MemScope::kGlobal), Y = buf("Y", {chunks * chunk}, f32, MemScope::kGlobal);
  Buffer xu = buf("x_ub", {slots, chunk}, f32, MemScope::kUB), yu = buf("y_ub", {slots, chunk}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid"), k("k");
  Expr s = slots > 1 ? floormod(k, make_int(slots)) : make_int(0);
  auto slot = [&](const Buffer& b) { return BufferRegion(b, {Range(s, make_int(1)), Range(make_int(0), make_int(chunk))}); };
  Stmt loop = serial(k, make_int(chunks),
                     make_seq({copy(region(X, {{k * chunk, chunk}}), slot(xu)),
                               op("tile.exp", {slot(yu), slot(xu)}), op("tile.mul", {slot(yu), slot(yu), slot(xu)}),
                               copy(slot(yu), region(Y, {{k * chunk, chunk}}))}));
  return npu_kernel("scale", {X, Y}, 1, cid, vid, {xu, yu}, scope("V", make_if(eq(vid, make_int(0)), loop)));
}
}  // namespace

TEST(AscendInsertSync, DoubleBufferedVectorLoopRotatesIdsWithoutBarrierAll) {
  int64_t chunk = 4096, chunks = 8;
  PrimFunc low = lower(scale_loop(chunk, chunks, 2), auto_sync());
  EXPECT_EQ(count_calls(low, "ascend.barrier_all"), 0) << print_func(low);
  EXPECT_TRUE(flags_use_rotating_ids(low)) << print_func(low);
  if (std::getenv("TL_TEST_PRINT_IR")) std::cout << print_func(low);
  auto Xt = tensor({chunks * chunk}, f32, 3), Yt = tensor({chunks * chunk}, f32);
  auto st = run(low, {&Xt, &Yt});
  for (int64_t i = 0; i < chunks * chunk; ++i) ASSERT_NEAR(Yt.get(i), std::exp(Xt.get(i)) * Xt.get(i), 1e-5);
  // The ping-pong lets MTE2, V and MTE3 overlap: faster than a single buffer.
  auto st1 = run(lower(scale_loop(chunk, chunks, 1), auto_sync()), {&Xt, &Yt});
  EXPECT_LT(st.cycles, 0.8 * st1.cycles) << "double buffer " << st.cycles << " vs single " << st1.cycles;
}

TEST(AscendInsertSync, InsertedIdsAvoidTheUsersIds) {
  int64_t n = 1024;
  Buffer A = buf("A", {2 * n}, f32, MemScope::kGlobal);
  Buffer a = buf("a", {n}, f32, MemScope::kUB), b = buf("b", {n}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  // The user synchronises the first copy with (mte2, v, 0) by hand; the second copy is left to the pass.
  Stmt body = scope("V", make_seq({copy(region(A, {{vid * n, n}}), full(a), 1), set_flag("mte2", "v", 0, 2),
                                    wait_flag("mte2", "v", 0, 3), op("tile.exp", {full(b), full(a)}, 4),
                                    copy(region(A, {{vid * n, n}}), full(a), 5), op("tile.add", {full(b), full(b), full(a)}, 6),
                                    copy(full(b), region(A, {{vid * n, n}}), 7)}));
  PrimFunc low = lower(npu_kernel("ids", {A}, 1, cid, vid, {a, b}, body), auto_sync());
  int user_ids_reused = 0;
  post_order_visit(low.body(), [&](const Stmt& s) {
    auto* e = s.as<EvaluateNode>();
    auto* c = e ? e->value.as<CallNode>() : nullptr;
    if (c && c->op == "ascend.set_flag" && c->args[0].as<StringImmNode>()->value == "mte2" &&
        c->args[1].as<StringImmNode>()->value == "v" && is_zero(c->args[2]) && e->span.line != 2)
      ++user_ids_reused;
  });
  EXPECT_EQ(user_ids_reused, 0) << print_func(low);
  auto At = tensor({2 * n}, f32, 4);
  auto A0 = At;
  run(low, {&At});
  for (int64_t i = 0; i < 2 * n; ++i) ASSERT_NEAR(At.get(i), std::exp(A0.get(i)) + A0.get(i), 1e-4 * (1 + std::exp(A0.get(i))));
}

}  // namespace tl::test
