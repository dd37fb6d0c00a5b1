/* Which vector instruction set the cpu kernels run with.
 *
 * Kernels are built with -march=native, so the compiler's predefined macros say which tiers of
 * the tile routines (gemm.h, vec.h) exist in the object: the widest one the build machine has
 * (AVX-512, else AVX2+FMA) plus the portable tier (16-byte vectors of GCC's vector extension:
 * SSE2 on any x86-64, NEON elsewhere), which is always compiled. At the first call the tier is
 * picked from what was compiled, what the CPU running the kernel reports (cpuid, and xgetbv for
 * the operating system's support of the vector registers), and the environment variable
 *
 *     TL_CPU_ISA = portable | avx2 | avx512 | native (default)
 *
 * which can only lower the tier (tests force the portable path with it; it is read once per
 * loaded kernel; the compiler also reads it, so a kernel compiled under it lacks the higher tiers
 * altogether). AVX512_BF16 (vdpbf16ps), AVX512_VNNI (vpdpbusd) and AMX tiles are used by the AVX-512
 * tier only when the CPU has them and TL_CPU_ISA is unset or native.
 * The data cache sizes (cpuid leaf 4 / 0x8000001D) set the GEMM's k blocking.
 *
 * Lean on purpose: only <stdint.h> and <stdlib.h> (getenv). */
#ifndef TL_CPU_ISA_H_
#define TL_CPU_ISA_H_

#include <stdint.h>
#include <stdlib.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__AVX512F__) && defined(__AVX512BW__) && \
    defined(__AVX512VL__) && defined(__AVX512DQ__) && !defined(TL_CPU_NO_AVX512)
#define TL_CPU_COMPILED_AVX512 1
#else
#define TL_CPU_COMPILED_AVX512 0
#endif
#if (defined(__x86_64__) || defined(__i386__)) && defined(__AVX2__) && defined(__FMA__) && !TL_CPU_COMPILED_AVX512 && \
    !defined(TL_CPU_NO_AVX2)
#define TL_CPU_COMPILED_AVX2 1
#else
#define TL_CPU_COMPILED_AVX2 0
#endif
/* Tuning for Intel cores, set by the compiler on an Intel host (src/target/cpu/host_isa.cc, next to
 * -mtune=native): defaults that measured differently on Intel and AMD cores (the GEMV's prefetch,
 * gemm.h). Never a correctness matter. */
#ifndef TL_CPU_TUNE_INTEL
#define TL_CPU_TUNE_INTEL 0
#endif
#if TL_CPU_COMPILED_AVX512 && defined(__AVX512BF16__)
#define TL_CPU_COMPILED_AVX512_BF16 1
#else
#define TL_CPU_COMPILED_AVX512_BF16 0
#endif
#if TL_CPU_COMPILED_AVX512 && defined(__AVX512VNNI__)
#define TL_CPU_COMPILED_AVX512_VNNI 1
#else
#define TL_CPU_COMPILED_AVX512_VNNI 0
#endif

/* AMX tiles: compiled only when the kernel is built with -mamx-tile and -mamx-bf16 / -mamx-int8,
 * which the compiler adds only when the host reported AMX and the OS granted the tile state
 * (src/target/cpu/host_isa.cc); still checked at run time (cpuid, xgetbv, arch_prctl). */
#if TL_CPU_COMPILED_AVX512 && defined(__x86_64__) && defined(__AMX_TILE__) && defined(__AMX_BF16__) && \
    !defined(TL_CPU_NO_AMX)
#define TL_CPU_COMPILED_AMX_BF16 1
#else
#define TL_CPU_COMPILED_AMX_BF16 0
#endif
#if TL_CPU_COMPILED_AVX512 && defined(__x86_64__) && defined(__AMX_TILE__) && defined(__AMX_INT8__) && \
    !defined(TL_CPU_NO_AMX)
#define TL_CPU_COMPILED_AMX_INT8 1
#else
#define TL_CPU_COMPILED_AMX_INT8 0
#endif
#if TL_CPU_COMPILED_AMX_BF16 || TL_CPU_COMPILED_AMX_INT8
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace tl {
namespace cpu {

enum IsaLevel { kIsaPortable = 0, kIsaAvx2 = 1, kIsaAvx512 = 2 };

struct HostIsa {
  bool avx2_fma = false;  // AVX2 + FMA + F16C, with the OS saving ymm state
  bool avx512 = false;    // AVX-512 F/BW/VL/DQ, with the OS saving zmm state
  bool avx512_bf16 = false;
  bool avx512_vnni = false;
  bool amx_bf16 = false;  // AMX-TILE + AMX-BF16, OS tile state on, permission granted
  bool amx_int8 = false;  // AMX-TILE + AMX-INT8, likewise
  int l1d_bytes = 32 * 1024;  // per core; defaults when cpuid does not say
  int l2_bytes = 1024 * 1024;
};

/* Data cache sizes from the deterministic cache parameters (cpuid leaf 4 on Intel, 0x8000001D on
 * AMD: the same layout). */
inline void detect_caches(HostIsa* h) {
#if defined(__x86_64__) || defined(__i386__)
  uint32_t a, b, c, d;
  __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0u), "c"(0u));
  const bool intel = b == 0x756e6547u && d == 0x49656e69u && c == 0x6c65746eu;  // "GenuineIntel"
  uint32_t leaf = 4;
  if (!intel) {
    __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0u));
    if (a < 0x8000001du) return;
    leaf = 0x8000001du;
  }
  for (uint32_t sub = 0; sub < 8; ++sub) {
    __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(sub));
    const uint32_t type = a & 0x1fu, level = (a >> 5) & 0x7u;
    if (type == 0) break;
    const long long bytes = (long long)((b >> 22) + 1) * (((b >> 12) & 0x3ffu) + 1) * ((b & 0xfffu) + 1) * (c + 1ull);
    if (bytes <= 0 || bytes > (1ll << 30)) continue;
    if (level == 1 && type == 1) h->l1d_bytes = static_cast<int>(bytes);
    if (level == 2 && (type == 1 || type == 3)) h->l2_bytes = static_cast<int>(bytes);
  }
#else
  (void)h;
#endif
}

inline HostIsa detect_host_isa() {
  HostIsa h;
  detect_caches(&h);
#if defined(__x86_64__) || defined(__i386__)
  uint32_t a, b, c, d;
  __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0u), "c"(0u));
  const uint32_t max_leaf = a;
  __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1u), "c"(0u));
  const bool fma = (c >> 12) & 1u, osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u, f16c = (c >> 29) & 1u;
  if (!osxsave || !avx || max_leaf < 7) return h;
  uint32_t xlo, xhi;
  __asm__ __volatile__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0u));
  const bool os_ymm = (xlo & 0x6u) == 0x6u;      // SSE and AVX state
  const bool os_zmm = (xlo & 0xe6u) == 0xe6u;    // ... and opmask, ZMM_Hi256, Hi16_ZMM
  __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7u), "c"(0u));
  const bool avx2 = (b >> 5) & 1u;
  const bool f512 = (b >> 16) & 1u, dq = (b >> 17) & 1u, bw = (b >> 30) & 1u, vl = (b >> 31) & 1u;
  const uint32_t max_sub7 = a;
  const bool vnni = (c >> 11) & 1u;
  h.avx2_fma = os_ymm && avx2 && fma && f16c;
  h.avx512 = h.avx2_fma && os_zmm && f512 && dq && bw && vl;
  h.avx512_vnni = h.avx512 && vnni;
  const bool amx_bf16 = (d >> 22) & 1u, amx_tile = (d >> 24) & 1u, amx_int8 = (d >> 25) & 1u;
  if (h.avx512 && max_sub7 >= 1) {
    __asm__ __volatile__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7u), "c"(1u));
    h.avx512_bf16 = (a >> 5) & 1u;
  }
#if TL_CPU_COMPILED_AMX_BF16 || TL_CPU_COMPILED_AMX_INT8
  /* XTILECFG and XTILEDATA enabled by the OS, and (Linux >= 5.16) this process's permission for the
   * tile data state: without it the first tile instruction raises SIGILL. */
  if (h.avx512 && amx_tile && ((xlo >> 17) & 3u) == 3u) {
    const long kArchGetXcompPerm = 0x1022, kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    unsigned long bitmask = 0;
    if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0 &&
        syscall(SYS_arch_prctl, kArchGetXcompPerm, &bitmask) == 0 && ((bitmask >> kXfeatureXtiledata) & 1ul)) {
      h.amx_bf16 = amx_bf16;
      h.amx_int8 = amx_int8;
    }
  }
#else
  (void)amx_bf16, (void)amx_tile, (void)amx_int8;
#endif
#endif
  return h;
}

/* The tier this kernel runs with: compiled, supported by the CPU, and allowed by TL_CPU_ISA. */
struct IsaChoice {
  int level;
  bool bf16;  // vdpbf16ps in the AVX-512 tier
  bool vnni;  // vpdpbusd in the AVX-512 tier
  bool amx_bf16, amx_int8;  // AMX tiles (only with TL_CPU_ISA unset or native)
  int l1d_bytes, l2_bytes;
};

inline IsaChoice choose_isa() {
  HostIsa h = detect_host_isa();
  int level = TL_CPU_COMPILED_AVX512 ? kIsaAvx512 : TL_CPU_COMPILED_AVX2 ? kIsaAvx2 : kIsaPortable;
  if (level >= kIsaAvx512 && !h.avx512) level = kIsaAvx2;
  if (level >= kIsaAvx2 && !h.avx2_fma) level = kIsaPortable;
  if (level == kIsaAvx2 && !TL_CPU_COMPILED_AVX2) level = kIsaPortable;  // an AVX-512 build has no AVX2 tier
  bool capped = false;
  if (const char* env = getenv("TL_CPU_ISA")) {
    capped = !(env[0] == 0 || (env[0] == 'n' && env[1] == 'a' && env[2] == 't' && env[3] == 'i' && env[4] == 'v' &&
                               env[5] == 'e' && env[6] == 0));
    int cap = level;
    const char* e = env;
    auto is = [e](const char* s) {
      const char* p = e;
      while (*s && *p == *s) ++p, ++s;
      return *s == 0 && *p == 0;
    };
    if (is("portable")) cap = kIsaPortable;
    else if (is("avx2")) cap = kIsaAvx2;
    if (cap < level) level = cap;
    if (level == kIsaAvx2 && !TL_CPU_COMPILED_AVX2) level = kIsaPortable;
  }
  IsaChoice c;
  c.level = level;
  c.bf16 = level == kIsaAvx512 && TL_CPU_COMPILED_AVX512_BF16 && h.avx512_bf16 && !capped;
  c.vnni = level == kIsaAvx512 && TL_CPU_COMPILED_AVX512_VNNI && h.avx512_vnni && !capped;
  c.amx_bf16 = level == kIsaAvx512 && TL_CPU_COMPILED_AMX_BF16 && h.amx_bf16 && !capped;
  c.amx_int8 = level == kIsaAvx512 && TL_CPU_COMPILED_AMX_INT8 && h.amx_int8 && !capped;
  c.l1d_bytes = h.l1d_bytes;
  c.l2_bytes = h.l2_bytes;
  return c;
}

/* Decided once per loaded kernel (a function-local static: thread-safe, one load afterwards). */
inline const IsaChoice& isa() {
  static const IsaChoice choice = choose_isa();
  return choice;
}

inline const char* isa_name() {
  const IsaChoice& c = isa();
  if (c.level == kIsaAvx512) {
    if (c.amx_bf16 || c.amx_int8) return c.bf16 ? (c.vnni ? "avx512+bf16+vnni+amx" : "avx512+bf16+amx") : "avx512+amx";
    if (c.bf16) return c.vnni ? "avx512+bf16+vnni" : "avx512+bf16";
    return c.vnni ? "avx512+vnni" : "avx512";
  }
  if (c.level == kIsaAvx2) return "avx2";
  return "portable";
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_ISA_H_
