// Compile-only tests of the NVRTC path (they need libnvrtc, not a GPU).
#include "target/cuda/nvrtc.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tl {
namespace {

#define REQUIRE_NVRTC()                                  \
  do {                                                   \
    std::string why;                                     \
    if (!nvrtc_available(&why)) GTEST_SKIP() << why;     \
  } while (0)

// Instantiates every device header entry point.
const char* kAllHeaders = R"(
#include "tl/cuda/all.h"
using namespace tl;
extern "C" __global__ void __launch_bounds__(128) everything(float* x, half_t* h, bfloat16_t* b,
                                                              fp8_e4m3_t* f8, int n) {
  __shared__ float ws[128];
  __shared__ alignas(16) half_t s[64 * 64];
  const int tid = threadIdx.x;
  half_t a = h[0] + h[1] * h[2] - h[3] / h[4];
  bfloat16_t c = b[0] + b[1] * b[2] - b[3];
  a += 1.0f;
  c *= c;
  x[0] = float(a) + float(c) + float(f8[0]) + float(fp8_e5m2_t(x[1]));
  f8[1] = fp8_e4m3_t(x[2]);
  h[5] = tl::exp(h[6]) + tl::max(h[7], h[8]) + half_t(b[9]) + tl::fast_exp(h[1]);
  float v = allreduce<SumOp, 4, 1, 128>(x[tid], tid);
  v += allreduce<MaxOp, 4, 32, 128>(v, tid, ws);
  v += allreduce<SumOp, 3, 16, 48>(v, tid, ws);
  half_t hv = allreduce<MaxOp, 8, 1, 128>(h[tid], tid);
  v += warp_allreduce_width<SumOp>(v, 20);
  x[tid] = v + float(hv);
  atomic_add(x + 3, 1.0f);
  atomic_add(h + 3, h[1]);
  atomic_add(b + 3, b[1]);
  atomic_max(x + 4, 2.0f);
  cp_async_zfill<16>(s + tid * 8, h + tid * 8, tid < n);
  cp_async<4>(s + 2048 + tid * 2, h + tid * 2);
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  uint32_t ra[4], rb[2];
  float acc[4] = {0, 0, 0, 0};
  ldmatrix_x4(ra, s + (tid % 16) * 64 + (tid / 16) * 8);
  ldmatrix_x2_trans(rb, s + 1024 + (tid % 16) * 64);
  mma<half_t, half_t, float>(acc, ra, rb);
  mma_m16n8k16_bf16bf16f32(acc, ra, rb, acc);
  float tacc[4];
  mma_m16n8k8_tf32tf32f32(tacc, ra, rb, acc);
  int iacc[4] = {0, 0, 0, 0};
  mma_m16n8k32_s8s8s32(iacc, ra, rb, iacc);
  x[64 + tid] = acc[0] + acc[3] + tacc[1] + iacc[2];
  device_assert(x[0] < 1e9f, "kernel.py", 12, "x too large");
  print_value("v", v);
  x[5] = ieee_add<1>(x[1], x[2]) + numeric_limits<float>::infinity() + float(numeric_limits<half_t>::lowest());
}
)";

TEST(Nvrtc, CompilesAllHeadersForEveryArch) {
  REQUIRE_NVRTC();
  for (const char* arch : {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"}) {
    NvrtcOptions o;
    o.arch = arch;
    o.want_ptx = true;
    NvrtcResult r = nvrtc_compile(kAllHeaders, "all_headers.cu", o);
    ASSERT_GE(r.cubin.size(), 4u) << arch;
    EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF")) << arch;
    EXPECT_NE(r.ptx.find(std::string(".target ") + arch), std::string::npos) << arch;
    EXPECT_NE(r.ptx.find("mma.sync.aligned.m16n8k16"), std::string::npos);
    EXPECT_NE(r.ptx.find("ldmatrix.sync.aligned"), std::string::npos);
    EXPECT_NE(r.ptx.find("cp.async.cg.shared.global"), std::string::npos);
    ASSERT_FALSE(r.usage.empty()) << r.log;
    EXPECT_EQ(r.usage[0].function, "everything");
    EXPECT_GT(r.usage[0].registers, 0);
    EXPECT_EQ(r.usage[0].spill_store_bytes, 0) << r.log;
    EXPECT_GT(r.usage[0].static_smem_bytes, 8192);
  }
}

TEST(Nvrtc, FastMathAndCompileTime) {
  REQUIRE_NVRTC();
  NvrtcOptions o;
  o.arch = "sm_90a";
  o.fast_math = true;
  NvrtcResult r = nvrtc_compile(kAllHeaders, "all_headers.cu", o);
  EXPECT_FALSE(r.cubin.empty());
  // Lean headers: a kernel with every header compiles well under a second on a quiet machine;
  // the bound here is loose because CI machines are shared.
  EXPECT_LT(r.seconds, 5.0);
}

TEST(Nvrtc, ErrorsQuoteTheGeneratedLine) {
  REQUIRE_NVRTC();
  const char* bad = "extern \"C\" __global__ void k(float* x) {\n  x[0] = undefined_name;\n}\n";
  try {
    nvrtc_compile(bad, "main.cu", NvrtcOptions{});
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("undefined_name"), std::string::npos) << msg;
    EXPECT_NE(msg.find("main.cu:2:   x[0] = undefined_name;"), std::string::npos) << msg;
    EXPECT_NE(msg.find("sm_80"), std::string::npos) << msg;
  }
}

TEST(Nvrtc, PrecompiledHeadersGiveTheSameCubin) {
  REQUIRE_NVRTC();
  NvrtcOptions with, without;
  with.arch = without.arch = "sm_90a";
  without.pch = false;
  NvrtcResult first = nvrtc_compile(kAllHeaders, "kernel.cu", with);   // creates the PCH (12.4+)
  NvrtcResult second = nvrtc_compile(kAllHeaders, "kernel.cu", with);  // uses it
  NvrtcResult plain = nvrtc_compile(kAllHeaders, "kernel.cu", without);
  EXPECT_EQ(first.cubin, plain.cubin);
  EXPECT_EQ(second.cubin, plain.cubin);
  EXPECT_EQ(second.usage.size(), plain.usage.size());
  EXPECT_EQ(second.log.find("precompiled header"), std::string::npos) << second.log;
}

TEST(Nvrtc, RejectsUnknownArch) {
  NvrtcOptions o;
  o.arch = "sm_75";
  EXPECT_THROW(nvrtc_compile("", "x.cu", o), ValueError);
}

TEST(Nvrtc, ParsesPtxasReport) {
  std::string log =
      "ptxas info    : 623 bytes gmem\n"
      "ptxas info    : Compiling entry function 'gemm' for 'sm_90a'\n"
      "ptxas info    : Function properties for gemm\n"
      "ptxas         .     40 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 40 bytes cumulative stack size, 8704 bytes smem, "
      "388 bytes cmem[0]\n"
      "ptxas info    : Function properties for _ZN2tl21report_assert_failureEPKciS1_\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  auto u = parse_ptxas_report(log);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].function, "gemm");
  EXPECT_EQ(u[0].registers, 168);
  EXPECT_EQ(u[0].stack_frame_bytes, 40);
  EXPECT_EQ(u[0].spill_store_bytes, 8);
  EXPECT_EQ(u[0].spill_load_bytes, 12);
  EXPECT_EQ(u[0].static_smem_bytes, 8704);
}

TEST(Nvrtc, FindsPtxasWgmmaSerializationNote) {
  const std::string note =
      "(C7510) Potential Performance Loss: wgmma.mma_async instructions are serialized due to wgmma pipeline "
      "crossing function boundary at a function call in the function 'main_kernel'";
  const std::string log = "ptxas info    : Compiling entry function 'main_kernel' for 'sm_90a'\n"
                          "ptxas info    : " + note + "\nptxas info    : Function properties for main_kernel\n";
  EXPECT_EQ(wgmma_serialization_note(log), note);
  EXPECT_EQ(wgmma_serialization_note("ptxas info    : " + note), note);  // last line, no newline
  EXPECT_EQ(wgmma_serialization_note("ptxas info    : Used 168 registers\n"), "");
}

TEST(Nvrtc, IncludeDirHoldsTheHeaders) {
  std::string dir = cuda_include_dir();
  EXPECT_NE(dir.find("include"), std::string::npos);
}

}  // namespace
}  // namespace tl
