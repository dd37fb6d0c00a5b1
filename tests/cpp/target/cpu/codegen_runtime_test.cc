// End-to-end tests of the cpu target's run-time features: device_assert, printing, heap storage
// of large block buffers, 16/8-bit float conversions (hardware F16C path in the kernel vs the
// portable path here), several kernels and host code in one function, scalar parameters.
#include <cmath>
#include <cstring>

#include "ir/error.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

const DataType f32 = DataType::Float32();
const DataType f16 = DataType::Float(16);

TEST(CpuRuntime, DeviceAssertReportsAndFails) {
  Buffer A = global("A", f32, {c(16)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({c(16)}, {bx}, {}, {}, {});
  Span sp{std::make_shared<std::string>("kernel.py"), 7, 5};
  b.emit(make_evaluate(make_call(DataType::Void(), "tl.device_assert",
                                 {make_load(A, {bx}) > make_float(0.0), make_string("A must be positive")}),
                       sp));
  b.emit(make_store(A, {bx}, make_load(A, {bx}) * make_float(2.0)));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("check", {tensor_param(A)}));
  ASSERT_TRUE(k.ok());
  std::vector<float> a(16, 1.0f);
  {
    TestRuntime rt;
    EXPECT_EQ(k.run({ptr_arg(a.data())}, rt), 0);
    EXPECT_EQ(rt.errors, "");
    EXPECT_EQ(a[3], 2.0f);
  }
  a[9] = -1.0f;
  TestRuntime rt;
  EXPECT_EQ(k.run({ptr_arg(a.data())}, rt), 1);
  EXPECT_NE(rt.errors.find("device_assert failed at kernel.py:7:5: A must be positive"), std::string::npos)
      << rt.errors;
  EXPECT_EQ(a[9], -1.0f);  // the failing block stopped before its store
}

TEST(CpuRuntime, PrintBufferScalarAndPrintf) {
  Buffer A = global("A", DataType::Int32(), {c(2), c(3)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({c(1)}, {bx}, {}, {}, {});
  Buffer S = shared("S", DataType::Int32(), {c(2), c(3)});
  b.alloc(S);
  b.emit(make_tile_op("copy", {full(A), full(S)}));
  b.emit(make_tile_op("print", {full(S)}, {{"msg", Attr("tile")}}));
  b.emit(make_evaluate(make_call(DataType::Void(), "tl.print_scalar", {make_string("x%"), make_float(1.5)})));
  b.emit(make_evaluate(make_call(DataType::Void(), "tl.printf",
                                 {make_string("block %d sum %d\n"), bx, make_load(S, {c(0), c(0)}) + make_load(S, {c(1), c(2)})})));
  b.emit(make_tile_op("dump_tensor", {full(S)}, {{"desc", Attr(int64_t(3))}, {"size", Attr(int64_t(2))}}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("show", {tensor_param(A)}));
  ASSERT_TRUE(k.ok());
  std::vector<int32_t> a = {10, 11, 12, 13, 14, 15};
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(a.data())}, rt), 0);
  EXPECT_NE(rt.output.find("msg='tile' buffer=S index=[1, 2] dtype=int32 value=15\n"), std::string::npos) << rt.output;
  EXPECT_NE(rt.output.find("msg='x%' dtype=float32 value=1.5\n"), std::string::npos) << rt.output;
  EXPECT_NE(rt.output.find("block 0 sum 25\n"), std::string::npos) << rt.output;
  EXPECT_NE(rt.output.find("dump_tensor desc=3 buffer=S index=1 dtype=int32 value=11\n"), std::string::npos)
      << rt.output;
  EXPECT_EQ(rt.output.find("index=2 dtype"), std::string::npos) << "dump_tensor printed more than size";
}

TEST(CpuRuntime, LargeBlockBuffersLiveOnTheHeap) {
  // 256 x 256 float32 = 256 KiB: above the per-buffer stack limit.
  const int64_t R = 256, C = 256;
  Buffer A = global("A", f32, {c(R), c(C)}), B = global("B", f32, {c(R), c(C)});
  IRBuilder b;
  b.enter_kernel({c(2)}, {Var("bx")}, {}, {}, {});
  Buffer big = fragment("big", f32, {c(R), c(C)});
  b.alloc(big);
  b.emit(make_tile_op("copy", {full(A), full(big)}));
  b.emit(make_tile_op("tile.mul", {full(big), full(big), make_float(3.0)}));
  b.emit(make_tile_op("copy", {full(big), full(B)}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("big", {tensor_param(A), tensor_param(B)}));
  ASSERT_TRUE(k.ok());
  EXPECT_NE(k.source.find("tl::cpu::HeapArray<float>"), std::string::npos) << k.source;
  auto a = random_floats(R * C, 5);
  std::vector<float> out(R * C);
  TestRuntime rt(2);
  ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(out.data())}, rt), 0);
  for (int64_t i = 0; i < R * C; ++i) ASSERT_EQ(out[i], a[i] * 3.0f) << i;
}

TEST(CpuRuntime, RunTimeSizedBlockBufferOnTheHeap) {
  // S has the run-time shape [n]: heap storage sized at launch. (The declaration used to parse as a
  // function declaration in C++, so such kernels did not compile.) A negative n is reported, not a crash.
  Buffer A = global("A", f32, {c(64)});
  Var n("n");
  IRBuilder b;
  b.enter_kernel({c(1)}, {Var("bx")}, {}, {}, {});
  Buffer S = shared("S", f32, {n});
  b.alloc(S);
  Var i("i");
  b.enter_for(i, c(0), n, ForKind::kSerial);
  b.emit(make_store(S, {i}, make_load(A, {i}) + make_float(1.0)));
  b.exit();
  b.emit(make_store(A, {c(0)}, make_load(S, {n - c(1)})));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("dyn", {tensor_param(A), scalar_param(n)}));
  ASSERT_TRUE(k.ok());
  EXPECT_NE(k.source.find("tl::cpu::HeapArray<float>"), std::string::npos) << k.source;
  std::vector<float> a(64);
  for (int i = 0; i < 64; ++i) a[i] = float(i);
  {
    TestRuntime rt;
    ASSERT_EQ(k.run({ptr_arg(a.data()), int_arg(10)}, rt), 0) << rt.errors;
    EXPECT_EQ(a[0], 10.0f);  // S[9] = A[9] + 1
  }
  TestRuntime rt;
  EXPECT_EQ(k.run({ptr_arg(a.data()), int_arg(-5)}, rt), 1);
  EXPECT_NE(rt.errors.find("cannot allocate -5 elements for buffer 'S'"), std::string::npos) << rt.errors;
}

TEST(CpuRuntime, HalfConversionsMatchPortablePath) {
  // All 65536 half bit patterns -> float32, and 2^16 random float32 values -> half, computed by the
  // kernel (built with -march=native: F16C when the machine has it) and by the portable path here.
  const int64_t n = 65536;
  Buffer H = global("H", f16, {c(n)}), F = global("F", f32, {c(n)}), X = global("X", f32, {c(n)}),
         Hx = global("Hx", f16, {c(n)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({c(n / 1024)}, {bx}, {}, {}, {});
  b.emit(make_tile_op("copy", {region(H, {{bx * 1024, c(1024)}}), region(F, {{bx * 1024, c(1024)}})}));
  b.emit(make_tile_op("copy", {region(X, {{bx * 1024, c(1024)}}), region(Hx, {{bx * 1024, c(1024)}})}));
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("convert", {tensor_param(H), tensor_param(F), tensor_param(X), tensor_param(Hx)}));
  ASSERT_TRUE(k.ok());
  std::vector<uint16_t> h(n);
  for (int64_t i = 0; i < n; ++i) h[i] = static_cast<uint16_t>(i);
  std::vector<float> f(n), x(n);
  std::mt19937 g(3);
  for (auto& v : x) {
    uint32_t bits = g();
    // Mostly values inside half's range (exponents 100..150), some anywhere.
    if (bits & 1) bits = (bits & 0x807fffffu) | ((100u + (bits >> 1) % 51u) << 23);
    std::memcpy(&v, &bits, 4);
  }
  std::vector<uint16_t> hx(n);
  TestRuntime rt;
  ASSERT_EQ(k.run({ptr_arg(h.data()), ptr_arg(f.data()), ptr_arg(x.data()), ptr_arg(hx.data())}, rt), 0);
  for (int64_t i = 0; i < n; ++i) {
    float want = tl::cpu::half_bits_to_float_portable(static_cast<uint16_t>(i));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f[i])) << i;
    } else {
      ASSERT_EQ(std::memcmp(&f[i], &want, 4), 0) << "half bits " << i;
    }
    uint16_t wh = tl::cpu::float_to_half_bits_portable(x[i]);
    bool both_nan = (wh & 0x7c00) == 0x7c00 && (wh & 0x3ff) && (hx[i] & 0x7c00) == 0x7c00 && (hx[i] & 0x3ff);
    if (!both_nan) ASSERT_EQ(hx[i], wh) << "float " << x[i];
  }
}

TEST(CpuRuntime, HostCodeTwoKernelsAndScalarParams) {
  // scale (float) and count (int) are scalar parameters; a host-level let feeds the second kernel.
  Var scale("scale", f32), count("count");
  Buffer A = global("A", f32, {c(64)}), B = global("B", f32, {c(64)});
  IRBuilder b;
  Var bx("bx");
  b.enter_kernel({c(4)}, {bx}, {}, {}, {});
  Var i("i");
  b.enter_for(i, 0, c(16), ForKind::kParallel);
  b.emit(make_store(A, {bx * 16 + i}, make_load(A, {bx * 16 + i}) * scale));
  b.exit();
  b.exit();
  Var offset("offset");
  b.let(offset, count * 2);
  Var bx2("bx");
  b.enter_kernel({c(2)}, {bx2}, {}, {}, {});
  Var j("j");
  b.enter_for(j, 0, c(32), ForKind::kParallel);
  b.emit(make_store(B, {bx2 * 32 + j}, make_load(A, {bx2 * 32 + j}) + make_cast(f32, offset)));
  b.exit();
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("two", {tensor_param(A), tensor_param(B), scalar_param(scale), scalar_param(count)}));
  ASSERT_TRUE(k.ok());
  auto a = random_floats(64, 8);
  auto a0 = a;
  std::vector<float> out(64);
  TestRuntime rt(3);
  ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(out.data()), float_arg(0.5), int_arg(5)}, rt), 0);
  for (int t = 0; t < 64; ++t) ASSERT_EQ(out[t], a0[t] * 0.5f + 10.0f) << t;
}

}  // namespace
}  // namespace tl
