// Expert-mode kernels written against the IR builder the way tilelang-ascend users write them:
// shared by the simulator, pass and timing tests.
#pragma once

#include "sim_test_util.h"

namespace tl::test {

struct GemmConfig {
  int64_t M = 1024, N = 1024, K = 1024;
  int64_t bm = 128, bn = 256, kl1 = 256, k0 = 64;
  int64_t cores = 24;
  bool double_buffer = true;  // two L1 and two L0A/L0B buffers with ping-pong flags
  bool hand_flags = true;     // false: no syncs at all (for auto-sync tests)
  DataType in = DataType::Float(16), acc = DataType::Float32(), out = DataType::Float(16);
};

// Persistent Expert GEMM with T.mma: tiles cid, cid + cores, ...; L1 stage over K in chunks of kl1,
// L0 stage in chunks of k0; ping-pong buffers with pre-armed flags:
//   MTE1->MTE2 (L1 slot free), M->MTE1 (L0 slot free), FIX->M (L0C free); forward MTE2->MTE1,
//   MTE1->M, M->FIX.
inline PrimFunc expert_gemm(const GemmConfig& g, std::vector<Buffer>* params = nullptr) {
  Buffer A = buf("A", {g.M, g.K}, g.in, MemScope::kGlobal), B = buf("B", {g.K, g.N}, g.in, MemScope::kGlobal),
         C = buf("C", {g.M, g.N}, g.out, MemScope::kGlobal);
  int64_t nb = g.double_buffer ? 2 : 1;
  Buffer A1 = buf("A_L1", {nb, g.bm, g.kl1}, g.in, MemScope::kL1), B1 = buf("B_L1", {nb, g.kl1, g.bn}, g.in, MemScope::kL1);
  Buffer A0 = buf("A_L0", {nb, g.bm, g.k0}, g.in, MemScope::kL0A), B0 = buf("B_L0", {nb, g.k0, g.bn}, g.in, MemScope::kL0B);
  Buffer C0 = buf("C_L0", {g.bm, g.bn}, g.acc, MemScope::kL0C);
  Var cid("cid"), vid("vid"), w("w"), ko("ko"), ki("ki");
  int64_t mt = g.M / g.bm, nt = g.N / g.bn, tiles = mt * nt;
  int64_t waves = (tiles + g.cores - 1) / g.cores;
  int64_t nko = g.K / g.kl1, nki = g.kl1 / g.k0;
  bool hf = g.hand_flags;
  auto F = [&](std::vector<Stmt>& v, Stmt s) {
    if (hf) v.push_back(std::move(s));
  };
  Expr slot1 = g.double_buffer ? floormod(ko, make_int(2)) : make_int(0);
  Expr slot0 = g.double_buffer ? floormod(ki, make_int(2)) : make_int(0);
  Var t("t"), bx("bx"), by("by");
  // Inner (L0) loop body.
  std::vector<Stmt> l0;
  F(l0, wait_flag("m", "mte1", slot0, 60));
  l0.push_back(copy(BufferRegion(A1, {Range(slot1, 1), Range(0, make_int(g.bm)), Range(ki * g.k0, make_int(g.k0))}),
                    BufferRegion(A0, {Range(slot0, 1), Range(0, make_int(g.bm)), Range(0, make_int(g.k0))}), 61));
  l0.push_back(copy(BufferRegion(B1, {Range(slot1, 1), Range(ki * g.k0, make_int(g.k0)), Range(0, make_int(g.bn))}),
                    BufferRegion(B0, {Range(slot0, 1), Range(0, make_int(g.k0)), Range(0, make_int(g.bn))}), 62));
  F(l0, set_flag("mte1", "m", slot0, 63));
  F(l0, wait_flag("mte1", "m", slot0, 64));
  AttrMap mattrs;
  mattrs["init"] = Attr(make_binary(BinOp::kAnd, eq(ko, make_int(0)), eq(ki, make_int(0))));
  l0.push_back(op("mma",
                  {BufferRegion(A0, {Range(slot0, 1), Range(0, make_int(g.bm)), Range(0, make_int(g.k0))}),
                   BufferRegion(B0, {Range(slot0, 1), Range(0, make_int(g.k0)), Range(0, make_int(g.bn))}), full(C0)},
                  65, mattrs));
  F(l0, set_flag("m", "mte1", slot0, 66));
  // L1 loop body.
  std::vector<Stmt> l1;
  F(l1, wait_flag("mte1", "mte2", slot1, 50));
  l1.push_back(copy(region(A, {{bx * g.bm, g.bm}, {ko * g.kl1, g.kl1}}),
                    BufferRegion(A1, {Range(slot1, 1), Range(0, make_int(g.bm)), Range(0, make_int(g.kl1))}), 51));
  l1.push_back(copy(region(B, {{ko * g.kl1, g.kl1}, {by * g.bn, g.bn}}),
                    BufferRegion(B1, {Range(slot1, 1), Range(0, make_int(g.kl1)), Range(0, make_int(g.bn))}), 52));
  F(l1, set_flag("mte2", "mte1", slot1, 53));
  F(l1, wait_flag("mte2", "mte1", slot1, 54));
  l1.push_back(serial(ki, make_int(nki), make_seq(l0)));
  F(l1, set_flag("mte1", "mte2", slot1, 55));
  // Tile body.
  std::vector<Stmt> tile;
  F(tile, wait_flag("fix", "m", 0, 45));
  tile.push_back(serial(ko, make_int(nko), make_seq(l1)));
  F(tile, set_flag("m", "fix", 0, 70));
  F(tile, wait_flag("m", "fix", 0, 71));
  tile.push_back(copy(full(C0), region(C, {{bx * g.bm, g.bm}, {by * g.bn, g.bn}}), 72));
  F(tile, set_flag("fix", "m", 0, 73));
  Stmt tile_body = make_let(bx, floordiv(t, make_int(nt)), make_let(by, floormod(t, make_int(nt)), make_seq(tile)));
  Stmt wave = make_let(t, w * make_int(g.cores) + cid, make_if(t < make_int(tiles), tile_body));
  std::vector<Stmt> body;
  int64_t ids = g.double_buffer ? 2 : 1;
  for (int64_t i = 0; i < ids; ++i) {
    F(body, set_flag("mte1", "mte2", make_int(i), 40));
    F(body, set_flag("m", "mte1", make_int(i), 41));
  }
  F(body, set_flag("fix", "m", 0, 42));
  body.push_back(serial(w, make_int(waves), wave));
  for (int64_t i = 0; i < ids; ++i) {
    F(body, wait_flag("mte1", "mte2", make_int(i), 80));
    F(body, wait_flag("m", "mte1", make_int(i), 81));
  }
  F(body, wait_flag("fix", "m", 0, 82));
  if (params) *params = {A, B, C};
  return npu_kernel("gemm", {A, B, C}, g.cores, cid, vid, {A1, B1, A0, B0, C0}, scope("C", make_seq(body)));
}

// Reference C = A @ B in double, rounded to the output dtype.
inline void gemm_reference(const HostTensor& A, const HostTensor& B, HostTensor* C, int64_t M, int64_t N, int64_t K) {
  std::vector<double> a(M * K), b(K * N);
  for (int64_t i = 0; i < M * K; ++i) a[i] = A.get(i);
  for (int64_t i = 0; i < K * N; ++i) b[i] = B.get(i);
  for (int64_t i = 0; i < M; ++i) {
    std::vector<double> row(N, 0.0);
    for (int64_t k = 0; k < K; ++k) {
      double av = a[i * K + k];
      for (int64_t j = 0; j < N; ++j) row[j] += av * b[k * N + j];
    }
    for (int64_t j = 0; j < N; ++j) C->set(i * N + j, row[j]);
  }
}

}  // namespace tl::test
