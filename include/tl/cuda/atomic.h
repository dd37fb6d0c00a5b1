// Atomic read-modify-write on global or shared memory (generic addresses). Every function
// returns the previous value. fp16 adds use the native f16 atomic (sm_70+); bf16 adds use the
// native one on sm_90 and a compare-and-swap loop on the enclosing 32-bit word before that.
// Float max/min, 16-bit integer and all 8-bit atomics use compare-and-swap (there is no native one).
#pragma once

#include "tl/cuda/types.h"

namespace tl {

TL_DEVICE float atomic_add(float* addr, float v) { return atomicAdd(addr, v); }
TL_DEVICE double atomic_add(double* addr, double v) { return atomicAdd(addr, v); }
TL_DEVICE int32_t atomic_add(int32_t* addr, int32_t v) { return atomicAdd(addr, v); }
TL_DEVICE uint32_t atomic_add(uint32_t* addr, uint32_t v) { return atomicAdd(addr, v); }
TL_DEVICE int64_t atomic_add(int64_t* addr, int64_t v) {
  return static_cast<int64_t>(
      atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v)));
}
TL_DEVICE uint64_t atomic_add(uint64_t* addr, uint64_t v) {
  return atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
}

TL_DEVICE half_t atomic_add(half_t* addr, half_t v) {
  half_t old;
  asm volatile("atom.add.noftz.f16 %0, [%1], %2;" : "=h"(old.bits) : "l"(addr), "h"(v.bits) : "memory");
  return old;
}

// The aligned 32-bit word holding the 8- or 16-bit value at `addr` (U = uint8_t / uint16_t, naturally
// aligned), and in *shift the value's bit offset inside it.
template <typename U>
TL_DEVICE uint32_t* narrow_word(U* addr, uint32_t* shift) {
  static_assert(sizeof(U) == 1 || sizeof(U) == 2, "narrow atomics are 8 or 16 bits");
  *shift = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(addr) & (4u - sizeof(U))) * 8u;
  return reinterpret_cast<uint32_t*>(reinterpret_cast<uintptr_t>(addr) & ~uintptr_t(3));
}

// Replaces the 8- or 16-bit value at `addr` inside its 32-bit word with f(old) atomically, by
// compare-and-swap on the word; returns the old value.
template <typename U, typename F>
TL_DEVICE U atomic_update_narrow(U* addr, F f) {
  constexpr uint32_t kMask = sizeof(U) == 1 ? 0xffu : 0xffffu;
  uint32_t shift;
  uint32_t* word = narrow_word(addr, &shift);
  uint32_t old = *word, assumed;
  do {
    assumed = old;
    U cur = static_cast<U>((assumed >> shift) & kMask);
    uint32_t next = (assumed & ~(kMask << shift)) | (static_cast<uint32_t>(f(cur)) << shift);
    old = atomicCAS(word, assumed, next);
  } while (old != assumed);
  return static_cast<U>((old >> shift) & kMask);
}
template <typename F>
TL_DEVICE uint16_t atomic_update16(uint16_t* addr, F f) { return atomic_update_narrow(addr, f); }
template <typename F>
TL_DEVICE uint8_t atomic_update8(uint8_t* addr, F f) { return atomic_update_narrow(addr, f); }

TL_DEVICE bfloat16_t atomic_add(bfloat16_t* addr, bfloat16_t v) {
#if TL_ARCH >= 900
  bfloat16_t old;
  asm volatile("atom.add.noftz.bf16 %0, [%1], %2;" : "=h"(old.bits) : "l"(addr), "h"(v.bits) : "memory");
  return old;
#else
  uint16_t old = atomic_update16(reinterpret_cast<uint16_t*>(addr),
                                 [v](uint16_t cur) { return (bfloat16_t::from_bits(cur) + v).bits; });
  return bfloat16_t::from_bits(old);
#endif
}

// Packed pairs: two adjacent 16-bit values (4-byte aligned) in one atomic.
TL_DEVICE uint32_t atomic_add_f16x2(half_t* addr, uint32_t packed) {
  uint32_t old;
  asm volatile("atom.add.noftz.f16x2 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(packed) : "memory");
  return old;
}
#if TL_ARCH >= 900
TL_DEVICE uint32_t atomic_add_bf16x2(bfloat16_t* addr, uint32_t packed) {
  uint32_t old;
  asm volatile("atom.add.noftz.bf16x2 %0, [%1], %2;" : "=r"(old) : "l"(addr), "r"(packed) : "memory");
  return old;
}
// Vector float adds to global memory (sm_90+): no return value.
TL_DEVICE void red_add_f32x2(float* addr, float a, float b) {
  asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(addr), "f"(a), "f"(b) : "memory");
}
TL_DEVICE void red_add_f32x4(float* addr, float a, float b, float c, float d) {
  asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(addr), "f"(a), "f"(b), "f"(c), "f"(d)
               : "memory");
}
#endif

// Max / min. Integers: native. Floats: CAS on the bit pattern (NaN handling as fmaxf/fminf).
TL_DEVICE int32_t atomic_max(int32_t* addr, int32_t v) { return atomicMax(addr, v); }
TL_DEVICE uint32_t atomic_max(uint32_t* addr, uint32_t v) { return atomicMax(addr, v); }
TL_DEVICE int32_t atomic_min(int32_t* addr, int32_t v) { return atomicMin(addr, v); }
TL_DEVICE uint32_t atomic_min(uint32_t* addr, uint32_t v) { return atomicMin(addr, v); }
TL_DEVICE float atomic_max(float* addr, float v) {
  uint32_t* w = reinterpret_cast<uint32_t*>(addr);
  uint32_t old = *w, assumed;
  do {
    assumed = old;
    float next = fmaxf(__uint_as_float(assumed), v);
    if (__float_as_uint(next) == assumed) break;
    old = atomicCAS(w, assumed, __float_as_uint(next));
  } while (old != assumed);
  return __uint_as_float(old);
}
TL_DEVICE float atomic_min(float* addr, float v) {
  uint32_t* w = reinterpret_cast<uint32_t*>(addr);
  uint32_t old = *w, assumed;
  do {
    assumed = old;
    float next = fminf(__uint_as_float(assumed), v);
    if (__float_as_uint(next) == assumed) break;
    old = atomicCAS(w, assumed, __float_as_uint(next));
  } while (old != assumed);
  return __uint_as_float(old);
}
TL_DEVICE half_t atomic_max(half_t* addr, half_t v) {
  return half_t::from_bits(atomic_update16(reinterpret_cast<uint16_t*>(addr), [v](uint16_t cur) {
    return half_t(fmaxf(static_cast<float>(half_t::from_bits(cur)), static_cast<float>(v))).bits;
  }));
}
TL_DEVICE half_t atomic_min(half_t* addr, half_t v) {
  return half_t::from_bits(atomic_update16(reinterpret_cast<uint16_t*>(addr), [v](uint16_t cur) {
    return half_t(fminf(static_cast<float>(half_t::from_bits(cur)), static_cast<float>(v))).bits;
  }));
}
TL_DEVICE bfloat16_t atomic_max(bfloat16_t* addr, bfloat16_t v) {
  return bfloat16_t::from_bits(atomic_update16(reinterpret_cast<uint16_t*>(addr), [v](uint16_t cur) {
    return bfloat16_t(fmaxf(static_cast<float>(bfloat16_t::from_bits(cur)), static_cast<float>(v))).bits;
  }));
}
TL_DEVICE bfloat16_t atomic_min(bfloat16_t* addr, bfloat16_t v) {
  return bfloat16_t::from_bits(atomic_update16(reinterpret_cast<uint16_t*>(addr), [v](uint16_t cur) {
    return bfloat16_t(fminf(static_cast<float>(bfloat16_t::from_bits(cur)), static_cast<float>(v))).bits;
  }));
}

// 8- and 16-bit integers: no native atomic; compare-and-swap on the enclosing 32-bit word (adds
// wrap). S / U: the signed and the unsigned element type of one width.
#define TL_CUDA_NARROW_INT_ATOMICS(S, U)                                                              \
  TL_DEVICE S atomic_add(S* addr, S v) {                                                              \
    return static_cast<S>(atomic_update_narrow(reinterpret_cast<U*>(addr),                            \
                                               [v](U cur) { return static_cast<U>(cur + static_cast<U>(v)); })); \
  }                                                                                                   \
  TL_DEVICE U atomic_add(U* addr, U v) {                                                              \
    return atomic_update_narrow(addr, [v](U cur) { return static_cast<U>(cur + v); });                \
  }                                                                                                   \
  TL_DEVICE S atomic_max(S* addr, S v) {                                                              \
    return static_cast<S>(atomic_update_narrow(reinterpret_cast<U*>(addr), [v](U cur) {               \
      return static_cast<U>(static_cast<S>(cur) > v ? static_cast<S>(cur) : v);                       \
    }));                                                                                              \
  }                                                                                                   \
  TL_DEVICE S atomic_min(S* addr, S v) {                                                              \
    return static_cast<S>(atomic_update_narrow(reinterpret_cast<U*>(addr), [v](U cur) {               \
      return static_cast<U>(static_cast<S>(cur) < v ? static_cast<S>(cur) : v);                       \
    }));                                                                                              \
  }                                                                                                   \
  TL_DEVICE U atomic_max(U* addr, U v) {                                                              \
    return atomic_update_narrow(addr, [v](U cur) { return cur > v ? cur : v; });                      \
  }                                                                                                   \
  TL_DEVICE U atomic_min(U* addr, U v) {                                                              \
    return atomic_update_narrow(addr, [v](U cur) { return cur < v ? cur : v; });                      \
  }
TL_CUDA_NARROW_INT_ATOMICS(int16_t, uint16_t)
TL_CUDA_NARROW_INT_ATOMICS(int8_t, uint8_t)
#undef TL_CUDA_NARROW_INT_ATOMICS

// fp8: no native atomic either; fp8 adds are computed in float and rounded once (as a store would),
// fp8 max/min compare in float with fmaxf/fminf's NaN handling and store the winner unchanged.
#define TL_CUDA_FP8_ATOMICS(T)                                                                        \
  TL_DEVICE T atomic_add(T* addr, T v) {                                                              \
    const float fv = static_cast<float>(v);                                                           \
    return T::from_bits(atomic_update8(&addr->bits, [fv](uint8_t cur) {                               \
      return T(static_cast<float>(T::from_bits(cur)) + fv).bits;                                      \
    }));                                                                                              \
  }                                                                                                   \
  TL_DEVICE T atomic_max(T* addr, T v) {                                                              \
    return T::from_bits(atomic_update8(&addr->bits, [v](uint8_t cur) {                                \
      const float c = static_cast<float>(T::from_bits(cur)), w = static_cast<float>(v);               \
      return fmaxf(c, w) == c ? cur : v.bits;                                                          \
    }));                                                                                              \
  }                                                                                                   \
  TL_DEVICE T atomic_min(T* addr, T v) {                                                              \
    return T::from_bits(atomic_update8(&addr->bits, [v](uint8_t cur) {                                \
      const float c = static_cast<float>(T::from_bits(cur)), w = static_cast<float>(v);               \
      return fminf(c, w) == c ? cur : v.bits;                                                          \
    }));                                                                                              \
  }
TL_CUDA_FP8_ATOMICS(fp8_e4m3_t)
TL_CUDA_FP8_ATOMICS(fp8_e5m2_t)
#undef TL_CUDA_FP8_ATOMICS

TL_DEVICE int64_t atomic_max(int64_t* addr, int64_t v) {
  return atomicMax(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
}
TL_DEVICE uint64_t atomic_max(uint64_t* addr, uint64_t v) {
  return atomicMax(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
}
TL_DEVICE int64_t atomic_min(int64_t* addr, int64_t v) {
  return atomicMin(reinterpret_cast<long long*>(addr), static_cast<long long>(v));
}
TL_DEVICE uint64_t atomic_min(uint64_t* addr, uint64_t v) {
  return atomicMin(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
}
TL_DEVICE double atomic_max(double* addr, double v) {
  unsigned long long* w = reinterpret_cast<unsigned long long*>(addr);
  unsigned long long old = *w, assumed;
  do {
    assumed = old;
    double next = fmax(__longlong_as_double(static_cast<long long>(assumed)), v);
    unsigned long long nb = static_cast<unsigned long long>(__double_as_longlong(next));
    if (nb == assumed) break;
    old = atomicCAS(w, assumed, nb);
  } while (old != assumed);
  return __longlong_as_double(static_cast<long long>(old));
}
TL_DEVICE double atomic_min(double* addr, double v) {
  unsigned long long* w = reinterpret_cast<unsigned long long*>(addr);
  unsigned long long old = *w, assumed;
  do {
    assumed = old;
    double next = fmin(__longlong_as_double(static_cast<long long>(assumed)), v);
    unsigned long long nb = static_cast<unsigned long long>(__double_as_longlong(next));
    if (nb == assumed) break;
    old = atomicCAS(w, assumed, nb);
  } while (old != assumed);
  return __longlong_as_double(static_cast<long long>(old));
}

// T.atomic_load / T.atomic_store with a C++ memory order (0 relaxed, 1 consume, 2 acquire,
// 3 release, 4 acq_rel, 5 seq_cst): a volatile access of the value's bits (never torn, never
// cached in a register) ordered by __threadfence() where the order asks for it.
template <int Size> struct atomic_bits;
template <> struct atomic_bits<1> { using type = uint8_t; };
template <> struct atomic_bits<2> { using type = uint16_t; };
template <> struct atomic_bits<4> { using type = uint32_t; };
template <> struct atomic_bits<8> { using type = unsigned long long; };

template <int Order, typename T>
TL_DEVICE T atomic_load(const T* addr) {
  using U = typename atomic_bits<sizeof(T)>::type;
  if (Order == 5) __threadfence();
  U b = *reinterpret_cast<const volatile U*>(addr);
  if (Order != 0) __threadfence();
  return bit_cast<T>(b);
}
template <int Order, typename T>
TL_DEVICE void atomic_store(T* addr, T v) {
  using U = typename atomic_bits<sizeof(T)>::type;
  if (Order != 0) __threadfence();
  *reinterpret_cast<volatile U*>(addr) = bit_cast<U>(v);
  if (Order == 5) __threadfence();
}

// Bitwise or / and / xor on integer elements (T.atomic_or / atomic_and / atomic_xor). 32- and 64-bit:
// the native atomics. 8- and 16-bit: the native 32-bit atomic on the enclosing aligned word, with the
// operand placed at the element's bits and the other bits left alone (0 for or/xor, 1 for and), so no
// compare-and-swap loop is needed.
#define TL_CUDA_BITWISE_ATOMIC(NAME, NATIVE, KEEP)                                                      \
  TL_DEVICE int32_t NAME(int32_t* addr, int32_t v) { return NATIVE(addr, v); }                        \
  TL_DEVICE uint32_t NAME(uint32_t* addr, uint32_t v) { return NATIVE(addr, v); }                     \
  TL_DEVICE uint64_t NAME(uint64_t* addr, uint64_t v) {                                               \
    return NATIVE(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));   \
  }                                                                                                   \
  TL_DEVICE int64_t NAME(int64_t* addr, int64_t v) {                                                  \
    return static_cast<int64_t>(NAME(reinterpret_cast<uint64_t*>(addr), static_cast<uint64_t>(v)));   \
  }                                                                                                   \
  template <typename U>                                                                               \
  TL_DEVICE U NAME##_narrow(U* addr, U v) {                                                           \
    constexpr uint32_t kMask = sizeof(U) == 1 ? 0xffu : 0xffffu;                                      \
    uint32_t shift;                                                                                   \
    uint32_t* word = narrow_word(addr, &shift);                                                       \
    uint32_t operand = (static_cast<uint32_t>(v) & kMask) << shift;                                   \
    if (KEEP) operand |= ~(kMask << shift);                                                           \
    return static_cast<U>((NATIVE(word, operand) >> shift) & kMask);                                  \
  }                                                                                                   \
  TL_DEVICE uint16_t NAME(uint16_t* addr, uint16_t v) { return NAME##_narrow(addr, v); }              \
  TL_DEVICE uint8_t NAME(uint8_t* addr, uint8_t v) { return NAME##_narrow(addr, v); }                 \
  TL_DEVICE int16_t NAME(int16_t* addr, int16_t v) {                                                  \
    return static_cast<int16_t>(NAME##_narrow(reinterpret_cast<uint16_t*>(addr), static_cast<uint16_t>(v))); \
  }                                                                                                   \
  TL_DEVICE int8_t NAME(int8_t* addr, int8_t v) {                                                     \
    return static_cast<int8_t>(NAME##_narrow(reinterpret_cast<uint8_t*>(addr), static_cast<uint8_t>(v)));    \
  }
TL_CUDA_BITWISE_ATOMIC(atomic_or, atomicOr, false)
TL_CUDA_BITWISE_ATOMIC(atomic_and, atomicAnd, true)
TL_CUDA_BITWISE_ATOMIC(atomic_xor, atomicXor, false)
#undef TL_CUDA_BITWISE_ATOMIC

}  // namespace tl
