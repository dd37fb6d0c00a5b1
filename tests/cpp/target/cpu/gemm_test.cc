// The tile GEMM of include/tl/cpu/gemm.h against a float64 reference: odd sizes (row, vector and
// lane tails), every transpose, clear vs accumulate, leading dimensions wider than the tile, every
// dtype, k chunking of packed operands, and C elements outside the tile left alone.
//
// This test binary is built without -march=native, so the header compiled into it has only its
// portable tier. The vector tiers are compiled by g++ with the kernel flags into a shared object
// (gemm_cases_source below) and run with the CPU's own tier and with TL_CPU_ISA=portable (and
// avx2, in an object built with -mno-avx512f) forcing the others.
#include <dlfcn.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "target/cpu/jit_util.h"
#include "tl/cpu/gemm.h"
#include "tl/cpu/types.h"

namespace tl {
namespace {

using cpu::bfloat16_t;
using cpu::float8_e4m3_t;
using cpu::float8_e5m2_t;
using cpu::half_t;

enum class Dt { kF32, kF64, kF16, kBF16, kE4M3, kE5M2, kI8, kI32 };

const char* cpp_type(Dt t) {
  switch (t) {
    case Dt::kF32: return "float";
    case Dt::kF64: return "double";
    case Dt::kF16: return "tl::cpu::half_t";
    case Dt::kBF16: return "tl::cpu::bfloat16_t";
    case Dt::kE4M3: return "tl::cpu::float8_e4m3_t";
    case Dt::kE5M2: return "tl::cpu::float8_e5m2_t";
    case Dt::kI8: return "int8_t";
    case Dt::kI32: return "int32_t";
  }
  return "?";
}

size_t dt_bytes(Dt t) {
  switch (t) {
    case Dt::kF64: return 8;
    case Dt::kF32:
    case Dt::kI32: return 4;
    case Dt::kF16:
    case Dt::kBF16: return 2;
    default: return 1;
  }
}

// Stores x (already representable, or rounded) into element i of a buffer of dtype t.
void store(Dt t, void* p, size_t i, double x) {
  switch (t) {
    case Dt::kF32: static_cast<float*>(p)[i] = static_cast<float>(x); break;
    case Dt::kF64: static_cast<double*>(p)[i] = x; break;
    case Dt::kF16: static_cast<half_t*>(p)[i] = half_t(x); break;
    case Dt::kBF16: static_cast<bfloat16_t*>(p)[i] = bfloat16_t(x); break;
    case Dt::kE4M3: static_cast<float8_e4m3_t*>(p)[i] = float8_e4m3_t(x); break;
    case Dt::kE5M2: static_cast<float8_e5m2_t*>(p)[i] = float8_e5m2_t(x); break;
    case Dt::kI8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(x); break;
    case Dt::kI32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(x); break;
  }
}

double load(Dt t, const void* p, size_t i) {
  switch (t) {
    case Dt::kF32: return static_cast<const float*>(p)[i];
    case Dt::kF64: return static_cast<const double*>(p)[i];
    case Dt::kF16: return static_cast<float>(static_cast<const half_t*>(p)[i]);
    case Dt::kBF16: return static_cast<float>(static_cast<const bfloat16_t*>(p)[i]);
    case Dt::kE4M3: return static_cast<float>(static_cast<const float8_e4m3_t*>(p)[i]);
    case Dt::kE5M2: return static_cast<float>(static_cast<const float8_e5m2_t*>(p)[i]);
    case Dt::kI8: return static_cast<const int8_t*>(p)[i];
    case Dt::kI32: return static_cast<const int32_t*>(p)[i];
  }
  return 0;
}

bool is_int(Dt t) { return t == Dt::kI8 || t == Dt::kI32; }

// Relative precision of a C dtype's storage (0: exact).
double storage_eps(Dt t) {
  switch (t) {
    case Dt::kF16: return std::ldexp(1.0, -11);
    case Dt::kBF16: return std::ldexp(1.0, -8);
    case Dt::kF32: return std::ldexp(1.0, -24);
    case Dt::kF64: return std::ldexp(1.0, -53);
    default: return 0;
  }
}

struct GemmCase {
  int M, N, K;
  bool trans_A, trans_B;
  Dt in, out;
};

std::string case_name(const GemmCase& g) {
  return std::string(cpp_type(g.in)) + "->" + cpp_type(g.out) + " " + std::to_string(g.M) + "x" +
         std::to_string(g.N) + "x" + std::to_string(g.K) + (g.trans_A ? " A^T" : "") + (g.trans_B ? " B^T" : "");
}

using GemmFn = std::function<void(const void* A, int64_t lda, const void* B, int64_t ldb, void* C, int64_t ldc,
                                  bool clear)>;

// Random operands with padded leading dimensions, both clear modes, checked against float64.
void check_gemm(const GemmCase& g, const GemmFn& fn, const std::string& where) {
  SCOPED_TRACE(where + ": " + case_name(g));
  const int pad = 3;
  const int64_t a_rows = g.trans_A ? g.K : g.M, a_cols = g.trans_A ? g.M : g.K;
  const int64_t b_rows = g.trans_B ? g.N : g.K, b_cols = g.trans_B ? g.K : g.N;
  const int64_t lda = a_cols + pad, ldb = b_cols + pad, ldc = g.N + pad;
  std::mt19937 rng(g.M * 7919 + g.N * 131 + g.K);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  auto value = [&](Dt t) {
    if (t == Dt::kI8) return static_cast<double>(static_cast<int>(rng() % 255) - 127);
    if (t == Dt::kI32) return static_cast<double>(static_cast<int>(rng() % 2001) - 1000);
    if (t == Dt::kE4M3 || t == Dt::kE5M2) return 4 * uni(rng);
    return uni(rng);
  };
  std::vector<uint8_t> A(a_rows * lda * dt_bytes(g.in)), B(b_rows * ldb * dt_bytes(g.in));
  std::vector<uint8_t> C0(g.M * ldc * dt_bytes(g.out)), C(C0.size());
  for (int64_t i = 0; i < a_rows * lda; ++i) store(g.in, A.data(), i, value(g.in));
  for (int64_t i = 0; i < b_rows * ldb; ++i) store(g.in, B.data(), i, value(g.in));
  for (int64_t i = 0; i < g.M * ldc; ++i) store(g.out, C0.data(), i, value(g.out));
  auto a_at = [&](int m, int k) { return load(g.in, A.data(), g.trans_A ? k * lda + m : m * lda + k); };
  auto b_at = [&](int k, int n) { return load(g.in, B.data(), g.trans_B ? n * ldb + k : k * ldb + n); };
  for (bool clear : {true, false}) {
    C = C0;
    fn(A.data(), lda, B.data(), ldb, C.data(), ldc, clear);
    int bad = 0;
    for (int m = 0; m < g.M && bad < 5; ++m) {
      for (int64_t n = 0; n < ldc && bad < 5; ++n) {
        double got = load(g.out, C.data(), m * ldc + n);
        if (n >= g.N) {  // outside the tile
          if (got != load(g.out, C0.data(), m * ldc + n)) {
            ADD_FAILURE() << "C[" << m << ", " << n << "] outside the tile changed, clear=" << clear;
            ++bad;
          }
          continue;
        }
        double ref = clear ? 0.0 : load(g.out, C0.data(), m * ldc + n), mag = std::abs(ref);
        for (int k = 0; k < g.K; ++k) {
          ref += a_at(m, k) * b_at(k, n);
          mag += std::abs(a_at(m, k) * b_at(k, n));
        }
        double tol = is_int(g.out) ? 0.0
                     : (g.out == Dt::kF64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23)) * (g.K + 2) * mag +
                           storage_eps(g.out) * std::abs(ref);
        if (!(std::abs(got - ref) <= tol)) {
          ADD_FAILURE() << "C[" << m << ", " << n << "] = " << got << ", float64 reference " << ref
                        << " (tolerance " << tol << "), clear=" << clear;
          ++bad;
        }
      }
    }
  }
}

// The cases every tier runs: full vector strips, row tails (M % MR), whole-vector and partial-lane
// column tails, odd K (the bf16 pair padding), transposes, packing in k chunks (K * N beyond the
// per-call pack budget), and every dtype.
const std::vector<GemmCase>& gemm_cases() {
  static const std::vector<GemmCase> cases = {
      {128, 128, 32, false, false, Dt::kF32, Dt::kF32},  // the fast path: operands read in place
      {37, 45, 29, false, false, Dt::kF32, Dt::kF32},
      {50, 70, 33, false, true, Dt::kF32, Dt::kF32},
      {19, 64, 16, true, false, Dt::kF32, Dt::kF32},
      {23, 17, 40, true, true, Dt::kF32, Dt::kF32},
      {24, 200, 300, false, true, Dt::kF32, Dt::kF32},  // B^T packed in k chunks
      // attention's S = Q K^T: B^T packed by whole lane x lane transposes (fp32; AMX for bf16), and
      // with row (N % lanes) and k (K % lanes) tails
      {64, 64, 128, false, true, Dt::kF32, Dt::kF32},
      {32, 48, 96, false, true, Dt::kBF16, Dt::kF32},
      {20, 37, 45, false, true, Dt::kF32, Dt::kF32},
      {64, 80, 32, false, false, Dt::kBF16, Dt::kF32},
      {30, 33, 31, false, false, Dt::kBF16, Dt::kF32},  // odd K: A packed with a zero half pair
      {16, 48, 20, true, true, Dt::kBF16, Dt::kF32},
      {13, 40, 26, false, true, Dt::kBF16, Dt::kF32},
      {16, 256, 200, false, true, Dt::kBF16, Dt::kF32},  // B pairs packed in k chunks
      {40, 50, 24, false, false, Dt::kF16, Dt::kF32},
      {21, 36, 19, true, true, Dt::kF16, Dt::kF32},
      {32, 256, 200, false, false, Dt::kF16, Dt::kF32},  // packed A and B in k chunks
      {16, 32, 8, false, false, Dt::kF16, Dt::kF16},     // a C that is not the accumulator type
      {18, 24, 16, false, true, Dt::kE4M3, Dt::kF32},
      {9, 20, 12, true, false, Dt::kE5M2, Dt::kF32},
      {24, 40, 36, false, false, Dt::kI8, Dt::kI32},
      {7, 50, 9, true, true, Dt::kI8, Dt::kI32},
      {20, 18, 12, false, false, Dt::kF64, Dt::kF64},
      {11, 13, 1, false, true, Dt::kF32, Dt::kF32},  // K = 1
      // a remainder under half a row block shares the last full block's rows (gemm_acc: 8 = 4 + 4,
      // 14 = 6 + 4 + 4, 13 = 6 + 4 + 3 with 6-row blocks; 13 = 8 + 3 + 2 with the portable 4-row ones)
      {8, 48, 24, false, true, Dt::kF32, Dt::kF32},
      {14, 40, 20, false, false, Dt::kF32, Dt::kF32},
      {13, 36, 18, false, false, Dt::kBF16, Dt::kF32},
      // the blocked fp32 driver (M >= 32, K >= 128, N whole vectors): row-block tails (100 = 7 x 14 + 2),
      // a last strip of one vector (80), a k chunk tail (600 = 2 x 256 + 88), B in two column chunks
      // (272 > 256 columns per chunk of 256 k), and K just at the threshold
      {100, 80, 600, false, false, Dt::kF32, Dt::kF32},
      {45, 272, 300, false, false, Dt::kF32, Dt::kF32},
      {32, 48, 128, false, false, Dt::kF32, Dt::kF32},
      {5, 64, 200, false, false, Dt::kF32, Dt::kF32},  // a few rows: one block of 5
      // ... with float16 A and B, converted as packed (and a float16 C through the converted copy)
      {100, 80, 600, false, false, Dt::kF16, Dt::kF32},
      {45, 272, 300, false, false, Dt::kF16, Dt::kF32},
      {30, 64, 160, false, false, Dt::kF16, Dt::kF16},
      // one row of C (the GEMV): one strip with a tail of vectors, and whole rows (N over one strip)
      {1, 80, 70, false, false, Dt::kF32, Dt::kF32},
      {1, 528, 37, false, false, Dt::kF32, Dt::kF32},
      {1, 272, 9, true, false, Dt::kF32, Dt::kF32},
  };
  return cases;
}

// ---- the portable tier, compiled into this binary -------------------------------------------------

template <typename T> struct DtOf;
template <> struct DtOf<float> { static constexpr Dt v = Dt::kF32; };
template <> struct DtOf<double> { static constexpr Dt v = Dt::kF64; };
template <> struct DtOf<half_t> { static constexpr Dt v = Dt::kF16; };
template <> struct DtOf<bfloat16_t> { static constexpr Dt v = Dt::kBF16; };
template <> struct DtOf<float8_e4m3_t> { static constexpr Dt v = Dt::kE4M3; };
template <> struct DtOf<float8_e5m2_t> { static constexpr Dt v = Dt::kE5M2; };
template <> struct DtOf<int8_t> { static constexpr Dt v = Dt::kI8; };
template <> struct DtOf<int32_t> { static constexpr Dt v = Dt::kI32; };

template <int M, int N, int K, bool TA, bool TB, typename In, typename Out>
void check_in_process() {
  GemmCase g{M, N, K, TA, TB, DtOf<In>::v, DtOf<Out>::v};
  check_gemm(g,
             [](const void* A, int64_t lda, const void* B, int64_t ldb, void* C, int64_t ldc, bool clear) {
               cpu::gemm<M, N, K, TA, TB>(static_cast<const In*>(A), lda, static_cast<const In*>(B), ldb,
                                          static_cast<Out*>(C), ldc, clear);
             },
             "in-process portable tier");
}

TEST(CpuGemmHeader, PortableTierInThisBinary) {
  EXPECT_STREQ(cpu::isa_name(), "portable");  // no -march=native here
  check_in_process<128, 128, 32, false, false, float, float>();
  check_in_process<37, 45, 29, false, false, float, float>();
  check_in_process<50, 70, 33, false, true, float, float>();
  check_in_process<19, 64, 16, true, false, float, float>();
  check_in_process<23, 17, 40, true, true, float, float>();
  check_in_process<24, 200, 300, false, true, float, float>();
  check_in_process<30, 33, 31, false, false, bfloat16_t, float>();
  check_in_process<16, 48, 20, true, true, bfloat16_t, float>();
  check_in_process<16, 256, 200, false, true, bfloat16_t, float>();
  check_in_process<40, 50, 24, false, false, half_t, float>();
  check_in_process<21, 36, 19, true, true, half_t, float>();
  check_in_process<16, 32, 8, false, false, half_t, half_t>();
  check_in_process<18, 24, 16, false, true, float8_e4m3_t, float>();
  check_in_process<9, 20, 12, true, false, float8_e5m2_t, float>();
  check_in_process<24, 40, 36, false, false, int8_t, int32_t>();
  check_in_process<7, 50, 9, true, true, int8_t, int32_t>();
  check_in_process<20, 18, 12, false, false, double, double>();
  check_in_process<11, 13, 1, false, true, float, float>();
}

TEST(CpuGemmHeader, EmptyKClearsOrKeeps) {
  float C[6] = {1, 2, 3, 4, 5, 6};
  const float* none = nullptr;
  cpu::gemm<2, 3, 0, false, false>(none, 0, none, 3, C, 3, false);
  EXPECT_EQ(C[4], 5.0f);
  cpu::gemm<2, 3, 0, false, false>(none, 0, none, 3, C, 3, true);
  for (float x : C) EXPECT_EQ(x, 0.0f);
}

// ---- the vector tiers, compiled with the kernel flags ---------------------------------------------

std::string gemm_cases_source() {
  std::string s = "#include \"tl/cpu/kernel.h\"\n";
  s += "extern \"C\" __attribute__((visibility(\"default\"))) const char* case_isa() { return tl::cpu::isa_name(); }\n";
  const auto& cases = gemm_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    const GemmCase& g = cases[i];
    std::string in = cpp_type(g.in), out = cpp_type(g.out);
    s += "extern \"C\" __attribute__((visibility(\"default\"))) void case_" + std::to_string(i) +
         "(const void* A, int64_t lda, const void* B, int64_t ldb, void* C, int64_t ldc, bool clear) {\n"
         "  tl::cpu::gemm<" + std::to_string(g.M) + ", " + std::to_string(g.N) + ", " + std::to_string(g.K) + ", " +
         (g.trans_A ? "true" : "false") + ", " + (g.trans_B ? "true" : "false") + ">(static_cast<const " + in +
         "*>(A), lda, static_cast<const " + in + "*>(B), ldb, static_cast<" + out + "*>(C), ldc, clear);\n}\n";
  }
  return s;
}

// Builds the cases with the kernel flags (plus `extra`) once per flag set; returns the .so path.
std::string build_cases(const std::string& extra) {
  static std::map<std::string, std::string> built;
  if (!built.count(extra)) built[extra] = test::build_shared_object(gemm_cases_source(), extra);
  return built[extra];
}

// Loads a fresh copy of the object (the tier is chosen once per loaded object) with TL_CPU_ISA set
// to `isa_env` (empty: unset) and runs every case; returns the tier name the object reports.
std::string run_cases(const std::string& so, const std::string& isa_env) {
  namespace fs = std::filesystem;
  static int copies = 0;
  std::string copy = so + "." + std::to_string(copies++) + ".so";
  fs::copy_file(so, copy, fs::copy_options::overwrite_existing);
  if (isa_env.empty()) unsetenv("TL_CPU_ISA");
  else setenv("TL_CPU_ISA", isa_env.c_str(), 1);
  void* h = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    ADD_FAILURE() << dlerror();
    return "";
  }
  auto isa_fn = reinterpret_cast<const char* (*)()>(dlsym(h, "case_isa"));
  std::string isa = isa_fn();  // decides the tier while TL_CPU_ISA is set
  unsetenv("TL_CPU_ISA");
  using Fn = void (*)(const void*, int64_t, const void*, int64_t, void*, int64_t, bool);
  const auto& cases = gemm_cases();
  for (size_t i = 0; i < cases.size(); ++i) {
    auto fn = reinterpret_cast<Fn>(dlsym(h, ("case_" + std::to_string(i)).c_str()));
    if (!fn) {
      ADD_FAILURE() << "case_" << i << " not exported";
      continue;
    }
    check_gemm(cases[i], fn, "tier " + isa);
  }
  dlclose(h);
  fs::remove(copy);
  return isa;
}

bool host_has(const char* feature) {
  __builtin_cpu_init();
  if (std::string(feature) == "avx512") {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  }
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

TEST(CpuGemmHeader, NativeTierAndForcedPortable) {
  std::string so = build_cases("");
  ASSERT_FALSE(so.empty());
  std::string native = run_cases(so, "");
  if (host_has("avx512")) EXPECT_EQ(native.rfind("avx512", 0), 0u) << native;
  EXPECT_EQ(run_cases(so, "portable"), "portable");
}

TEST(CpuGemmHeader, Avx2TierWithoutAvx512) {
  if (!host_has("avx2")) GTEST_SKIP() << "this CPU has no AVX2+FMA";
  std::string so = build_cases("-mno-avx512f");
  ASSERT_FALSE(so.empty());
  EXPECT_EQ(run_cases(so, ""), "avx2");
}

// The packed-B cache's bookkeeping (include/tl/cpu/gemm.h, "packed B reused across the calls of
// one launch"): a key hits only within its launch, the least recently used buffer goes when the
// entries or the byte budget run out, and gemm_end_launch frees a launch's buffers in every
// thread's cache.
int live_packs() {
  int n = 0;
  for (const auto& e : cpu::gemm_impl::pack_cache().entry) n += e.data != nullptr;
  return n;
}

TEST(CpuGemmPackCache, HitsWithinALaunchOnly) {
  using cpu::gemm_impl::pack_cache_lookup;
  static int tag_a, tag_b;
  float b[4];
  const uint64_t l1 = cpu::gemm_begin_launch(), l2 = cpu::gemm_begin_launch();
  EXPECT_NE(l1, 0u);
  EXPECT_NE(l1, l2);
  EXPECT_EQ(cpu::gemm_begin_launch(false), 0u);
  bool hit = true;
  void* p = pack_cache_lookup(&tag_a, l1, b, 64, 4096, &hit);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(hit);
  EXPECT_EQ(pack_cache_lookup(&tag_a, l1, b, 64, 4096, &hit), p);
  EXPECT_TRUE(hit);
  pack_cache_lookup(&tag_b, l1, b, 64, 4096, &hit);  // another driver
  EXPECT_FALSE(hit);
  pack_cache_lookup(&tag_a, l1, b + 1, 64, 4096, &hit);  // another B
  EXPECT_FALSE(hit);
  pack_cache_lookup(&tag_a, l1, b, 128, 4096, &hit);  // another ldb
  EXPECT_FALSE(hit);
  pack_cache_lookup(&tag_a, l2, b, 64, 4096, &hit);  // the next launch
  EXPECT_FALSE(hit);
  EXPECT_EQ(pack_cache_lookup(&tag_a, l1, b, 64, cpu::gemm_impl::kPackCacheBytes + 1, &hit), nullptr);
  cpu::gemm_end_launch(l1);
  cpu::gemm_end_launch(l2);
  EXPECT_EQ(live_packs(), 0);
}

// The per-bucket hint only speeds up a hit: two B operands hashing to one bucket, looked up in turn,
// each find their own pack (the hint points at the other's slot half of the time).
TEST(CpuGemmPackCache, BucketHintIsOnlyAHint) {
  using cpu::gemm_impl::pack_cache_hash;
  using cpu::gemm_impl::pack_cache_lookup;
  static int tag;
  static char buf[1 << 22];
  const char* b0 = buf;
  const char* b1 = nullptr;
  for (int64_t o = 64; o < int64_t(sizeof buf) && !b1; o += 2)
    if (pack_cache_hash(buf + o) == pack_cache_hash(b0)) b1 = buf + o;
  ASSERT_NE(b1, nullptr);
  const uint64_t l = cpu::gemm_begin_launch();
  bool hit = true;
  void* p0 = pack_cache_lookup(&tag, l, b0, 64, 4096, &hit);
  EXPECT_FALSE(hit);
  void* p1 = pack_cache_lookup(&tag, l, b1, 64, 4096, &hit);
  EXPECT_FALSE(hit);
  ASSERT_NE(p0, nullptr);
  ASSERT_NE(p1, nullptr);
  EXPECT_NE(p0, p1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(pack_cache_lookup(&tag, l, b0, 64, 4096, &hit), p0);
    EXPECT_TRUE(hit);
    EXPECT_EQ(pack_cache_lookup(&tag, l, b1, 64, 4096, &hit), p1);
    EXPECT_TRUE(hit);
  }
  cpu::gemm_end_launch(l);
  const uint64_t l2 = cpu::gemm_begin_launch();
  pack_cache_lookup(&tag, l2, b0, 64, 4096, &hit);  // the hinted slot was freed with its launch
  EXPECT_FALSE(hit);
  cpu::gemm_end_launch(l2);
  EXPECT_EQ(live_packs(), 0);
}

TEST(CpuGemmPackCache, EvictsLeastRecentlyUsed) {
  using cpu::gemm_impl::kPackCacheBytes;
  using cpu::gemm_impl::kPackCacheEntries;
  using cpu::gemm_impl::pack_cache_lookup;
  static int tag;
  std::vector<float> b(64);
  const uint64_t l = cpu::gemm_begin_launch();
  bool hit;
  for (int i = 0; i < kPackCacheEntries + 4; ++i) pack_cache_lookup(&tag, l, &b[i], 64, 1024, &hit);
  EXPECT_EQ(live_packs(), kPackCacheEntries);
  pack_cache_lookup(&tag, l, &b[kPackCacheEntries + 3], 64, 1024, &hit);  // the newest stays
  EXPECT_TRUE(hit);
  pack_cache_lookup(&tag, l, &b[0], 64, 1024, &hit);  // the oldest went
  EXPECT_FALSE(hit);
  // budget: two packs of 0.6 x the budget cannot both stay
  pack_cache_lookup(&tag, l, &b[40], 64, kPackCacheBytes * 6 / 10, &hit);
  pack_cache_lookup(&tag, l, &b[41], 64, kPackCacheBytes * 6 / 10, &hit);
  int64_t held = 0;
  for (const auto& e : cpu::gemm_impl::pack_cache().entry) held += e.data ? e.bytes : 0;
  EXPECT_LE(held, kPackCacheBytes);
  pack_cache_lookup(&tag, l, &b[40], 64, kPackCacheBytes * 6 / 10, &hit);
  EXPECT_FALSE(hit);
  cpu::gemm_end_launch(l);
  EXPECT_EQ(live_packs(), 0);
}

TEST(CpuGemmPackCache, EndOfLaunchFreesEveryThreadsPacks) {
  static int tag;
  float b[2];
  const uint64_t l = cpu::gemm_begin_launch(), other = cpu::gemm_begin_launch();
  int before = -1, after_end = -1, other_kept = -1;
  bool go = false, ended = false;
  std::thread t([&] {
    bool hit;
    // two launches' packs in one thread (of different sizes: a buffer of a launch not running here
    // any more may be taken over by the next launch's pack of its size)
    cpu::gemm_impl::pack_cache_lookup(&tag, l, b, 64, 4096, &hit);
    cpu::gemm_impl::pack_cache_lookup(&tag, other, b, 64, 8192, &hit);
    before = live_packs();
    __atomic_store_n(&go, true, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&ended, __ATOMIC_ACQUIRE)) std::this_thread::yield();
    after_end = live_packs();
    cpu::gemm_impl::pack_cache_lookup(&tag, other, b, 64, 8192, &hit);
    other_kept = hit;
    cpu::gemm_end_launch(other);
  });
  while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) std::this_thread::yield();
  cpu::gemm_end_launch(l);  // from another thread, as a kernel entry after the grid
  __atomic_store_n(&ended, true, __ATOMIC_RELEASE);
  t.join();
  EXPECT_EQ(before, 2);
  EXPECT_EQ(after_end, 1);
  EXPECT_EQ(other_kept, 1);
}

TEST(CpuGemmPackCache, RangesOverlap) {
  char m[64];
  EXPECT_TRUE(cpu::gemm_ranges_overlap(m, 16, m + 8, 16));
  EXPECT_FALSE(cpu::gemm_ranges_overlap(m, 16, m + 16, 16));
  EXPECT_TRUE(cpu::gemm_ranges_overlap(m + 8, 1, m, 64));
  EXPECT_FALSE(cpu::gemm_ranges_overlap(m, 0, m, 64));
  EXPECT_FALSE(cpu::gemm_ranges_overlap(m, 64, m, -5));
}


// float16 as two bfloat16 (gemm.h; the AMX float16 GEMM's tiles): the tiles that amx_pack_a_f16 /
// amx_pack_b_f16 make, multiplied as tdpbf16ps does (pairs of bfloat16 products per group row), give
// exactly the float16 GEMM: random values whose products and sums are exact in float64, an odd
// number of tile steps (a half-used split), both B layouts; and with inf, -inf, NaN, 65504 and
// subnormals placed among them, inf * finite is inf, inf * 0 and NaN * x are NaN, as in float64.
// Plain vector code: runs on any machine (the tile instructions themselves need AMX).
double bf16_value(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

template <bool TRANS_B>
void check_f16_tiles(const std::vector<half_t>& a, const std::vector<half_t>& b, bool exact, const char* what) {
  constexpr int M = 32, N = 32, K = 24, S = K / 8;  // 2 row tiles, 2 column tiles, 3 tile steps
  std::vector<char> a_blk(2 * S * 1024);
  std::vector<uint32_t> b_pack(2 * S * 256);
  cpu::gemm_impl::amx_pack_a_f16<2>(a.data(), K, 0, 0, S, a_blk.data());
  cpu::gemm_impl::amx_pack_b_f16<N, TRANS_B>(b.data(), TRANS_B ? K : N, 0, S, b_pack.data());
  const uint16_t* a16 = reinterpret_cast<const uint16_t*>(a_blk.data());
  const uint16_t* b16 = reinterpret_cast<const uint16_t*>(b_pack.data());
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double tiles = 0, want = 0;
      for (int s = 0; s < S; ++s)
        for (int g = 0; g < 16; ++g)
          for (int e = 0; e < 2; ++e)
            tiles += bf16_value(a16[((m / 16) * S + s) * 512 + (m % 16) * 32 + 2 * g + e]) *
                     bf16_value(b16[(((n / 16) * S + s) * 256 + g * 16 + n % 16) * 2 + e]);
      for (int k = 0; k < K; ++k)
        want += double(static_cast<float>(a[m * K + k])) * static_cast<float>(TRANS_B ? b[n * K + k] : b[k * N + n]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(tiles)) << what << " " << m << "," << n;
      } else if (exact || std::isinf(want)) {
        EXPECT_EQ(tiles, want) << what << " " << m << "," << n;
      } else {
        EXPECT_NEAR(tiles, want, 1e-12 * std::fabs(want) + 1e-300) << what << " " << m << "," << n;
      }
    }
}

TEST(CpuGemmF16Split, TilesGiveTheExactProduct) {
  constexpr int M = 32, N = 32, K = 24;
  std::mt19937 gen(11);
  auto moderate = [&] {  // sign, 10 random mantissa bits, exponent -4..4: products and sums exact in float64
    const uint16_t e = uint16_t(15 - 4 + gen() % 9), m = uint16_t(gen() % 1024), sign = uint16_t(gen() % 2);
    return half_t::from_bits(uint16_t(sign << 15 | e << 10 | m));
  };
  const uint16_t specials[] = {0x7c00, 0xfc00, 0x7e00, 0x7bff, 0xfbff, 0x0001, 0x8001, 0x0000, 0x8000, 0x03ff, 0x3c01};
  for (int round = 0; round < 40; ++round) {
    std::vector<half_t> a(M * K), b(K * N);
    for (auto& x : a) x = moderate();
    for (auto& x : b) x = moderate();
    const bool exact = round < 20;
    if (!exact)  // a few special values at random spots of both operands
      for (int i = 0; i < 6; ++i) {
        a[gen() % (M * K)] = half_t::from_bits(specials[gen() % (sizeof specials / 2)]);
        b[gen() % (K * N)] = half_t::from_bits(specials[gen() % (sizeof specials / 2)]);
      }
    check_f16_tiles<false>(a, b, exact, exact ? "B" : "B, specials");
    check_f16_tiles<true>(a, b, exact, exact ? "Bt" : "Bt, specials");
  }
}

}  // namespace
}  // namespace tl
