/* Streaming (non-temporal) copies for kernels emitted for the cpu target.
 *
 * copy_stream(dst, src, n) copies n elements like a loop of plain assignments, but writes the whole
 * 64-byte lines of dst with non-temporal stores (vmovntdq): they do not read the line from memory
 * first (a plain store to a line that is not in the cache reads it, "read for ownership") and do not
 * keep it in the cache. The stage pass src/target/cpu/stream_global_stores.cc uses it for long copies
 * from a block-local buffer into global memory (a GEMM's C tile at the end of a block). Streaming
 * stores are weakly ordered: the pass puts store_fence() right after the copy, which orders them
 * before the block's later stores and atomics (and the launch's end); the same thread reads its own
 * streamed values back like any others. */
#ifndef TL_CPU_STREAM_H_
#define TL_CPU_STREAM_H_

#include <stdint.h>

#include "tl/cpu/isa.h"
#include "tl/cpu/types.h"

namespace tl {
namespace cpu {

template <typename T> inline void copy_stream(T* __restrict dst, const T* __restrict src, int64_t n) {
  char* d = reinterpret_cast<char*>(dst);
  const char* s = reinterpret_cast<const char*>(src);
  int64_t bytes = n * static_cast<int64_t>(sizeof(T));
#if defined(__x86_64__)
  /* Plain element copies up to the first 64-byte boundary of dst (whole elements: a T never
   * straddles the boundary when dst is aligned to sizeof(T), which the callers' buffers are). */
  int64_t head = static_cast<int64_t>((64 - (reinterpret_cast<uintptr_t>(d) & 63)) & 63);
  if (head % static_cast<int64_t>(sizeof(T)) != 0 || head > bytes) head = bytes;  // odd alignment: no streaming
  for (int64_t i = 0; i < head / static_cast<int64_t>(sizeof(T)); ++i) dst[i] = src[i];
  int64_t off = head;
#if TL_CPU_COMPILED_AVX512
  typedef long long V __attribute__((vector_size(64), aligned(1)));
  for (; off + 64 <= bytes; off += 64) {
    V v = *reinterpret_cast<const V*>(s + off);
    __asm__ __volatile__("vmovntdq %1, %0" : "=m"(*reinterpret_cast<V*>(d + off)) : "v"(v));
  }
#elif defined(__AVX__)
  typedef long long V __attribute__((vector_size(32), aligned(1)));
  for (; off + 64 <= bytes; off += 64) {
    V v0 = *reinterpret_cast<const V*>(s + off), v1 = *reinterpret_cast<const V*>(s + off + 32);
    __asm__ __volatile__("vmovntdq %1, %0" : "=m"(*reinterpret_cast<V*>(d + off)) : "x"(v0));
    __asm__ __volatile__("vmovntdq %1, %0" : "=m"(*reinterpret_cast<V*>(d + off + 32)) : "x"(v1));
  }
#else
  typedef long long V __attribute__((vector_size(16), aligned(1)));
  for (; off + 64 <= bytes; off += 16) {
    V v = *reinterpret_cast<const V*>(s + off);
    __asm__ __volatile__("movntdq %1, %0" : "=m"(*reinterpret_cast<V*>(d + off)) : "x"(v));
  }
#endif
  for (int64_t i = off / static_cast<int64_t>(sizeof(T)); i < n; ++i) dst[i] = src[i];
#else
  (void)d, (void)s, (void)bytes;
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
#endif
}

#if defined(__x86_64__) && TL_CPU_COMPILED_AVX512
namespace stream_impl {
typedef uint16_t Narrow16 __attribute__((vector_size(32)));
/* float32 into a 2-byte float type D: D(src[i]) one by one up to the first 64-byte line of dst and
 * after the last, and each whole line between as two `convert16` results (16 floats at s to the
 * bits of 16 D values) in one streamed store. */
template <typename D, typename Convert16>
inline void copy_stream_narrow(D* __restrict dst, const float* __restrict src, int64_t n, Convert16 convert16) {
  int64_t i = 0;
  const int64_t mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) & 63);
  if (mis % 2 == 0) {  // a 2-byte array always is; then the line boundaries fall between elements
    int64_t head = (64 - mis) % 64 / 2;
    if (head > n) head = n;
    for (; i < head; ++i) dst[i] = D(src[i]);
    typedef long long V __attribute__((vector_size(64)));
    for (; i + 32 <= n; i += 32) {
      const Narrow16 h[2] = {convert16(src + i), convert16(src + i + 16)};
      V v;
      __builtin_memcpy(&v, h, 64);
      __asm__ __volatile__("vmovntdq %1, %0" : "=m"(*reinterpret_cast<V*>(dst + i)) : "v"(v));
    }
  }
  for (; i < n; ++i) dst[i] = D(src[i]);
}
}  // namespace stream_impl
#endif

/* copy_stream from float32 into bfloat16: each element rounded as bfloat16_t(float) rounds it (to
 * nearest even; a NaN stays a NaN, quieted), 32 results per 64-byte line of dst streamed in AVX-512
 * builds (integer vector operations); plain converting stores for the ends and in builds without
 * AVX-512. Half the bytes of a float32 C: the copy-out of a GEMM whose C is bfloat16 (TileLang's
 * GEMM examples). */
inline void copy_stream(bfloat16_t* __restrict dst, const float* __restrict src, int64_t n) {
#if defined(__x86_64__) && TL_CPU_COMPILED_AVX512
  stream_impl::copy_stream_narrow(dst, src, n, [](const float* s) {
    typedef uint32_t U __attribute__((vector_size(64)));
    U x;
    __builtin_memcpy(&x, s, 64);
    const U nearest = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;  // float_to_bfloat16_bits, lane-wise
    const U quiet_nan = (x >> 16) | 0x40u;
    return __builtin_convertvector((x & 0x7fffffffu) > 0x7f800000u ? quiet_nan : nearest, stream_impl::Narrow16);
  });
#else
  for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16_t(src[i]);
#endif
}

/* copy_stream from float32 into float16: each element rounded as half_t(float) rounds it (to nearest
 * even, subnormals included, overflow to inf, a NaN quieted with its top payload bits): in AVX-512
 * builds by vcvtps2ph with the rounding in its immediate (0: nearest even, whatever MXCSR says), 32
 * results per streamed 64-byte line; plain converting stores for the ends and in other builds. The
 * copy-out of a GEMM whose C is float16. */
inline void copy_stream(half_t* __restrict dst, const float* __restrict src, int64_t n) {
#if defined(__x86_64__) && TL_CPU_COMPILED_AVX512
  stream_impl::copy_stream_narrow(dst, src, n, [](const float* s) {
    typedef float F __attribute__((vector_size(64)));
    F x;
    __builtin_memcpy(&x, s, 64);
    stream_impl::Narrow16 h;
    __asm__("vcvtps2ph $0, %1, %0" : "=v"(h) : "v"(x));
    return h;
  });
#else
  for (int64_t i = 0; i < n; ++i) dst[i] = half_t(src[i]);
#endif
}

/* dst[i] = bfloat16_t(src[i]) for i < n (to nearest even; a NaN stays a NaN, quieted), through
 * AVX512-BF16's vcvtne2ps2bf16 (32 results an instruction) where the build and the CPU have it:
 * the row conversion of src/target/cpu/convert_bf16_rows.cc (flash attention's P). That instruction
 * reads a denormal float as zero, so a block of 32 holding one (vfpclassps) is rounded element by
 * element instead; every result is then bit for bit bfloat16_t(float)'s. */
inline void convert_bf16(bfloat16_t* __restrict dst, const float* __restrict src, int64_t n) {
  int64_t i = 0;
#if defined(__x86_64__) && TL_CPU_COMPILED_AVX512_BF16
  if (isa().bf16) {
    typedef float F __attribute__((vector_size(64), aligned(4)));
    typedef short H __attribute__((vector_size(64), aligned(2)));
    for (; i + 32 <= n; i += 32) {
      const F lo = *reinterpret_cast<const F*>(src + i), hi = *reinterpret_cast<const F*>(src + i + 16);
      unsigned short dlo, dhi;  // lanes holding a denormal (class bit 5)
      __asm__("vfpclassps $0x20, %1, %0" : "=k"(dlo) : "v"(lo));
      __asm__("vfpclassps $0x20, %1, %0" : "=k"(dhi) : "v"(hi));
      if ((dlo | dhi) != 0) {
        for (int q = 0; q < 32; ++q) dst[i + q] = bfloat16_t(src[i + q]);
        continue;
      }
      H h;  // results 0..15 from lo, 16..31 from hi
      __asm__("vcvtne2ps2bf16 %2, %1, %0" : "=v"(h) : "v"(hi), "v"(lo));
      *reinterpret_cast<H*>(dst + i) = h;
    }
  }
#endif
#if TL_CPU_COMPILED_AVX2 && !defined(__clang__)  // (AVX2 builds only: an AVX-512 build has no AVX2 tier)
  /* AVX2: bfloat16_t(float)'s integer rounding 8 lanes at a time (x + 0x7fff + lsb, the high half;
   * (x >> 16) | 0x40 for a NaN, chosen by one vblendvps), 16 results packed by vpackusdw and put in
   * order by vpermq. GCC's vectorization of the scalar loop took about twice the instructions. */
  typedef int32_t I8 __attribute__((vector_size(32), aligned(4)));
  typedef uint32_t U8 __attribute__((vector_size(32)));
  typedef float F8 __attribute__((vector_size(32)));
  typedef long long Q4 __attribute__((vector_size(32), aligned(2)));
  auto round8 = [](I8 x) __attribute__((always_inline)) {
    const U8 hi = (U8)x >> 16;
    const U8 r = ((U8)x + 0x7fffu + (hi & 1u)) >> 16;
    const F8 f = (F8)x;
    return (I8)__builtin_ia32_blendvps256((F8)r, (F8)(hi | 0x40u), (F8)(f != f));
  };
  for (const int64_t nv = i + (n - i) / 16 * 16; i < nv; i += 16) {
    const I8 lo = round8(*reinterpret_cast<const I8*>(src + i)), hi = round8(*reinterpret_cast<const I8*>(src + i + 8));
    *reinterpret_cast<Q4*>(dst + i) = __builtin_ia32_permdi256((Q4)__builtin_ia32_packusdw256(lo, hi), 0xd8);
  }
#endif
  for (; i < n; ++i) dst[i] = bfloat16_t(src[i]);
}

/* Orders this thread's streaming stores before its later stores (and the launch's completion). */
inline void store_fence() {
#if defined(__x86_64__)
  __asm__ __volatile__("sfence" ::: "memory");
#endif
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_STREAM_H_
