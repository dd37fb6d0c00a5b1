// Run-time ISA detection and the flags and cache-key names that follow from it
// (src/target/cpu/host_isa.h): the cap only lowers, the flags match the set, a kernel object built
// for features the host lacks is named as such.
#include "target/cpu/host_isa.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/error.h"
#include "target/cpu/jit_util.h"
#include "target/cpu/module.h"

namespace tl {
namespace {

bool has(const std::vector<std::string>& v, const std::string& f) { return std::find(v.begin(), v.end(), f) != v.end(); }

CpuIsa rich() {
  CpuIsa i;
  i.x86 = i.avx2 = i.avx512 = i.avx512_vnni = i.avx512_bf16 = i.avx512_fp16 = true;
  i.amx_tile = i.amx_bf16 = i.amx_int8 = true;
  return i;
}

TEST(CpuHostIsa, DetectionAgreesWithTheCompilerRuntime) {
  const CpuIsa& h = host_cpu_isa();
#if defined(__x86_64__)
  __builtin_cpu_init();
  EXPECT_TRUE(h.x86);
  if (h.avx2) EXPECT_TRUE(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  if (h.avx512) EXPECT_TRUE(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"));
  if (!h.avx2) EXPECT_FALSE(h.avx512);
  if (h.amx_bf16 || h.amx_int8) EXPECT_TRUE(h.amx_tile);
  EXPECT_EQ(h.intel, __builtin_cpu_is("intel") != 0);
#endif
  EXPECT_FALSE(h.names().empty());
}

TEST(CpuHostIsa, CapOnlyLowers) {
  CpuIsa r = rich();
  EXPECT_EQ(cap_cpu_isa(r, "native").names(), r.names());
  EXPECT_EQ(cap_cpu_isa(r, "avx512").names(), "avx2,avx512");
  EXPECT_EQ(cap_cpu_isa(r, "avx2").names(), "avx2");
  EXPECT_EQ(cap_cpu_isa(r, "portable").names(), "portable");
  CpuIsa low;
  low.x86 = low.avx2 = true;
  EXPECT_EQ(cap_cpu_isa(low, "avx512").names(), "avx2");  // a cap never adds a feature
  EXPECT_THROW(cap_cpu_isa(r, "avx1024"), ValueError);
}

TEST(CpuHostIsa, FlagsFollowTheSet) {
  auto f = cpu_isa_flags(rich());
  for (const char* m : {"-march=x86-64", "-mavx2", "-mfma", "-mavx512f", "-mavx512bw", "-mavx512bf16", "-mamx-tile",
                        "-mamx-bf16", "-mamx-int8"})
    EXPECT_TRUE(has(f, m)) << m;
  EXPECT_FALSE(has(f, "-march=native"));
  auto a2 = cpu_isa_flags(cap_cpu_isa(rich(), "avx2"));
  EXPECT_TRUE(has(a2, "-mavx2"));
  for (const char* m : {"-mavx512f", "-mavx512bf16", "-mamx-tile"}) EXPECT_FALSE(has(a2, m)) << m;
  auto p = cpu_isa_flags(cap_cpu_isa(rich(), "portable"));
  EXPECT_EQ(p, (std::vector<std::string>{"-march=x86-64", "-mtune=native"}));
  // the vendor is tuning, not a feature: a flag for the headers, not part of the set's name
  CpuIsa intel = rich();
  intel.intel = true;
  EXPECT_TRUE(has(cpu_isa_flags(intel), "-DTL_CPU_TUNE_INTEL=1"));
  EXPECT_TRUE(has(cpu_isa_flags(cap_cpu_isa(intel, "avx2")), "-DTL_CPU_TUNE_INTEL=1"));
  EXPECT_FALSE(has(cpu_isa_flags(rich()), "-DTL_CPU_TUNE_INTEL=1"));
  EXPECT_EQ(intel.names(), rich().names());
}

TEST(CpuHostIsa, MissingFeatures) {
  CpuIsa a2 = cap_cpu_isa(rich(), "avx2");
  EXPECT_EQ(missing_cpu_features("avx2,avx512,amx_tile,amx_bf16", a2), "avx512,amx_tile,amx_bf16");
  EXPECT_EQ(missing_cpu_features("avx2", a2), "");
  EXPECT_EQ(missing_cpu_features("portable", CpuIsa{}), "");
  EXPECT_EQ(missing_cpu_features(rich().names(), rich()), "");
}

// An object that says it was compiled for a feature this CPU lacks is refused at load with a typed
// error naming the feature (instead of a SIGILL at the first launch).
TEST(CpuHostIsa, LoadRefusesAnObjectBuiltForMissingFeatures) {
  const char* src =
      "#include <stdint.h>\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) int32_t tl_kernel_entry(const void*, int32_t, "
      "const void*) { return 0; }\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) const char tl_kernel_build_isa[] = "
      "\"avx2,amx_imaginary\";\n";
  std::string so = test::build_shared_object(src);
  ASSERT_FALSE(so.empty());
  try {
    load_cpu_module(so, so, "k", 1);
    FAIL() << "loaded an object built for a missing feature";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("amx_imaginary"), std::string::npos) << e.what();
  }
  const char* ok =
      "#include <stdint.h>\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) int32_t tl_kernel_entry(const void*, int32_t, "
      "const void*) { return 0; }\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) const char tl_kernel_build_isa[] = \"portable\";\n";
  std::string so2 = test::build_shared_object(ok);
  ASSERT_FALSE(so2.empty());
  EXPECT_NE(load_cpu_module(so2, so2, "k", 1), nullptr);
}

}  // namespace
}  // namespace tl
