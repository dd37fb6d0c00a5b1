/* Row reductions and scans along the contiguous dimension for kernels emitted for the cpu target
 * (the cpu lowerings of T.reduce_* and T.cumsum over the innermost dimension call these).
 *
 * The compiler does not vectorize a float reduction or a scan written as a serial loop (it may not
 * reassociate IEEE additions), so these use explicit vectors of the widest compiled width (64
 * bytes under AVX-512, 32 under AVX2, else 16: GCC's vector extension, portable to any target).
 *
 * Numerics (float32 accumulation for 16-bit sources, as in the loop forms):
 *   - sum / abssum: 4 vector accumulators of L lanes each take the elements i = 4jL + uL + l in k
 *     order; they are added lane-wise, then the L lanes pairwise (lane l with l + L/2, ...), then
 *     the remaining n % L elements in order, then the initial value (0, or dst with clear=false);
 *   - max / min / absmax: order-independent (NaN operands are ignored, as fmaxf/fminf do);
 *   - cumsum: inside each run of L elements a log-step (Hillis-Steele) prefix sum, plus the
 *     running total of the previous runs; elements past the last whole run are added one by one. */
#ifndef TL_CPU_REDUCE_H_
#define TL_CPU_REDUCE_H_

#include <stdint.h>

#include "tl/cpu/isa.h"
#include "tl/cpu/types.h"
#include "tl/cpu/vec.h"

namespace tl {
namespace cpu {

enum ReduceKind { kReduceSum = 0, kReduceMax, kReduceMin, kReduceAbsSum, kReduceAbsMax };

constexpr int kVecBytes = TL_CPU_COMPILED_AVX512 ? 64 : TL_CPU_COMPILED_AVX2 ? 32 : 16;

namespace reduce_impl {

template <typename Acc> struct bits_of;
template <> struct bits_of<float> { typedef int32_t type; };
template <> struct bits_of<double> { typedef int64_t type; };

/* L consecutive elements of T at p as a vector of Acc. */
template <typename Acc, typename T> __attribute__((always_inline)) inline typename vec<Acc, kVecBytes>::type
load_as(const T* p) {
  typedef typename vec<Acc, kVecBytes>::type V;
  constexpr int L = vec<Acc, kVecBytes>::kLanes;
  if constexpr (same_type<T, Acc>::value) {
    return vload<V>(p);
  } else if constexpr (same_type<T, bfloat16_t>::value && same_type<Acc, float>::value) {
    typedef typename vec<uint16_t, kVecBytes / 2>::type H;
    typedef typename vec<uint32_t, kVecBytes>::type U;
    U u = __builtin_convertvector(vload<H>(p), U) << 16;
    return reinterpret_cast<V&>(u);
  } else {
#if TL_CPU_COMPILED_AVX512
    if constexpr (same_type<T, half_t>::value && same_type<Acc, float>::value) {
      typedef typename vec<int16_t, 32>::type H;
      V f;
      __asm__("vcvtph2ps %1, %0" : "=v"(f) : "v"(vload<H>(p)));
      return f;
    }
#endif
    V v;
    for (int l = 0; l < L; ++l) v[l] = static_cast<Acc>(static_cast<typename compute_type<T>::type>(p[l]));
    return v;
  }
}

template <typename Acc, typename T> __attribute__((always_inline)) inline Acc load1(const T* p) {
  return static_cast<Acc>(static_cast<typename compute_type<T>::type>(*p));
}

/* a is the accumulator side and never NaN (it starts from the identity, +-inf, and only ever takes
 * non-NaN values of b), so `b > a ? b : a` ignores a NaN b (as fmaxf does) and is exactly the x86
 * vmaxps / vminps lane rule (a NaN operand yields the second one): one instruction, where the
 * two-sided NaN test took two compares and a blend. */
template <int KIND, typename V> __attribute__((always_inline)) inline V combine(V a, V b) {
  if constexpr (KIND == kReduceSum || KIND == kReduceAbsSum) {
    return a + b;
  } else if constexpr (KIND == kReduceMin) {
    return b < a ? b : a;
  } else {
    return b > a ? b : a;
  }
}

template <int KIND, typename Acc> __attribute__((always_inline)) inline Acc combine1(Acc a, Acc b) {
  if constexpr (KIND == kReduceSum || KIND == kReduceAbsSum) return a + b;
  else if constexpr (KIND == kReduceMin) return (a < b || b != b) ? a : b;
  else return (a > b || b != b) ? a : b;
}

template <int KIND, typename Acc> constexpr Acc identity() {
  if constexpr (KIND == kReduceMax) return -__builtin_inf();
  else if constexpr (KIND == kReduceMin) return __builtin_inf();
  else return Acc(0);
}

}  // namespace reduce_impl

namespace reduce_impl {

template <int... I> struct int_seq {};
template <int N, int... I> struct make_int_seq : make_int_seq<N - 1, N - 1, I...> {};
template <int... I> struct make_int_seq<0, I...> { typedef int_seq<I...> type; };

/* v with its lanes moved by S toward higher lanes (REVERSE: lower), zeros shifted in: a constant
 * two-vector shuffle (indices >= L select from the zero vector). */
template <int L, int S, bool REVERSE, typename Acc, typename V, int... I>
__attribute__((always_inline)) inline V shift_lanes(V v, int_seq<I...>) {
  const V zero = {};
#if defined(__clang__)
  return __builtin_shufflevector(v, zero, (REVERSE ? (I + S < L ? I + S : L + I) : (I >= S ? I - S : L + I))...);
#else
  typedef typename vec<typename bits_of<Acc>::type, sizeof(V)>::type M;
  const M mask = {(REVERSE ? (I + S < L ? I + S : L + I) : (I >= S ? I - S : L + I))...};
  return __builtin_shuffle(v, zero, mask);
#endif
}

/* Lane 0 of the result combines lanes 0..L-1 of v pairwise as the scalar steps did (lane l with
 * l + W, then W / 2, ...), one vector shuffle per step instead of W scalar combines. */
template <int KIND, typename Acc, int W, typename V>
__attribute__((always_inline)) inline V fold_lanes(V v) {
  constexpr int L = static_cast<int>(sizeof(V) / sizeof(Acc));
  if constexpr (W < 1) {
    return v;
  } else {
    const V moved = shift_lanes<L, W, true, Acc>(v, typename make_int_seq<L>::type());
    return fold_lanes<KIND, Acc, W / 2>(combine<KIND>(v, moved));
  }
}

}  // namespace reduce_impl

namespace reduce_impl {

/* One step of the transposing fold of reduce_rows: lane j of the result combines lanes j and j + H
 * of x where bit H of j is clear, lanes j - H and j of y where it is set. */
template <int KIND, typename Acc, int H, typename V, int... I>
__attribute__((always_inline)) inline V fold_pair(V x, V y, int_seq<I...>) {
#if defined(__clang__)
  const V lo = __builtin_shufflevector(x, y, ((I & H) ? sizeof...(I) + I - H : I)...);
  const V hi = __builtin_shufflevector(x, y, ((I & H) ? sizeof...(I) + I : I + H)...);
#else
  typedef typename vec<typename bits_of<Acc>::type, sizeof(V)>::type M;
  constexpr int L = static_cast<int>(sizeof...(I));
  const M lo_mask = {((I & H) ? L + I - H : I)...};
  const M hi_mask = {((I & H) ? L + I : I + H)...};
  const V lo = __builtin_shuffle(x, y, lo_mask), hi = __builtin_shuffle(x, y, hi_mask);
#endif
  return combine<KIND>(lo, hi);
}

/* v[0..C) (C a power of two, C <= L) folded pairwise by fold_pair with H = L/2, L/4, ...: lane j of
 * the result holds the fold of v[bit-reversed low bits of j] (lane l with l + L/2, then L/4, ...:
 * the order of fold_lanes). */
template <int KIND, typename Acc, int L, int H, int C, typename V>
__attribute__((always_inline)) inline void fold_rows(V* v) {
  if constexpr (C > 1) {
#pragma GCC unroll 16
    for (int i = 0; i < C / 2; ++i)
      v[i] = fold_pair<KIND, Acc, H>(v[2 * i], v[2 * i + 1], typename make_int_seq<L>::type());
    fold_rows<KIND, Acc, L, H / 2, C / 2>(v);
  }
}

constexpr int bit_reverse(int x, int bits) { return bits == 0 ? 0 : ((x & 1) << (bits - 1)) | bit_reverse(x >> 1, bits - 1); }
constexpr int log2_int(int x) { return x <= 1 ? 0 : 1 + log2_int(x / 2); }

}  // namespace reduce_impl

/* Reduces p[0..n) (converted to Acc) and combines the result with init. */
template <int KIND, typename T, typename Acc>
inline Acc reduce_row(const T* p, int64_t n, Acc init) {
  using namespace reduce_impl;
  typedef typename vec<Acc, kVecBytes>::type V;
  typedef typename vec<typename bits_of<Acc>::type, kVecBytes>::type VB;
  constexpr int L = vec<Acc, kVecBytes>::kLanes, U = 4;
  constexpr bool kAbs = KIND == kReduceAbsSum || KIND == kReduceAbsMax;
  const VB abs_mask = vsplat<VB>(~(typename bits_of<Acc>::type(1) << (sizeof(Acc) * 8 - 1)));
  auto prep = [&](V x) {
    if constexpr (kAbs) {
      VB b = reinterpret_cast<VB&>(x) & abs_mask;
      return reinterpret_cast<V&>(b);
    }
    return x;
  };
  V acc[U];
  for (int u = 0; u < U; ++u) acc[u] = vsplat<V>(identity<KIND, Acc>());
  int64_t i = 0;
  for (; i + U * L <= n; i += U * L)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) acc[u] = combine<KIND>(acc[u], prep(load_as<Acc>(p + i + u * L)));
  for (; i + L <= n; i += L) acc[0] = combine<KIND>(acc[0], prep(load_as<Acc>(p + i)));
  V v = combine<KIND>(combine<KIND>(acc[0], acc[1]), combine<KIND>(acc[2], acc[3]));
  Acc r = fold_lanes<KIND, Acc, L / 2>(v)[0];
  for (; i < n; ++i) {
    Acc x = load1<Acc>(p + i);
    if constexpr (kAbs) x = x < 0 ? -x : x;
    r = combine1<KIND>(r, x);
  }
  return combine1<KIND>(init, r);
}

namespace reduce_impl {

/* Inclusive prefix sum of the lanes of v (REVERSE: suffix sum), in log2(L) shift-and-add steps. */
template <bool REVERSE, typename Acc, int S = 1, typename V>
__attribute__((always_inline)) inline V scan_lanes(V v) {
  constexpr int L = static_cast<int>(sizeof(V) / sizeof(Acc));
  if constexpr (S >= L) {
    return v;
  } else {
    return scan_lanes<REVERSE, Acc, 2 * S>(v + shift_lanes<L, S, REVERSE, Acc>(v, typename make_int_seq<L>::type()));
  }
}

}  // namespace reduce_impl

/* Inclusive cumulative sum of src[0..n) into dst[0..n) (reverse: from the end); dst may be src. */
template <typename TS, typename TD>
inline void cumsum_row(const TS* src, TD* dst, int64_t n, bool reverse) {
  using namespace reduce_impl;
  typedef float Acc;
  typedef typename vec<Acc, kVecBytes>::type V;
  constexpr int L = vec<Acc, kVecBytes>::kLanes;
  auto store = [&](int64_t at, V v) {
    if constexpr (same_type<TD, Acc>::value) {
      vstore(dst + at, v);
    } else {
      for (int l = 0; l < L; ++l) dst[at + l] = TD(v[l]);
    }
  };
  Acc carry = 0;
  if (!reverse) {
    int64_t i = 0;
    for (; i + L <= n; i += L) {
      V v = scan_lanes<false, Acc>(load_as<Acc>(src + i)) + carry;
      carry = v[L - 1];
      store(i, v);
    }
    for (; i < n; ++i) {
      carry += load1<Acc>(src + i);
      dst[i] = TD(carry);
    }
  } else {
    int64_t i = n;
    for (; i - L >= 0; i -= L) {
      V v = scan_lanes<true, Acc>(load_as<Acc>(src + i - L)) + carry;
      carry = v[0];
      store(i - L, v);
    }
    for (; i > 0; --i) {
      carry += load1<Acc>(src + i - 1);
      dst[i - 1] = TD(carry);
    }
  }
}

/* dst[r] = reduce_row(p + r * ld, n, clear ? identity : dst[r]) for r < rows, with the same
 * result for every element (the same combines in the same order), L rows at a time where n is a
 * whole number of vectors: each row's vectors are combined as in reduce_row, then the L row vectors
 * are folded together by two-vector shuffles (lane j of the folded vector combines lanes j and
 * j + L/2 of one row where bit L/2 of j is clear, of the next where it is set; four such steps for
 * 16 lanes leave row r's total in one lane), so the L totals take 2 (L - 1) shuffles instead of
 * L log2 L, and are stored as one vector. The row loop of the cpu T.reduce lowering, where the
 * reduced dimension is the innermost one and dst holds the accumulator type contiguously. */
template <int KIND, typename T, typename Acc>
inline void reduce_rows(const T* p, int64_t ld, int64_t n, int64_t rows, Acc* dst, bool clear) {
  using namespace reduce_impl;
  typedef typename vec<Acc, kVecBytes>::type V;
  typedef typename vec<typename bits_of<Acc>::type, kVecBytes>::type VB;
  constexpr int L = vec<Acc, kVecBytes>::kLanes, U = 4, LB = log2_int(L);
  constexpr bool kAbs = KIND == kReduceAbsSum || KIND == kReduceAbsMax;
  int64_t r0 = 0;
  if (n >= L && n % L == 0) {
    const VB abs_mask = vsplat<VB>(~(typename bits_of<Acc>::type(1) << (sizeof(Acc) * 8 - 1)));
    auto prep = [&](V x) {
      if constexpr (kAbs) {
        VB b = reinterpret_cast<VB&>(x) & abs_mask;
        return reinterpret_cast<V&>(b);
      }
      return x;
    };
    for (; r0 + L <= rows; r0 += L) {
      V v[L];
#pragma GCC unroll 16
      for (int r = 0; r < L; ++r) {
        const T* row = p + (r0 + r) * ld;
        V acc[U];
#pragma GCC unroll 4
        for (int u = 0; u < U; ++u) acc[u] = vsplat<V>(identity<KIND, Acc>());
        int64_t i = 0;
        for (; i + U * L <= n; i += U * L)
#pragma GCC unroll 4
          for (int u = 0; u < U; ++u) acc[u] = combine<KIND>(acc[u], prep(load_as<Acc>(row + i + u * L)));
        for (; i < n; i += L) acc[0] = combine<KIND>(acc[0], prep(load_as<Acc>(row + i)));
        v[bit_reverse(r, LB)] = combine<KIND>(combine<KIND>(acc[0], acc[1]), combine<KIND>(acc[2], acc[3]));
      }
      fold_rows<KIND, Acc, L, L / 2, L>(v);
      V out = v[0];
      if (!clear) {  // combine1(init, total) lane by lane
        const V init = vload<V>(dst + r0);
        if constexpr (KIND == kReduceSum || KIND == kReduceAbsSum) out = init + out;
        else if constexpr (KIND == kReduceMin) out = (init < out || out != out) ? init : out;
        else out = (init > out || out != out) ? init : out;
      } else if constexpr (KIND == kReduceSum || KIND == kReduceAbsSum) {
        out = Acc(0) + out;
      } else {
        const V init = vsplat<V>(identity<KIND, Acc>());
        if constexpr (KIND == kReduceMin) out = (init < out || out != out) ? init : out;
        else out = (init > out || out != out) ? init : out;
      }
      vstore(dst + r0, out);
    }
  }
  for (; r0 < rows; ++r0) dst[r0] = reduce_row<KIND>(p + r0 * ld, n, clear ? identity<KIND, Acc>() : dst[r0]);
}

}  // namespace cpu
}  // namespace tl

#endif  // TL_CPU_REDUCE_H_
