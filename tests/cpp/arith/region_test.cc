#include "arith/region.h"

#include <gtest/gtest.h>

#include <sstream>

#include "ir/printer.h"

namespace tl {
namespace {

std::string str(const BufferRegion& r) {
  std::ostringstream os;
  os << r.buffer.name() << "[";
  for (size_t d = 0; d < r.region.size(); ++d)
    os << (d ? ", " : "") << print_expr(r.region[d].min) << " :+ " << print_expr(r.region[d].extent);
  os << "]";
  return os.str();
}

std::string str(const std::vector<BufferRegion>& rs) {
  std::string out;
  for (auto& r : rs) out += (out.empty() ? "" : "; ") + str(r);
  return out;
}

class Region : public ::testing::Test {
 protected:
  Buffer buf(const std::string& name, std::vector<Expr> shape, MemScope scope = MemScope::kGlobal) {
    return Buffer(name, DataType::Float32(), std::move(shape), scope);
  }
  Analyzer an;
  Var i{"i"}, j{"j"}, k{"k"}, bx{"bx"}, tx{"tx"}, n{"n"};
};

TEST_F(Region, RelaxRegion) {
  Buffer A = buf("A", {make_int(64), make_int(64)});
  BufferRegion r(A, {Range(i * 8 + j, 1), Range(k, 4)});
  EXPECT_EQ(str(relax_region(r, {{i, Range(0, 4)}, {j, Range(0, 8)}}, an)), "A[0 :+ 32, k :+ 4]");
  EXPECT_EQ(str(relax_region(r, {{k, Range(0, n)}}, an)), "A[i * 8 + j :+ 1, 0 :+ n + 3]");
  // An unbounded dimension becomes the whole dimension.
  Buffer idx = buf("idx", {make_int(16)});
  BufferRegion g(A, {Range(make_cast(DataType::Int32(), make_load(idx, {i})), 1), Range(0, 64)});
  EXPECT_EQ(str(relax_region(g, {{i, Range(0, 16)}}, an)), "A[0 :+ 64, 0 :+ 64]");
}

TEST_F(Region, LoopNestMergesAccessesPerBuffer) {
  Buffer A = buf("A", {make_int(32)}), B = buf("B", {make_int(4), make_int(8)});
  Stmt body = make_store(B, {i, j}, make_load(A, {i * 8 + j}) + make_load(A, {j}));
  Stmt s = make_for(i, 0, 4, ForKind::kSerial, make_for(j, 0, 8, ForKind::kParallel, body));
  AccessRegions acc = collect_access_regions(s, an);
  EXPECT_EQ(str(acc.reads), "A[0 :+ 32]");
  EXPECT_EQ(str(acc.writes), "B[0 :+ 4, 0 :+ 8]");
  // The loop body alone: i is defined outside and stays symbolic.
  AccessRegions inner = collect_access_regions(make_for(j, 0, 8, ForKind::kParallel, body), an);
  EXPECT_EQ(str(inner.reads), "A[min(i * 8, 0) :+ max(i * 8, 0) - min(i * 8, 0) + 8]");
  EXPECT_EQ(str(inner.writes), "B[i :+ 1, 0 :+ 8]");
  {
    auto scope = an.bind_scoped(i, Range(0, 4));  // what the caller knows about i
    AccessRegions known = collect_access_regions(make_for(j, 0, 8, ForKind::kParallel, body), an);
    EXPECT_EQ(str(known.reads), "A[0 :+ i * 8 + 8]");
  }
}

TEST_F(Region, SymbolicExtentsAndTriangularLoops) {
  Var K("K"), by("by");
  an.bind(K, ConstIntBound(1, 1 << 20));
  Buffer A = buf("A", {make_int(1024), K});
  Stmt load = make_store(buf("C", {make_int(1)}, MemScope::kLocal), {make_int(0)},
                         make_load(A, {by * 128 + i, k * 32 + j}));
  Stmt s = make_for(k, 0, ceildiv(K, 32), ForKind::kSerial,
                    make_for(i, 0, 128, ForKind::kParallel, make_for(j, 0, 32, ForKind::kParallel, load)));
  EXPECT_EQ(str(collect_access_regions(s, an).reads), "A[by * 128 :+ 128, 0 :+ floordiv(K + 31, 32) * 32]");
  Buffer T = buf("T", {n});
  Stmt tri = make_for(i, 0, n, ForKind::kSerial, make_for(j, 0, i + 1, ForKind::kSerial, make_store(T, {j}, make_float(0.0))));
  EXPECT_EQ(str(collect_access_regions(tri, an).writes), "T[0 :+ n]");
}

TEST_F(Region, KernelIndicesLetsRampsAndFlatIndices) {
  Buffer A = buf("A", {make_int(512)}), B = buf("B", {make_int(8), make_int(8)});
  Stmt k = make_kernel({make_int(4)}, {bx}, {make_int(128)}, {tx}, {}, make_store(A, {bx * 128 + tx}, make_float(1.0)));
  EXPECT_EQ(str(collect_access_regions(k, an).writes), "A[0 :+ 512]");
  Var t("t");
  Stmt let = make_for(i, 0, 4, ForKind::kSerial, make_let(t, i * 2, make_store(A, {t + 1}, make_float(0.0))));
  EXPECT_EQ(str(collect_access_regions(let, an).writes), "A[1 :+ 7]");
  Stmt ramp = make_for(i, 0, 8, ForKind::kSerial,
                       make_store(A, {make_ramp(i * 4, make_int(1), 4)}, make_broadcast(make_float(0.0), 4)));
  EXPECT_EQ(str(collect_access_regions(ramp, an).writes), "A[0 :+ 32]");
  Stmt flat = make_store(B, {i}, make_float(0.0));
  EXPECT_EQ(str(collect_access_regions(flat, an).writes), "B[0 :+ 8, 0 :+ 8]");
}

TEST_F(Region, ConditionsAndScalarsCountAsReads) {
  Buffer A = buf("A", {make_int(128)}), M = buf("M", {make_int(128)}), C = buf("C", {make_int(128)});
  Stmt s = make_for(i, 0, 128, ForKind::kSerial,
                    make_if(make_load(M, {i}) > 0.0f && i < n, make_store(C, {i}, make_load(A, {i}))));
  AccessRegions acc = collect_access_regions(s, an);
  // Conditions are not used to narrow regions: A is reported over all of i's range.
  EXPECT_EQ(str(acc.reads), "M[0 :+ 128]; A[0 :+ 128]");
  EXPECT_EQ(str(acc.writes), "C[0 :+ 128]");
  Buffer cnt("cnt", DataType::Int32(), {make_int(4)}, MemScope::kGlobal);
  Stmt atomic = make_evaluate(make_call(DataType::Int32(), "tl.atomic_add_scalar", {make_load(cnt, {make_int(2)}), make_int(1)}));
  AccessRegions at = collect_access_regions(atomic, an);
  EXPECT_EQ(str(at.reads), "cnt[2 :+ 1]");
  EXPECT_EQ(str(at.writes), "cnt[2 :+ 1]");
}

TEST_F(Region, TileOpsThroughTheRegistry) {
  Buffer A = buf("A", {make_int(1024), make_int(1024)});
  Buffer S = buf("S", {make_int(128), make_int(32)}, MemScope::kShared);
  Buffer F = buf("F", {make_int(128)}, MemScope::kFragment);
  // Unregistered op: region argument 0 written, the other regions read; loads in scalar
  // arguments are reads.
  Stmt copy = make_tile_op("test.unregistered_copy",
                           {BufferRegion(S, {Range(0, 128), Range(0, 32)}),
                            BufferRegion(A, {Range(bx * 128, 128), Range(k * 32, 32)}), make_load(F, {make_int(0)})});
  Stmt loop = make_for(k, 0, 32, ForKind::kPipelined, copy);
  AccessRegions acc = collect_access_regions(loop, an);
  EXPECT_EQ(str(acc.writes), "S[0 :+ 128, 0 :+ 32]");
  EXPECT_EQ(str(acc.reads), "F[0 :+ 1]; A[bx * 128 :+ 128, 0 :+ 1024]");
  // A registered op says what it reads and writes (here: accumulates into its first region).
  struct AccumulateOp final : TileOp {
    AccumulateOp() : TileOp("test.accumulate", TileOpKind::kElementwise) {}
    void verify(const TileOpNode&) const override {}
    AccessRegions effects(const TileOpNode& op) const override {
      AccessRegions a;
      a.reads = {op.args[0].region, op.args[1].region};
      a.writes = {op.args[0].region};
      return a;
    }
    Stmt lower_loops(const TileOpNode&, const LowerContext&) const override { return Stmt(); }
  };
  static TileOpRegistration reg(std::make_unique<AccumulateOp>());
  Stmt accum = make_tile_op("test.accumulate", {BufferRegion(F, {Range(0, 128)}), BufferRegion(S, {Range(0, 128), Range(i, 1)})});
  AccessRegions acc2 = collect_access_regions(make_for(i, 0, 32, ForKind::kSerial, accum), an);
  EXPECT_EQ(str(acc2.reads), "F[0 :+ 128]; S[0 :+ 128, 0 :+ 32]");
  EXPECT_EQ(str(acc2.writes), "F[0 :+ 128]");
}

TEST_F(Region, Union) {
  Buffer A = buf("A", {make_int(64)});
  BufferRegion a(A, {Range(0, 16)}), b(A, {Range(8, 32)});
  EXPECT_EQ(str(region_union(a, b, an)), "A[0 :+ 40]");
  BufferRegion c(A, {Range(i, 4)});
  EXPECT_EQ(str(region_union(a, c, an)), "A[min(i, 0) :+ max(i, 12) - min(i, 0) + 4]");
}

}  // namespace
}  // namespace tl
