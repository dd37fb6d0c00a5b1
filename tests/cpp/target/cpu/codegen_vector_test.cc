// The hot loops of emitted cpu kernels are vector code: one function with a kernel per construct
// (T.Parallel element-wise, T.reduce_* with T.exp, T.cumsum, T.gemm, float16 tile ops) is built with the
// kernel flags and each block function's disassembly (objdump -d) must use ymm/zmm registers; the
// results are checked too, so the vector code is also the right code.
#include <cmath>

#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

const DataType f32 = DataType::Float32();
const DataType f16 = DataType::Float(16);

TEST(CpuVectorCode, HotLoopsUseWideRegisters) {
  const int64_t R = 8, C = 200;  // rows not a multiple of any vector width: tails everywhere
  Buffer X = global("X", f32, {c(R), c(C)}), Y = global("Y", f32, {c(R), c(C)});
  Buffer Add = global("Add", f32, {c(R), c(C)}), Soft = global("Soft", f32, {c(R), c(C)}),
         Scan = global("Scan", f32, {c(R), c(C)}), G = global("G", f32, {c(R), c(R)});
  Buffer H = global("H", f16, {c(R), c(C)}), Ht = global("Ht", f16, {c(R), c(C)});
  IRBuilder b;
  Var bx("bx");
  // kernel0: T.Parallel element-wise on global memory, one row per block
  b.enter_kernel({c(R)}, {bx}, {}, {}, {});
  Var j("j");
  b.enter_for(j, 0, c(C), ForKind::kParallel);
  b.emit(make_store(Add, {bx, j}, make_load(X, {bx, j}) * make_float(2.0) + make_load(Y, {bx, j})));
  b.exit();
  b.exit();
  // kernel1: softmax rows: reduce_max, T.exp in T.Parallel, reduce_sum, tile.div
  Var by("by");
  b.enter_kernel({c(1)}, {by}, {}, {}, {});
  Buffer Xf = fragment("X_f", f32, {c(R), c(C)}), mx = fragment("mx", f32, {c(R)}), sm = fragment("sm", f32, {c(R)});
  b.alloc(Xf);
  b.alloc(mx);
  b.alloc(sm);
  b.emit(make_tile_op("copy", {full(X), full(Xf)}));
  b.emit(make_tile_op("reduce", {full(Xf), full(mx)}, {{"type", Attr("max")}, {"dim", Attr(int64_t(1))}}));
  Var i("i"), j2("j");
  b.enter_for(i, 0, c(R), ForKind::kParallel);
  b.enter_for(j2, 0, c(C), ForKind::kParallel);
  b.emit(make_store(Xf, {i, j2}, make_call(f32, "exp", {make_load(Xf, {i, j2}) - make_load(mx, {i})})));
  b.exit();
  b.exit();
  b.emit(make_tile_op("reduce", {full(Xf), full(sm)}, {{"type", Attr("sum")}, {"dim", Attr(int64_t(1))}}));
  Var i2("i"), j3("j");
  b.enter_for(i2, 0, c(R), ForKind::kParallel);
  b.enter_for(j3, 0, c(C), ForKind::kParallel);
  b.emit(make_store(Xf, {i2, j3}, make_binary(BinOp::kDiv, make_load(Xf, {i2, j3}), make_load(sm, {i2}))));
  b.exit();
  b.exit();
  b.emit(make_tile_op("copy", {full(Xf), full(Soft)}));
  b.exit();
  // kernel2: cumsum along rows
  b.enter_kernel({c(1)}, {Var("bz")}, {}, {}, {});
  Buffer Sf = fragment("S_f", f32, {c(R), c(C)});
  b.alloc(Sf);
  b.emit(make_tile_op("copy", {full(X), full(Sf)}));
  b.emit(make_tile_op("cumsum", {full(Sf), full(Sf)}, {{"dim", Attr(int64_t(1))}}));
  b.emit(make_tile_op("copy", {full(Sf), full(Scan)}));
  b.exit();
  // kernel3: G = X[:, :] * Y[:, :]^T through the tile GEMM
  b.enter_kernel({c(1)}, {Var("bw")}, {}, {}, {});
  Buffer Xs = shared("X_s", f32, {c(R), c(C)}), Ys = shared("Y_s", f32, {c(R), c(C)}), Gf = fragment("G_f", f32, {c(R), c(R)});
  b.alloc(Xs);
  b.alloc(Ys);
  b.alloc(Gf);
  b.emit(make_tile_op("copy", {full(X), full(Xs)}));
  b.emit(make_tile_op("copy", {full(Y), full(Ys)}));
  b.emit(make_tile_op("gemm", {full(Xs), full(Ys), full(Gf)}, {{"transpose_B", Attr(true)}, {"clear_accum", Attr(true)}}));
  b.emit(make_tile_op("copy", {full(Gf), full(G)}));
  b.exit();
  // kernel4: element-wise tile ops on float16 tiles: Ht = exp(H) + H
  b.enter_kernel({c(1)}, {Var("bv")}, {}, {}, {});
  Buffer Hs = shared("H_s", f16, {c(R), c(C)}), Es = shared("E_s", f16, {c(R), c(C)});
  b.alloc(Hs);
  b.alloc(Es);
  b.emit(make_tile_op("copy", {full(H), full(Hs)}));
  b.emit(make_tile_op("tile.exp", {full(Es), full(Hs)}));
  b.emit(make_tile_op("tile.add", {full(Es), full(Es), full(Hs)}));
  b.emit(make_tile_op("copy", {full(Es), full(Ht)}));
  b.exit();

  CpuKernel k;
  k.disassemble = {"vec_kernel0_", "vec_kernel1_", "vec_kernel2_", "vec_kernel4_", "tl::cpu::reduce_row",
                   "tl::cpu::cumsum_row", "tl::cpu::gemm_impl::micro_kernel"};
  k.build(b.finish_func("vec", {tensor_param(X), tensor_param(Y), tensor_param(Add), tensor_param(Soft),
                                tensor_param(Scan), tensor_param(G), tensor_param(H), tensor_param(Ht)}));
  ASSERT_TRUE(k.ok());
  auto x = random_floats(R * C, 1), y = random_floats(R * C, 2);
  std::vector<float> add(R * C), soft(R * C), scan(R * C), g(R * R);
  std::vector<tl::cpu::half_t> h(R * C), ht(R * C);
  for (int64_t t = 0; t < R * C; ++t) h[t] = tl::cpu::half_t(x[t]);
  TestRuntime rt(2);
  ASSERT_EQ(k.run({ptr_arg(x.data()), ptr_arg(y.data()), ptr_arg(add.data()), ptr_arg(soft.data()),
                   ptr_arg(scan.data()), ptr_arg(g.data()), ptr_arg(h.data()), ptr_arg(ht.data())},
                  rt),
            0);
  for (int64_t t = 0; t < R * C; ++t) {
    double hv = float(h[t]), e = float(tl::cpu::half_t(std::exp(hv)));  // exp rounded to half, then the add
    ASSERT_NEAR(float(ht[t]), e + hv, 2e-3 * (1 + std::abs(e + hv))) << t;
  }
  for (int64_t r = 0; r < R; ++r) {
    double mxv = -INFINITY, sum = 0, run = 0;
    for (int64_t col = 0; col < C; ++col) mxv = std::max(mxv, double(x[r * C + col]));
    for (int64_t col = 0; col < C; ++col) sum += std::exp(double(x[r * C + col]) - mxv);
    for (int64_t col = 0; col < C; ++col) {
      size_t at = r * C + col;
      ASSERT_NEAR(add[at], 2.0 * x[at] + y[at], 1e-6);
      ASSERT_NEAR(soft[at], std::exp(double(x[at]) - mxv) / sum, 1e-6);
      run += x[at];
      ASSERT_NEAR(scan[at], run, 2e-5);
    }
    for (int64_t r2 = 0; r2 < R; ++r2) {
      double dot = 0;
      for (int64_t col = 0; col < C; ++col) dot += double(x[r * C + col]) * y[r2 * C + col];
      ASSERT_NEAR(g[r * R + r2], dot, 1e-4);
    }
  }

  __builtin_cpu_init();
  if (k.disassembly["vec_kernel0_"].empty() || !__builtin_cpu_supports("avx2")) {
    GTEST_SKIP() << "needs objdump and an AVX2 machine for the disassembly checks";
  }
  // reduce_row / cumsum_row may be inlined into their block functions; then those have the code.
  auto text_of = [&](const std::string& fn, const std::string& inlined_into) {
    return k.disassembly[fn].empty() ? k.disassembly[inlined_into] : k.disassembly[fn];
  };
  std::map<std::string, std::string> texts = {
      {"T.Parallel element-wise", k.disassembly["vec_kernel0_"]},
      {"softmax block (T.exp, division)", k.disassembly["vec_kernel1_"]},
      {"reduce_row", text_of("tl::cpu::reduce_row", "vec_kernel1_")},
      {"cumsum_row", text_of("tl::cpu::cumsum_row", "vec_kernel2_")},
      {"GEMM micro-kernels", k.disassembly["tl::cpu::gemm_impl::micro_kernel"]},
      {"float16 tile.exp / tile.add", k.disassembly["vec_kernel4_"]},
  };
  for (auto& [what, text] : texts) std::printf("%s: %d wide-register instructions\n", what.c_str(), wide_vector_instructions(text));
  for (auto& [what, text] : texts)
    EXPECT_GE(wide_vector_instructions(text), 4) << what << " has no ymm/zmm code:\n" << text.substr(0, 3000);
}

}  // namespace
}  // namespace tl
