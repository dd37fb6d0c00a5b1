// End-to-end tests of the cpu target: IR -> lower_cpu -> codegen_cpu -> g++ -> dlopen -> run,
// compared with references computed here in double precision on random inputs.
#include <cmath>

#include "ir/error.h"
#include "target/cpu/cpu_kernel_util.h"
#include "transform/flatten_buffer_access.h"
#include "transform/legalize_cpu_loops.h"
#include "transform/lower_tile_ops.h"

namespace tl {
namespace {

using namespace tl::test;

const DataType f32 = DataType::Float32();
const DataType f16 = DataType::Float(16);

// C = A + B over N elements with blocks of 128 and a tail (N not a multiple of 128):
// the tail exercises the guarded global copies.
PrimFunc elementwise_add(int64_t n, int64_t block) {
  Buffer A = global("A", f32, {c(n)}), B = global("B", f32, {c(n)}), C = global("C", f32, {c(n)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({ceildiv(c(n), c(block))}, {bx}, {c(128)}, {Var("tx")}, {});
  Buffer As = shared("A_s", f32, {c(block)}), Bs = shared("B_s", f32, {c(block)});
  Buffer Cs = fragment("C_local", f32, {c(block)});
  b.alloc(As);
  b.alloc(Bs);
  b.alloc(Cs);
  b.emit(make_tile_op("copy", {region(A, {{bx * block, c(block)}}), full(As)}));
  b.emit(make_tile_op("copy", {region(B, {{bx * block, c(block)}}), full(Bs)}));
  Var i("i");
  b.enter_for(i, 0, c(block), ForKind::kParallel);
  b.emit(make_store(Cs, {i}, make_load(As, {i}) + make_load(Bs, {i})));
  b.exit();
  b.emit(make_tile_op("copy", {full(Cs), region(C, {{bx * block, c(block)}})}));
  b.exit();
  return b.finish_func("add", {tensor_param(A), tensor_param(B), tensor_param(C)});
}

TEST(CpuCodegen, ElementwiseAddWithTail) {
  const int64_t n = 1000;
  CpuKernel k;
  k.build(elementwise_add(n, 128));
  ASSERT_TRUE(k.ok());
  auto a = random_floats(n, 1), b = random_floats(n, 2);
  std::vector<float> out(n + 8, 12345.0f);  // guard zone past the end must stay untouched
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(b.data()), ptr_arg(out.data())}, rt), 0) << rt.errors;
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(double(a[i]) + double(b[i]))) << i;
  for (int64_t i = n; i < n + 8; ++i) EXPECT_EQ(out[i], 12345.0f) << "write past the tensor end at " << i;
  EXPECT_NE(k.source.find("#pragma GCC ivdep"), std::string::npos) << k.source;
}


// lower_cpu without the cpu GEMM hook: every tile op takes its loop form.
PrimFunc lower_loops_only(const PrimFunc& f, PassContext& ctx) {
  PassRunner r(f, ctx);
  r.run("lower_tile_ops", [](const PrimFunc& fn, const PassContext& c) { return lower_tile_ops(fn, c, nullptr); });
  r.run("legalize_cpu_loops", legalize_cpu_loops);
  r.run("flatten_buffer_access", flatten_buffer_access);
  return r.func();
}

struct GemmCase {
  int64_t M, N, K, bm, bn, bk;
  DataType in;
  bool trans_A, trans_B;
  bool runtime_clear;  // clear_accum = (ko == 0) instead of T.clear before the loop
};

// The classic tiled GEMM: blocks over (N / bn, M / bm), a pipelined K loop copying tiles of A and
// B into shared buffers and accumulating into a float32 fragment.
PrimFunc tiled_gemm(const GemmCase& g) {
  std::vector<Expr> a_shape = g.trans_A ? std::vector<Expr>{c(g.K), c(g.M)} : std::vector<Expr>{c(g.M), c(g.K)};
  std::vector<Expr> b_shape = g.trans_B ? std::vector<Expr>{c(g.N), c(g.K)} : std::vector<Expr>{c(g.K), c(g.N)};
  Buffer A = global("A", g.in, a_shape), B = global("B", g.in, b_shape), C = global("C", f32, {c(g.M), c(g.N)});
  IRBuilder b;
  Var bx("bx"), by("by");
  b.enter_kernel({ceildiv(c(g.N), c(g.bn)), ceildiv(c(g.M), c(g.bm))}, {bx, by}, {c(128)}, {Var("tx")}, {});
  Buffer As = shared("A_s", g.in, g.trans_A ? std::vector<Expr>{c(g.bk), c(g.bm)} : std::vector<Expr>{c(g.bm), c(g.bk)});
  Buffer Bs = shared("B_s", g.in, g.trans_B ? std::vector<Expr>{c(g.bn), c(g.bk)} : std::vector<Expr>{c(g.bk), c(g.bn)});
  Buffer Cl = fragment("C_local", f32, {c(g.bm), c(g.bn)});
  b.alloc(As);
  b.alloc(Bs);
  b.alloc(Cl);
  if (!g.runtime_clear) b.emit(make_tile_op("fill", {full(Cl), make_float(0.0)}));
  Var ko("ko");
  b.enter_for(ko, 0, ceildiv(c(g.K), c(g.bk)), ForKind::kPipelined, {{"num_stages", Attr(int64_t(2))}});
  Expr m0 = by * g.bm, n0 = bx * g.bn, k0 = ko * g.bk;
  b.emit(make_tile_op("copy", {g.trans_A ? region(A, {{k0, c(g.bk)}, {m0, c(g.bm)}}) : region(A, {{m0, c(g.bm)}, {k0, c(g.bk)}}), full(As)}));
  b.emit(make_tile_op("copy", {g.trans_B ? region(B, {{n0, c(g.bn)}, {k0, c(g.bk)}}) : region(B, {{k0, c(g.bk)}, {n0, c(g.bn)}}), full(Bs)}));
  AttrMap attrs = {{"transpose_A", Attr(g.trans_A)}, {"transpose_B", Attr(g.trans_B)}};
  if (g.runtime_clear) attrs["clear_accum"] = Attr(eq(ko, c(0)));
  b.emit(make_tile_op("gemm", {full(As), full(Bs), full(Cl)}, attrs));
  b.exit();
  b.emit(make_tile_op("copy", {full(Cl), region(C, {{m0, c(g.bm)}, {n0, c(g.bn)}})}));
  b.exit();
  return b.finish_func("gemm", {tensor_param(A), tensor_param(B), tensor_param(C)});
}

// Stores random values in dtype `t` (fp32 or fp16) and returns their exact values as doubles.
struct HostTensor {
  std::vector<float> f32;
  std::vector<tl::cpu::half_t> f16;
  std::vector<double> value;
  void* data() { return f16.empty() ? static_cast<void*>(f32.data()) : static_cast<void*>(f16.data()); }
};
HostTensor random_tensor(DataType t, size_t n, uint32_t seed) {
  HostTensor h;
  auto v = random_floats(n, seed);
  for (float x : v) {
    if (t == f16) {
      h.f16.push_back(tl::cpu::half_t(x));
      h.value.push_back(static_cast<float>(h.f16.back()));
    } else {
      h.f32.push_back(x);
      h.value.push_back(x);
    }
  }
  return h;
}

void run_gemm_case(const GemmCase& g, bool loops_only) {
  CpuKernel k;
  k.build(tiled_gemm(g), {}, loops_only ? lower_loops_only : nullptr);
  ASSERT_TRUE(k.ok());
  if (std::getenv("TL_TEST_DUMP")) std::printf("%s\n%s\n", k.lowered_ir.c_str(), k.source.c_str());
  bool uses_header = k.source.find("tl::cpu::gemm<") != std::string::npos;
  EXPECT_EQ(uses_header, !loops_only) << k.source;
  HostTensor a = random_tensor(g.in, g.M * g.K, 11), bt = random_tensor(g.in, g.K * g.N, 12);
  std::vector<float> out(g.M * g.N, -777.0f);
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(bt.data()), ptr_arg(out.data())}, rt), 0) << rt.errors;
  double max_err = 0;
  for (int64_t m = 0; m < g.M; ++m)
    for (int64_t n = 0; n < g.N; ++n) {
      double ref = 0;
      for (int64_t kk = 0; kk < g.K; ++kk) {
        double x = g.trans_A ? a.value[kk * g.M + m] : a.value[m * g.K + kk];
        double y = g.trans_B ? bt.value[n * g.K + kk] : bt.value[kk * g.N + n];
        ref += x * y;
      }
      max_err = std::max(max_err, std::abs(ref - out[m * g.N + n]));
    }
  EXPECT_LT(max_err, 2e-5 * g.K) << "M=" << g.M << " N=" << g.N << " K=" << g.K;
}

class CpuGemm : public ::testing::TestWithParam<std::tuple<int, bool>> {};

const GemmCase kGemmCases[] = {
    {72, 80, 100, 32, 32, 16, f32, false, false, false},  // non-divisible M, N, K
    {64, 64, 64, 32, 32, 16, f32, false, true, false},
    {64, 48, 40, 32, 16, 8, f16, false, false, false},
    {72, 80, 100, 32, 32, 16, f16, false, true, true},  // clear_accum as a run-time condition
    {40, 24, 48, 16, 8, 16, f32, true, false, true},
    {40, 24, 48, 16, 8, 16, f16, true, true, false},
};

TEST_P(CpuGemm, MatchesReference) {
  auto [index, loops_only] = GetParam();
  run_gemm_case(kGemmCases[index], loops_only);
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuGemm, ::testing::Combine(::testing::Range(0, 6), ::testing::Bool()));

}  // namespace
}  // namespace tl
