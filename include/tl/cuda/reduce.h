// Cross-thread reductions.
//
// A fragment's thread modes (src/layout/fragment.h) describe reduction groups: the threads that
// hold parts of one output element are { base + i * kStride : 0 <= i < kExtent } for each thread
// mode being reduced. allreduce<Op, kExtent, kStride, kThreads>() combines the values of such a
// group and returns the result to every member (bit-identical in all members):
//   - when the group lies inside one warp (kExtent * kStride divides 32), with shuffles: an XOR
//     butterfly, under the active-lane mask of the warp (a block of 48 threads has a 16-lane
//     second warp, and a full mask there would hang);
//   - when it spans warps with a stride dividing 32, shuffles inside each warp, then shared memory
//     across warps;
//   - otherwise (extents that are not powers of two, strides like 48) through shared memory.
// The shared-memory forms need `ws` (kThreads elements of T) and contain __syncthreads(), so every
// thread of the block must call them together; allreduce_needs_workspace() tells which form is
// used, for the code generator to allocate `ws`.
//
// warp_allreduce_width() reduces over the first `width` lanes of a warp for any width in 1..32.
#pragma once

#include "tl/cuda/types.h"

namespace tl {

// ---------------------------------------------------------------------------------------------
// Shuffles for any value of 1, 2, 4 or 8 bytes: `shfl32` (one 32-bit shuffle) moves each 32-bit
// word of the value (an 8-byte value takes two; a smaller one travels in the low bytes of one).
template <typename T, typename Shfl32>
TL_DEVICE T shfl_words(T v, Shfl32 shfl32) {
  if constexpr (sizeof(T) == 8) {
    uint2 u = bit_cast<uint2>(v);
    u.x = shfl32(u.x);
    u.y = shfl32(u.y);
    return bit_cast<T>(u);
  } else if constexpr (sizeof(T) == 4) {
    return bit_cast<T>(shfl32(bit_cast<uint32_t>(v)));
  } else {
    uint32_t u = 0;
    memcpy(&u, &v, sizeof(T));
    u = shfl32(u);
    T r;
    memcpy(&r, &u, sizeof(T));
    return r;
  }
}
template <typename T>
TL_DEVICE T shfl_xor(uint32_t mask, T v, int lane_mask) {
  return shfl_words(v, [=](uint32_t u) { return __shfl_xor_sync(mask, u, lane_mask); });
}
template <typename T>
TL_DEVICE T shfl_down(uint32_t mask, T v, int delta) {
  return shfl_words(v, [=](uint32_t u) { return __shfl_down_sync(mask, u, delta); });
}
template <typename T>
TL_DEVICE T shfl_idx(uint32_t mask, T v, int src_lane) {
  return shfl_words(v, [=](uint32_t u) { return __shfl_sync(mask, u, src_lane); });
}

// ---------------------------------------------------------------------------------------------
// Combining operators. Max/Min follow fmaxf/fminf: a NaN operand is ignored unless both are NaN.
struct SumOp {
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    return a + b;
  }
};
struct MaxOp {
  TL_DEVICE static float apply(float a, float b) { return fmaxf(a, b); }
  TL_DEVICE static double apply(double a, double b) { return fmax(a, b); }
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    if constexpr (sizeof(T) <= 2 && !is_same<T, int8_t>::value && !is_same<T, uint8_t>::value &&
                  !is_same<T, int16_t>::value && !is_same<T, uint16_t>::value && !is_same<T, bool>::value) {
      return T(fmaxf(static_cast<float>(a), static_cast<float>(b)));  // half / bf16 / fp8
    } else {
      return a < b ? b : a;
    }
  }
};
struct MinOp {
  TL_DEVICE static float apply(float a, float b) { return fminf(a, b); }
  TL_DEVICE static double apply(double a, double b) { return fmin(a, b); }
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    if constexpr (sizeof(T) <= 2 && !is_same<T, int8_t>::value && !is_same<T, uint8_t>::value &&
                  !is_same<T, int16_t>::value && !is_same<T, uint16_t>::value && !is_same<T, bool>::value) {
      return T(fminf(static_cast<float>(a), static_cast<float>(b)));
    } else {
      return b < a ? b : a;
    }
  }
};
// max / min that return NaN when either operand is NaN (T.reduce_max / reduce_min / reduce_absmax
// with nan_propagate=True; MaxOp / MinOp skip NaNs as fmaxf does).
struct MaxOpNan {
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (fa != fa || fb != fb) return fa != fa ? a : b;
    return MaxOp::apply(a, b);
  }
};
struct MinOpNan {
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (fa != fa || fb != fb) return fa != fa ? a : b;
    return MinOp::apply(a, b);
  }
};
struct BitAndOp {
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    return a & b;
  }
};
struct BitOrOp {
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    return a | b;
  }
};
struct BitXorOp {
  template <typename T>
  TL_DEVICE static T apply(T a, T b) {
    return a ^ b;
  }
};

// ---------------------------------------------------------------------------------------------
// Which form allreduce<...> takes (the code generator mirrors this to size the workspace).
TL_HOST_DEVICE constexpr bool allreduce_in_warp(int extent, int stride) {
  return extent * stride <= 32 && 32 % (extent * stride) == 0;
}
TL_HOST_DEVICE constexpr bool allreduce_needs_workspace(int extent, int stride) {
  return extent > 1 && !allreduce_in_warp(extent, stride);
}

namespace detail {

// Butterfly over a warp-contained group (extent and stride are then powers of two).
template <typename Op, int kExtent, int kStride, typename T>
TL_DEVICE T warp_butterfly(T v, uint32_t mask) {
#pragma unroll
  for (int off = kStride; off < kExtent * kStride; off <<= 1) v = Op::apply(v, shfl_xor(mask, v, off));
  return v;
}

// Through shared memory: every member reads the group's values in the same order.
template <typename Op, int kExtent, int kStride, typename T>
TL_DEVICE T smem_allreduce(T v, int tid, T* ws) {
  ws[tid] = v;
  sync_block();
  const int base = tid - ((tid / kStride) % kExtent) * kStride;
  T r = ws[base];
#pragma unroll
  for (int i = 1; i < kExtent; ++i) r = Op::apply(r, ws[base + i * kStride]);
  sync_block();  // ws may be reused right after
  return r;
}

}  // namespace detail

// All-reduce over the group { base + i * kStride : 0 <= i < kExtent } containing thread `tid`
// (the linear thread index) in a block of kThreads threads.
template <typename Op, int kExtent, int kStride, int kThreads, typename T>
TL_DEVICE T allreduce(T v, int tid, T* ws = nullptr) {
  static_assert(kExtent >= 1 && kStride >= 1, "bad reduction group");
  if constexpr (kExtent == 1) {
    return v;
  } else if constexpr (allreduce_in_warp(kExtent, kStride)) {
    static_assert(kThreads % (kExtent * kStride) == 0, "reduction groups must not be cut by the block size");
    // A block of whole warps has no partial warp: the full mask, a constant (a computed mask makes
    // every shuffle check for divergence). TL_ALLREDUCE_MASK_AT_RUN_TIME: the mask computed as
    // before 2026-11-27, for A/B measurements (bench/gpu_hopper_variants.py flash).
#if defined(TL_ALLREDUCE_MASK_AT_RUN_TIME)
    const uint32_t mask = warp_mask_for(kThreads, tid >> 5);
#else
    const uint32_t mask = kThreads % 32 == 0 ? 0xffffffffu : warp_mask_for(kThreads, tid >> 5);
#endif
    return detail::warp_butterfly<Op, kExtent, kStride>(v, mask);
  } else if constexpr (32 % kStride == 0 && (kExtent * kStride) % 32 == 0 && kThreads % 32 == 0) {
    // Lanes of one warp first, then one value per warp through shared memory.
    constexpr int kInWarp = 32 / kStride;
    v = detail::warp_butterfly<Op, kInWarp, kStride>(v, 0xffffffffu);
    return detail::smem_allreduce<Op, kExtent / kInWarp, 32>(v, tid, ws);
  } else {
    return detail::smem_allreduce<Op, kExtent, kStride>(v, tid, ws);
  }
}

// Reduces over lanes [0, width) of the calling warp, for any width in 1..32 (lanes >= width
// contribute nothing); every lane in `mask` gets the result. `mask` must name every calling lane
// and include lanes [0, width).
template <typename Op, typename T>
TL_DEVICE T warp_allreduce_width(T v, int width, uint32_t mask = 0xffffffffu) {
  const int lane = static_cast<int>(lane_id());
#pragma unroll
  for (int off = 16; off >= 1; off >>= 1) {
    T other = shfl_down(mask, v, off);
    if (lane + off < width) v = Op::apply(v, other);
  }
  return shfl_idx(mask, v, 0);
}

}  // namespace tl
