#include "target/cpu/host_isa.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "ir/error.h"

namespace tl {

namespace {

#if defined(__x86_64__)
void cpuid(uint32_t leaf, uint32_t sub, uint32_t* a, uint32_t* b, uint32_t* c, uint32_t* d) {
  __asm__ __volatile__("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

// Linux gives a process the AMX tile data state only after it asks (since 5.16): without the
// permission the first tile instruction raises SIGILL.
bool request_amx_permission() {
#if defined(__linux__)
  constexpr long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0) return false;
  unsigned long bitmask = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) != 0) return false;
  return (bitmask >> kXfeatureXtiledata) & 1ul;
#else
  return false;
#endif
}

CpuIsa detect() {
  CpuIsa h;
  h.x86 = true;
  uint32_t a, b, c, d;
  cpuid(0, 0, &a, &b, &c, &d);
  const uint32_t max_leaf = a;
  h.intel = b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu;  // "Genu" "ineI" "ntel"
  cpuid(1, 0, &a, &b, &c, &d);
  const bool fma = (c >> 12) & 1u, osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u, f16c = (c >> 29) & 1u;
  if (!osxsave || !avx || max_leaf < 7) return h;
  uint32_t xlo, xhi;
  __asm__ __volatile__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0u));
  const bool os_ymm = (xlo & 0x6u) == 0x6u;
  const bool os_zmm = (xlo & 0xe6u) == 0xe6u;
  const bool os_tile = ((xlo >> 17) & 3u) == 3u;  // XTILECFG and XTILEDATA
  cpuid(7, 0, &a, &b, &c, &d);
  const uint32_t max_sub7 = a;
  const bool avx2 = (b >> 5) & 1u;
  const bool f512 = (b >> 16) & 1u, dq = (b >> 17) & 1u, cd = (b >> 28) & 1u, bw = (b >> 30) & 1u,
             vl = (b >> 31) & 1u;
  h.avx2 = os_ymm && avx2 && fma && f16c;
  h.avx512 = h.avx2 && os_zmm && f512 && dq && cd && bw && vl;
  if (h.avx512) {
    h.avx512_vnni = (c >> 11) & 1u;
    h.avx512_fp16 = (d >> 23) & 1u;
  }
  const bool amx_bf16 = (d >> 22) & 1u, amx_tile = (d >> 24) & 1u, amx_int8 = (d >> 25) & 1u;
  bool amx_fp16 = false;
  if (max_sub7 >= 1) {
    cpuid(7, 1, &a, &b, &c, &d);
    if (h.avx512) h.avx512_bf16 = (a >> 5) & 1u;
    amx_fp16 = (a >> 21) & 1u;
  }
  if (h.avx512 && amx_tile && os_tile && request_amx_permission()) {
    h.amx_tile = true;
    h.amx_bf16 = amx_bf16;
    h.amx_int8 = amx_int8;
    h.amx_fp16 = amx_fp16;
  }
  return h;
}
#else
CpuIsa detect() { return CpuIsa{}; }
#endif

}  // namespace

std::string CpuIsa::names() const {
  std::vector<const char*> f;
  if (avx2) f.push_back("avx2");
  if (avx512) f.push_back("avx512");
  if (avx512_vnni) f.push_back("avx512_vnni");
  if (avx512_bf16) f.push_back("avx512_bf16");
  if (avx512_fp16) f.push_back("avx512_fp16");
  if (amx_tile) f.push_back("amx_tile");
  if (amx_bf16) f.push_back("amx_bf16");
  if (amx_int8) f.push_back("amx_int8");
  if (amx_fp16) f.push_back("amx_fp16");
  if (f.empty()) return "portable";
  std::string s;
  for (size_t i = 0; i < f.size(); ++i) s += (i ? "," : "") + std::string(f[i]);
  return s;
}

CpuIsa cap_cpu_isa(const CpuIsa& isa, const std::string& cap) {
  CpuIsa r = isa;
  if (cap.empty() || cap == "native") return r;
  if (cap != "portable" && cap != "avx2" && cap != "avx512")
    throw_error<ValueError>("cpu instruction-set cap '", cap,
                            "' (TL_CPU_ISA or pass config 'tl.cpu_isa') is not one of portable, avx2, avx512, native");
  // avx512 keeps F/BW/VL/DQ/CD only: no VNNI, BF16, FP16 or AMX.
  r.avx512_vnni = r.avx512_bf16 = r.avx512_fp16 = false;
  r.amx_tile = r.amx_bf16 = r.amx_int8 = r.amx_fp16 = false;
  if (cap == "avx512") return r;
  r.avx512 = false;
  if (cap == "avx2") return r;
  r.avx2 = false;
  return r;
}

const CpuIsa& host_cpu_isa() {
  static const CpuIsa isa = [] {
    CpuIsa h = detect();
    if (const char* p = std::getenv("TL_CPU_PRETEND_HOST_ISA"); p && *p) h = cap_cpu_isa(h, p);
    return h;
  }();
  return isa;
}

std::string cpu_isa_cap(const AttrMap& pass_configs) {
  std::string cap = attr_str(pass_configs, "tl.cpu_isa", "");
  if (cap.empty())
    if (const char* e = std::getenv("TL_CPU_ISA")) cap = e;
  return cap.empty() ? "native" : cap;
}

CpuIsa target_cpu_isa(const AttrMap& pass_configs) { return cap_cpu_isa(host_cpu_isa(), cpu_isa_cap(pass_configs)); }

std::string cpu_vector_width() {
  const char* e = std::getenv("TL_CPU_VECTOR_WIDTH");
  std::string w = e ? e : "";
  if (w.empty()) return "512";
  if (w != "256" && w != "512")
    throw_error<ValueError>("TL_CPU_VECTOR_WIDTH must be 256 or 512 (bits of the vectors GCC's auto-vectorizer prefers "
                            "on AVX-512 hosts), got '", w, "'");
  return w;
}

std::vector<std::string> cpu_isa_flags(const CpuIsa& isa) {
  if (!isa.x86) return {"-march=native"};
  std::vector<std::string> f = {"-march=x86-64", "-mtune=native"};
  if (isa.avx2)
    for (const char* m : {"-msse3", "-mssse3", "-msse4.1", "-msse4.2", "-mpopcnt", "-mavx", "-mavx2", "-mfma", "-mf16c"})
      f.push_back(m);
  if (isa.avx512) {
    for (const char* m : {"-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512cd"}) f.push_back(m);
    f.push_back("-mprefer-vector-width=" + cpu_vector_width());
  }
  if (isa.avx512_vnni) f.push_back("-mavx512vnni");
  if (isa.avx512_bf16) f.push_back("-mavx512bf16");
  if (isa.avx512_fp16) f.push_back("-mavx512fp16");
  if (isa.amx_tile) f.push_back("-mamx-tile");
  if (isa.amx_bf16) f.push_back("-mamx-bf16");
  if (isa.amx_int8) f.push_back("-mamx-int8");
  if (isa.intel) f.push_back("-DTL_CPU_TUNE_INTEL=1");
  return f;
}

std::string missing_cpu_features(const std::string& required, const CpuIsa& have) {
  if (required.empty() || required == "portable") return "";
  const std::string h = "," + have.names() + ",";
  std::string missing;
  std::istringstream is(required);
  for (std::string f; std::getline(is, f, ',');)
    if (!f.empty() && h.find("," + f + ",") == std::string::npos) missing += (missing.empty() ? "" : ",") + f;
  return missing;
}

}  // namespace tl
