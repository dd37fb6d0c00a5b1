// End-to-end tests of the cpu target: IR -> lower_cpu -> codegen_cpu -> g++ -> dlopen -> run,
// compared with references computed here in double precision on random inputs.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstring>

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
  if (std::getenv("TL_TEST_DUMP")) std::printf("%s\n", k.source.c_str());
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


// ---- GEMM with bf16 / fp8 / int8 inputs ---------------------------------------------------------

// Raw bytes of random values in dtype t, and their exact values.
struct RawTensor {
  std::vector<uint8_t> bytes;
  std::vector<double> value;
};
RawTensor random_raw(DataType t, size_t n, uint32_t seed) {
  RawTensor r;
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  r.bytes.resize(n * t.element_bytes());
  for (size_t i = 0; i < n; ++i) {
    float x = d(g);
    if (t == DataType::BFloat16()) {
      tl::cpu::bfloat16_t v(x);
      std::memcpy(&r.bytes[i * 2], &v.bits, 2);
      r.value.push_back(float(v));
    } else if (t == DataType::F8E4M3()) {
      tl::cpu::float8_e4m3_t v(x * 4);
      r.bytes[i] = v.bits;
      r.value.push_back(float(v));
    } else if (t == DataType::Int(8)) {
      int8_t v = static_cast<int8_t>(static_cast<int>(g() % 255) - 127);
      r.bytes[i] = static_cast<uint8_t>(v);
      r.value.push_back(v);
    } else {
      ADD_FAILURE() << "unsupported dtype " << t.str();
    }
  }
  return r;
}

class CpuGemmDtypes : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(CpuGemmDtypes, MatchesReference) {
  auto [which, loops_only] = GetParam();
  DataType in = which == 0 ? DataType::BFloat16() : which == 1 ? DataType::F8E4M3() : DataType::Int(8);
  DataType acc = which == 2 ? DataType::Int32() : f32;
  const int64_t M = 32, N = 48, K = 64;
  Buffer A = global("A", in, {c(M), c(K)}), B = global("B", in, {c(N), c(K)}), C = global("C", acc, {c(M), c(N)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Buffer As = shared("A_s", in, {c(M), c(K)}), Bs = shared("B_s", in, {c(N), c(K)}), Cl = fragment("C_l", acc, {c(M), c(N)});
  b.alloc(As);
  b.alloc(Bs);
  b.alloc(Cl);
  b.emit(make_tile_op("copy", {full(A), full(As)}));
  b.emit(make_tile_op("copy", {full(B), full(Bs)}));
  b.emit(make_tile_op("gemm", {full(As), full(Bs), full(Cl)}, {{"transpose_B", Attr(true)}, {"clear_accum", Attr(true)}}));
  b.emit(make_tile_op("copy", {full(Cl), full(C)}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("gemm_dt", {tensor_param(A), tensor_param(B), tensor_param(C)}), {},
          loops_only ? lower_loops_only : nullptr);
  ASSERT_TRUE(k.ok());
  RawTensor a = random_raw(in, M * K, 13), bt = random_raw(in, N * K, 14);
  std::vector<int32_t> ci(M * N, -1);
  std::vector<float> cf(M * N, -1.0f);
  void* out = which == 2 ? static_cast<void*>(ci.data()) : static_cast<void*>(cf.data());
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(a.bytes.data()), ptr_arg(bt.bytes.data()), ptr_arg(out)}, rt), 0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (int64_t kk = 0; kk < K; ++kk) ref += a.value[m * K + kk] * bt.value[n * K + kk];
      if (which == 2) ASSERT_EQ(ci[m * N + n], static_cast<int32_t>(ref)) << m << "," << n;
      else ASSERT_NEAR(cf[m * N + n], ref, 1e-4 * (1 + std::abs(ref))) << m << "," << n;
    }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CpuGemmDtypes, ::testing::Combine(::testing::Values(0, 1, 2), ::testing::Bool()));

// ---- reduce -------------------------------------------------------------------------------------

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) st[d - 1] = st[d] * shape[d];
  return st;
}
int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto v : shape) n *= v;
  return n;
}
std::vector<Expr> exprs(const std::vector<int64_t>& v) {
  std::vector<Expr> out;
  for (auto x : v) out.push_back(c(x));
  return out;
}

struct ReduceCase {
  std::vector<int64_t> shape;
  int dim;
  std::string type;
  bool clear;
  DataType src_t, dst_t;
};

PrimFunc reduce_kernel(const ReduceCase& rc) {
  std::vector<int64_t> out_shape;
  for (size_t d = 0; d < rc.shape.size(); ++d)
    if (static_cast<int>(d) != rc.dim) out_shape.push_back(rc.shape[d]);
  Buffer X = global("X", rc.src_t, exprs(rc.shape)), Y = global("Y", rc.dst_t, exprs(out_shape));
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {c(128)}, {Var("tx")}, {});
  Buffer Xf = fragment("X_f", rc.src_t, exprs(rc.shape)), Yf = fragment("Y_f", rc.dst_t, exprs(out_shape));
  b.alloc(Xf);
  b.alloc(Yf);
  b.emit(make_tile_op("copy", {full(X), full(Xf)}));
  if (!rc.clear) b.emit(make_tile_op("copy", {full(Y), full(Yf)}));
  b.emit(make_tile_op("reduce", {full(Xf), full(Yf)},
                      {{"type", Attr(rc.type)}, {"dim", Attr(int64_t(rc.dim))}, {"clear", Attr(rc.clear)}}));
  b.emit(make_tile_op("copy", {full(Yf), full(Y)}));
  b.exit();
  return b.finish_func("reduce", {tensor_param(X), tensor_param(Y)});
}

class CpuReduce : public ::testing::TestWithParam<std::tuple<int, std::string, bool>> {};

const ReduceCase kReduceShapes[] = {
    {{16, 24}, 1, "", true, f32, f32}, {{16, 24}, 0, "", true, f32, f32}, {{4, 6, 8}, 1, "", true, f32, f32},
    {{4, 6, 8}, 0, "", true, f16, f32}, {{12, 20}, 1, "", true, f16, f16}, {{12, 20}, 0, "", true, f32, f16},
    // rows long enough for the vector accumulators of tl::cpu::reduce_row, with lane and element tails
    {{3, 300}, 1, "", true, f32, f32}, {{5, 77}, 1, "", true, f16, f32},
};

TEST_P(CpuReduce, MatchesReference) {
  auto [index, type, clear] = GetParam();
  ReduceCase rc = kReduceShapes[index];
  rc.type = type;
  rc.clear = clear;
  CpuKernel k;
  k.build(reduce_kernel(rc));
  ASSERT_TRUE(k.ok());
  int64_t n = product(rc.shape);
  HostTensor x = random_tensor(rc.src_t, n, 21);
  std::vector<int64_t> out_shape;
  for (size_t d = 0; d < rc.shape.size(); ++d)
    if (static_cast<int>(d) != rc.dim) out_shape.push_back(rc.shape[d]);
  int64_t m = product(out_shape);
  HostTensor y = random_tensor(rc.dst_t, m, 22);  // the old dst value (used when clear=false)
  std::vector<double> old = y.value;
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data())}, rt), 0) << rt.errors;
  // Reference in double.
  auto st = strides_of(rc.shape);
  auto ost = strides_of(out_shape);
  std::vector<double> ref(m);
  for (int64_t o = 0; o < m; ++o) {
    // unflatten o over out_shape, then walk dim
    std::vector<int64_t> idx(rc.shape.size(), 0);
    int64_t rest = o;
    size_t k2 = 0;
    for (size_t d = 0; d < rc.shape.size(); ++d) {
      if (static_cast<int>(d) == rc.dim) continue;
      idx[d] = rest / ost[k2];
      rest %= ost[k2];
      ++k2;
    }
    double acc = (type == "max") ? -INFINITY : (type == "min") ? INFINITY : 0.0;
    for (int64_t r = 0; r < rc.shape[rc.dim]; ++r) {
      idx[rc.dim] = r;
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * st[d];
      double v = x.value[off];
      if (type == "sum") acc += v;
      else if (type == "abssum") acc += std::abs(v);
      else if (type == "max") acc = std::max(acc, v);
      else if (type == "min") acc = std::min(acc, v);
      else acc = std::max(acc, std::abs(v));
    }
    if (!clear) {
      if (type == "sum" || type == "abssum") acc += old[o];
      else if (type == "min") acc = std::min(acc, old[o]);
      else acc = std::max(acc, old[o]);
    }
    ref[o] = acc;
  }
  double tol = rc.dst_t == f16 ? 1e-2 : 1e-5;
  for (int64_t o = 0; o < m; ++o) {
    double got = rc.dst_t == f16 ? double(float(y.f16[o])) : double(y.f32[o]);
    ASSERT_NEAR(got, ref[o], tol * (1 + std::abs(ref[o]))) << "element " << o << "\n" << k.lowered_ir;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuReduce,
                         ::testing::Combine(::testing::Range(0, 8),
                                            ::testing::Values("sum", "max", "min", "abssum", "absmax"),
                                            ::testing::Bool()));

// ---- cumsum -------------------------------------------------------------------------------------

class CpuCumsum : public ::testing::TestWithParam<std::tuple<int, bool, bool, int>> {};

TEST_P(CpuCumsum, MatchesReference) {
  auto [dim, reverse, in_place, cols] = GetParam();
  const int64_t R = 12, C = cols;  // 100 columns: whole vectors of tl::cpu::cumsum_row plus a tail
  Buffer X = global("X", f32, {c(R), c(C)}), Y = global("Y", f32, {c(R), c(C)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Buffer Xs = shared("X_s", f32, {c(R), c(C)}), Ys = fragment("Y_f", f32, {c(R), c(C)});
  b.alloc(Xs);
  b.alloc(Ys);
  b.emit(make_tile_op("copy", {full(X), full(Xs)}));
  Buffer dst = in_place ? Xs : Ys;
  b.emit(make_tile_op("cumsum", {full(Xs), full(dst)}, {{"dim", Attr(int64_t(dim))}, {"reverse", Attr(reverse)}}));
  b.emit(make_tile_op("copy", {full(dst), full(Y)}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("cumsum", {tensor_param(X), tensor_param(Y)}));
  ASSERT_TRUE(k.ok());
  auto x = random_floats(R * C, 31);
  std::vector<float> y(R * C, 0.0f);
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data())}, rt), 0);
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      double ref = 0;
      int64_t len = dim == 0 ? R : C, pos = dim == 0 ? i : j;
      for (int64_t t = 0; t < len; ++t) {
        bool in = reverse ? t >= pos : t <= pos;
        if (in) ref += dim == 0 ? x[t * C + j] : x[i * C + t];
      }
      ASSERT_NEAR(y[i * C + j], ref, 1e-5 * (1 + std::sqrt(double(C)))) << i << "," << j;
    }
}

INSTANTIATE_TEST_SUITE_P(Cases, CpuCumsum,
                         ::testing::Combine(::testing::Values(0, 1), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(20, 100)));

// ---- softmax rows ----------------------------------------------------------------------------

TEST(CpuCodegen, SoftmaxRows) {
  const int64_t M = 50, N = 64, bm = 16;
  Buffer X = global("X", f32, {c(M), c(N)}), Y = global("Y", f32, {c(M), c(N)});
  IRBuilder b;
  Var by("by");
  b.enter_kernel({ceildiv(c(M), c(bm))}, {by}, {c(128)}, {Var("tx")}, {});
  Buffer Xf = fragment("X_f", f32, {c(bm), c(N)}), mx = fragment("row_max", f32, {c(bm)}),
         sm = fragment("row_sum", f32, {c(bm)});
  b.alloc(Xf);
  b.alloc(mx);
  b.alloc(sm);
  b.emit(make_tile_op("copy", {region(X, {{by * bm, c(bm)}, {c(0), c(N)}}), full(Xf)}));
  b.emit(make_tile_op("reduce", {full(Xf), full(mx)}, {{"type", Attr("max")}, {"dim", Attr(int64_t(1))}}));
  Var i("i"), j("j");
  b.enter_for(i, 0, c(bm), ForKind::kParallel);
  b.enter_for(j, 0, c(N), ForKind::kParallel);
  b.emit(make_store(Xf, {i, j}, make_call(f32, "exp", {make_load(Xf, {i, j}) - make_load(mx, {i})})));
  b.exit();
  b.exit();
  b.emit(make_tile_op("reduce", {full(Xf), full(sm)}, {{"type", Attr("sum")}, {"dim", Attr(int64_t(1))}}));
  Var i2("i"), j2("j");
  b.enter_for(i2, 0, c(bm), ForKind::kParallel);
  b.enter_for(j2, 0, c(N), ForKind::kParallel);
  b.emit(make_store(Xf, {i2, j2}, make_binary(BinOp::kDiv, make_load(Xf, {i2, j2}), make_load(sm, {i2}))));
  b.exit();
  b.exit();
  b.emit(make_tile_op("copy", {full(Xf), region(Y, {{by * bm, c(bm)}, {c(0), c(N)}})}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("softmax", {tensor_param(X), tensor_param(Y)}));
  ASSERT_TRUE(k.ok());
  auto x = random_floats(M * N, 41, -4.0f, 4.0f);
  std::vector<float> y(M * N, -1.0f);
  TestRuntime rt(2);
  ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data())}, rt), 0);
  for (int64_t r = 0; r < M; ++r) {
    double mxv = -INFINITY, sum = 0;
    for (int64_t cc = 0; cc < N; ++cc) mxv = std::max(mxv, double(x[r * N + cc]));
    for (int64_t cc = 0; cc < N; ++cc) sum += std::exp(double(x[r * N + cc]) - mxv);
    for (int64_t cc = 0; cc < N; ++cc)
      ASSERT_NEAR(y[r * N + cc], std::exp(double(x[r * N + cc]) - mxv) / sum, 1e-6) << r << "," << cc;
  }
}

// ---- atomic_add across blocks ------------------------------------------------------------------

TEST(CpuCodegen, AtomicAddAcrossBlocksOnSeveralThreads) {
  const int64_t blocks = 64, W = 32;
  Buffer X = global("X", f32, {c(blocks), c(W)}), Y = global("Y", f32, {c(W)}), Cnt = global("Count", DataType::Int32(), {c(W)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({c(blocks)}, {bx}, {c(128)}, {Var("tx")}, {});
  Buffer Xs = shared("X_s", f32, {c(W)});
  b.alloc(Xs);
  b.emit(make_tile_op("copy", {region(X, {{bx, c(1)}, {c(0), c(W)}}), full(Xs)}));
  b.emit(make_tile_op("atomic_add", {full(Y), full(Xs)}));
  b.emit(make_tile_op("atomic_add", {full(Cnt), bx + 1}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("accumulate", {tensor_param(X), tensor_param(Y), tensor_param(Cnt)}));
  ASSERT_TRUE(k.ok());
  for (int rep = 0; rep < 3; ++rep) {
    auto x = random_floats(blocks * W, 51 + rep);
    std::vector<float> y(W, 0.5f);
    std::vector<int32_t> cnt(W, 7);
    TestRuntime rt(4);
    ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data()), ptr_arg(cnt.data())}, rt), 0);
    for (int64_t j = 0; j < W; ++j) {
      double ref = 0.5;
      for (int64_t bb = 0; bb < blocks; ++bb) ref += x[bb * W + j];
      ASSERT_NEAR(y[j], ref, 1e-4) << j;
      ASSERT_EQ(cnt[j], 7 + blocks * (blocks + 1) / 2) << j;
    }
  }
}

// ---- dynamic M ---------------------------------------------------------------------------------

TEST(CpuCodegen, DynamicM) {
  Var M("m");
  const int64_t N = 48, bm = 32;
  Buffer A = global("A", f32, {M, c(N)}), B = global("B", f32, {M, c(N)});
  IRBuilder b;
  Var by("by");
  b.enter_kernel({ceildiv(M, c(bm))}, {by}, {c(128)}, {Var("tx")}, {});
  Buffer As = shared("A_s", f32, {c(bm), c(N)});
  b.alloc(As);
  b.emit(make_tile_op("copy", {region(A, {{by * bm, c(bm)}, {c(0), c(N)}}), full(As)}));
  Var i("i"), j("j");
  b.enter_for(i, 0, c(bm), ForKind::kParallel);
  b.enter_for(j, 0, c(N), ForKind::kParallel);
  b.emit(make_store(As, {i, j}, make_load(As, {i, j}) * make_float(2.0) + make_float(1.0)));
  b.exit();
  b.exit();
  b.emit(make_tile_op("copy", {full(As), region(B, {{by * bm, c(bm)}, {c(0), c(N)}})}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("affine", {tensor_param(A), tensor_param(B)}));
  ASSERT_TRUE(k.ok());
  EXPECT_NE(k.source.find("int64_t"), std::string::npos);
  for (int64_t m : {100, 7, 64}) {
    auto a = random_floats(m * N, 61);
    std::vector<float> out(m * N + 16, 99.0f);
    TestRuntime rt;
    ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(out.data()), int_arg(m)}, rt), 0) << rt.errors;
    for (int64_t t = 0; t < m * N; ++t) ASSERT_EQ(out[t], a[t] * 2.0f + 1.0f) << "m=" << m << " t=" << t;
    for (int64_t t = m * N; t < m * N + 16; ++t) ASSERT_EQ(out[t], 99.0f) << "write past the end, m=" << m;
  }
  // A wrong argument count is reported, not a crash.
  TestRuntime rt;
  std::vector<float> a(8), o(8);
  EXPECT_EQ(k.run({ptr_arg(a.data()), ptr_arg(o.data())}, rt), 1);
  EXPECT_NE(rt.errors.find("expects 3 arguments"), std::string::npos) << rt.errors;
}


// ---- flags, names, literals ---------------------------------------------------------------------

TEST(CpuCodegen, CompilerFlags) {
  auto has = [](const std::vector<std::string>& v, const std::string& f) {
    return std::find(v.begin(), v.end(), f) != v.end();
  };
  auto flags = cpu_compiler_flags(false);
  for (const char* f : {"-std=c++17", "-O2", "-fPIC", "-shared"}) EXPECT_TRUE(has(flags, f)) << f;
#if defined(__x86_64__)
  // Compiled for the ISA set the CPU reports at run time, not the compiler's -march=native guess.
  EXPECT_TRUE(has(flags, "-march=x86-64"));
  EXPECT_FALSE(has(flags, "-march=native"));
#endif
  EXPECT_FALSE(has(flags, "-ffast-math"));
  EXPECT_FALSE(has(flags, "-fopenmp"));
  EXPECT_TRUE(has(cpu_compiler_flags(true), "-ffast-math"));
  EXPECT_TRUE(std::filesystem::exists(cpu_include_dir() + "/tl/cpu/abi.h")) << cpu_include_dir();
  EXPECT_TRUE(std::filesystem::exists(cpu_include_dir() + "/tl/cpu/kernel.h")) << cpu_include_dir();
}

TEST(CpuCodegen, ColdCompileOfAGemmKernelIsFast) {
  // CPU time of the compiler process (robust to other jobs on the machine), for the fp16 GEMM.
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  auto t0 = std::chrono::steady_clock::now();
  CpuKernel k;
  k.build(tiled_gemm(kGemmCases[3]));
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  getrusage(RUSAGE_CHILDREN, &after);
  ASSERT_TRUE(k.ok());
  auto secs = [](const timeval& t) { return t.tv_sec + t.tv_usec * 1e-6; };
  double cpu = secs(after.ru_utime) - secs(before.ru_utime) + secs(after.ru_stime) - secs(before.ru_stime);
  std::printf("cold compile of the fp16 GEMM kernel: %.3f s CPU, %.3f s wall\n", cpu, wall);
  EXPECT_LT(cpu, 1.5);
}

TEST(CpuCodegen, ShadowedAndOddNamesStayDistinct) {
  // Two different variables named "i" (outer and inner loop), a buffer named like a C++ keyword
  // and one with characters that are not valid in identifiers.
  Buffer A = global("int", f32, {c(4), c(4)}), B = global("out.put", f32, {c(4), c(4)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Var i("i"), i2("i");
  b.enter_for(i, 0, c(4), ForKind::kSerial);
  b.enter_for(i2, 0, c(4), ForKind::kSerial);
  b.emit(make_store(B, {i, i2}, make_load(A, {i2, i}) + make_cast(f32, i * 10)));
  b.exit();
  b.exit();
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("names", {tensor_param(A), tensor_param(B)}));
  ASSERT_TRUE(k.ok());
  auto a = random_floats(16, 9);
  std::vector<float> out(16);
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(out.data())}, rt), 0);
  for (int r = 0; r < 4; ++r)
    for (int cc = 0; cc < 4; ++cc) ASSERT_EQ(out[r * 4 + cc], a[cc * 4 + r] + r * 10.0f) << r << "," << cc;
}

TEST(CpuCodegen, RejectsWhatItCannotEmit) {
  Buffer A = global("A", f32, {c(16)});
  auto func_with = [&](Stmt s) { return PrimFunc("f", {tensor_param(A)}, s); };
  EXPECT_THROW(codegen_cpu(func_with(make_evaluate(make_call(DataType::Void(), "cuda.fence", {})))), NotImplemented);
  try {
    codegen_cpu(func_with(make_store(A, {c(0)}, make_call(f32, "ieee_add", {make_float(1.0), make_float(2.0), make_string("rz")}))));
    ADD_FAILURE();
  } catch (const NotImplemented& e) {
    EXPECT_NE(std::string(e.what()).find("T.ieee_add with rounding_mode 'rz' on target cpu"), std::string::npos);
  }
  EXPECT_THROW(codegen_cpu(func_with(make_tile_op("fill", {full(A), make_float(0.0)}))), Error);
}

}  // namespace
}  // namespace tl
