// End-to-end numerics of the T.tile.* element-wise family and of fill on the cpu target.
#include <cmath>
#include <functional>

#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

const DataType f32 = DataType::Float32();
const DataType f16 = DataType::Float(16);

// One-block kernel: X (n floats, in [lo, hi]) -> X_s; op on tiles; Y_s -> Y.
struct UnaryCase {
  const char* op;
  std::function<double(double)> ref;
  float lo, hi;
};

class CpuTileUnary : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(CpuTileUnary, MatchesReference) {
  const UnaryCase& uc = GetParam();
  const int64_t n = 96;
  for (DataType dt : {f32, f16}) {
    Buffer X = global("X", f32, {c(n)}), Y = global("Y", f32, {c(n)});
    IRBuilder b;
    b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
    Buffer Xs = shared("X_s", dt, {c(n)}), Ys = shared("Y_s", dt, {c(n)});
    b.alloc(Xs);
    b.alloc(Ys);
    b.emit(make_tile_op("copy", {full(X), full(Xs)}));
    b.emit(make_tile_op(std::string("tile.") + uc.op, {full(Ys), full(Xs)}));
    b.emit(make_tile_op("copy", {full(Ys), full(Y)}));
    b.exit();
    CpuKernel k;
    k.build(b.finish_func("unary", {tensor_param(X), tensor_param(Y)}));
    ASSERT_TRUE(k.ok());
    auto x = random_floats(n, 71, uc.lo, uc.hi);
    std::vector<float> y(n);
    TestRuntime rt;
    ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data())}, rt), 0);
    for (int64_t i = 0; i < n; ++i) {
      double in = dt == f16 ? double(float(tl::cpu::half_t(x[i]))) : double(x[i]);
      double want = uc.ref(in);
      double tol = dt == f16 ? 2e-3 * (1 + std::abs(want)) : 2e-6 * (1 + std::abs(want));
      ASSERT_NEAR(y[i], want, tol) << uc.op << " " << dt.str() << " x=" << in;
    }
  }
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

INSTANTIATE_TEST_SUITE_P(
    Ops, CpuTileUnary,
    ::testing::Values(UnaryCase{"exp", [](double x) { return std::exp(x); }, -3, 3},
                      UnaryCase{"ln", [](double x) { return std::log(x); }, 0.1f, 4},
                      UnaryCase{"abs", [](double x) { return std::abs(x); }, -2, 2},
                      UnaryCase{"reciprocal", [](double x) { return 1 / x; }, 0.5f, 3},
                      UnaryCase{"sqrt", [](double x) { return std::sqrt(x); }, 0, 4},
                      UnaryCase{"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.25f, 4},
                      UnaryCase{"relu", [](double x) { return x > 0 ? x : 0; }, -2, 2},
                      UnaryCase{"sigmoid", sigmoid, -5, 5},
                      UnaryCase{"silu", [](double x) { return x * sigmoid(x); }, -5, 5},
                      UnaryCase{"sin", [](double x) { return std::sin(x); }, -3, 3},
                      UnaryCase{"cos", [](double x) { return std::cos(x); }, -3, 3},
                      UnaryCase{"neg", [](double x) { return -x; }, -2, 2},
                      UnaryCase{"exp2", [](double x) { return std::exp2(x); }, -3, 3},
                      UnaryCase{"tanh", [](double x) { return std::tanh(x); }, -3, 3}),
    [](const ::testing::TestParamInfo<UnaryCase>& info) { return std::string(info.param.op); });

TEST(CpuTileOps, BinaryAxpyCompareSelectFill) {
  const int64_t R = 4, C = 16;
  Buffer X = global("X", f32, {c(R), c(C)}), Y = global("Y", f32, {c(R), c(C)});
  Buffer Out = global("Out", f32, {c(8), c(R), c(C)}), Mask = global("Mask", DataType::UInt(8), {c(R), c(C / 8)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Buffer Xs = shared("X_s", f32, {c(R), c(C)}), Ys = shared("Y_s", f32, {c(R), c(C)}),
         Ts = shared("T_s", f32, {c(R), c(C)}), Ms = shared("M_s", DataType::Bool(), {c(R), c(C)}),
         Ps = shared("P_s", DataType::UInt(8), {c(R), c(C / 8)});
  for (auto& buf : {Xs, Ys, Ts, Ms, Ps}) b.alloc(buf);
  b.emit(make_tile_op("copy", {full(X), full(Xs)}));
  b.emit(make_tile_op("copy", {full(Y), full(Ys)}));
  auto out = [&](int k) { return region(Out, {{c(k), c(1)}, {c(0), c(R)}, {c(0), c(C)}}); };
  const char* ops[] = {"add", "sub", "mul", "div", "max", "min"};
  for (int k = 0; k < 6; ++k) {
    b.emit(make_tile_op(std::string("tile.") + ops[k], {full(Ts), full(Xs), k == 2 ? TileArg(make_float(0.25)) : TileArg(full(Ys))}));
    b.emit(make_tile_op("copy", {full(Ts), out(k)}));
  }
  // axpy: T = X; T += 3 * Y
  b.emit(make_tile_op("copy", {full(Xs), full(Ts)}));
  b.emit(make_tile_op("tile.axpy", {full(Ts), full(Ys), make_float(3.0)}));
  b.emit(make_tile_op("copy", {full(Ts), out(6)}));
  // compare/select: T = X > Y ? X : -1 (element mask), and a packed bit mask of X >= 0
  b.emit(make_tile_op("tile.compare", {full(Ms), full(Xs), full(Ys)}, {{"mode", Attr("GT")}}));
  b.emit(make_tile_op("tile.fill", {full(Ts), make_float(-1.0)}));
  b.emit(make_tile_op("tile.select", {full(Ts), full(Ms), full(Xs), full(Ts)}, {{"mode", Attr("VSEL_TENSOR_TENSOR_MODE")}}));
  b.emit(make_tile_op("copy", {full(Ts), out(7)}));
  b.emit(make_tile_op("tile.compare", {full(Ps), full(Xs), make_float(0.0)}, {{"mode", Attr("GE")}}));
  b.emit(make_tile_op("copy", {full(Ps), full(Mask)}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("binary", {tensor_param(X), tensor_param(Y), tensor_param(Out), tensor_param(Mask)}));
  ASSERT_TRUE(k.ok());
  auto x = random_floats(R * C, 81), y = random_floats(R * C, 82);
  std::vector<float> o(8 * R * C);
  std::vector<uint8_t> mask(R * C / 8);
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data()), ptr_arg(o.data()), ptr_arg(mask.data())}, rt), 0);
  for (int64_t i = 0; i < R * C; ++i) {
    double a = x[i], bb = y[i];
    double want[8] = {a + bb, a - bb, a * 0.25, a / bb, std::max(a, bb), std::min(a, bb), a + 3 * bb, a > bb ? a : -1.0};
    for (int kk = 0; kk < 8; ++kk) ASSERT_NEAR(o[kk * R * C + i], want[kk], 1e-6 * (1 + std::abs(want[kk]))) << kk << " " << i;
    bool bit = (mask[i / 8] >> (i % 8)) & 1;
    ASSERT_EQ(bit, x[i] >= 0) << i;
  }
}

TEST(CpuTileOps, CastModes) {
  const int64_t n = 64;
  const char* modes[] = {"CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};
  Buffer X = global("X", f32, {c(n)}), I = global("I", DataType::Int32(), {c(6), c(n)}),
         H = global("H", f16, {c(6), c(n)});
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Buffer Xs = shared("X_s", f32, {c(n)}), Is = shared("I_s", DataType::Int32(), {c(n)}), Hs = shared("H_s", f16, {c(n)});
  b.alloc(Xs);
  b.alloc(Is);
  b.alloc(Hs);
  b.emit(make_tile_op("copy", {full(X), full(Xs)}));
  for (int m = 0; m < 6; ++m) {
    b.emit(make_tile_op("tile.cast", {full(Is), full(Xs)}, {{"mode", Attr(modes[m])}}));
    b.emit(make_tile_op("copy", {full(Is), region(I, {{c(m), c(1)}, {c(0), c(n)}})}));
    b.emit(make_tile_op("tile.cast", {full(Hs), full(Xs)}, {{"mode", Attr(modes[m])}}));
    b.emit(make_tile_op("copy", {full(Hs), region(H, {{c(m), c(1)}, {c(0), c(n)}})}));
  }
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("casts", {tensor_param(X), tensor_param(I), tensor_param(H)}));
  ASSERT_TRUE(k.ok());
  std::vector<float> x = random_floats(n, 91, -20.0f, 20.0f);
  // Ties and exact values.
  float special[] = {2.5f, -2.5f, 3.5f, -0.5f, 0.5f, 7.0f, -7.0f, 1.0f + 1.0f / 2048};  // last: half tie
  for (size_t t = 0; t < sizeof(special) / sizeof(float); ++t) x[t] = special[t];
  std::vector<int32_t> iv(6 * n);
  std::vector<tl::cpu::half_t> hv(6 * n);
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(iv.data()), ptr_arg(hv.data())}, rt), 0);
  // Representable halves around v, by enumeration (independent of the conversion code).
  auto neighbours = [](double v, double* lo, double* hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
      if ((bits & 0x7c00) == 0x7c00) continue;
      double h = tl::cpu::half_bits_to_float_portable(static_cast<uint16_t>(bits));
      if (h <= v && h > *lo) *lo = h;
      if (h >= v && h < *hi) *hi = h;
    }
  };
  for (int64_t i = 0; i < n; ++i) {
    double v = x[i];
    double ti = std::trunc(v);
    double odd_i = (ti == v || std::fmod(ti, 2.0) != 0) ? ti : (v > 0 ? ti + 1 : ti - 1);
    double want_i[6] = {std::nearbyint(v), std::floor(v), std::ceil(v), std::round(v), ti, odd_i};
    double lo, hi;
    neighbours(v, &lo, &hi);
    auto odd_h = [](double h) {
      uint16_t bits = tl::cpu::float_to_half_bits_portable(static_cast<float>(h));
      return bits & 1;
    };
    double nearest_even = (v - lo < hi - v) ? lo : (hi - v < v - lo) ? hi : (odd_h(lo) ? hi : lo);
    double away = (v - lo < hi - v) ? lo : (hi - v < v - lo) ? hi : (v > 0 ? hi : lo);
    double want_h[6] = {nearest_even, lo, hi, away, v > 0 ? lo : hi, lo == hi ? lo : (odd_h(lo) ? lo : hi)};
    for (int m = 0; m < 6; ++m) {
      ASSERT_EQ(iv[m * n + i], static_cast<int32_t>(want_i[m])) << modes[m] << " x=" << v;
      ASSERT_EQ(double(float(hv[m * n + i])), want_h[m]) << modes[m] << " -> half, x=" << v;
    }
  }
}

}  // namespace
}  // namespace tl
