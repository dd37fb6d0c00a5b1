// Warp-level tensor-core instructions (mma.sync, sm_80+). Each function is one PTX instruction;
// operands are the per-thread fragments of the PTX ISA (src/layout/mma_layout.h builds the same
// layouts as IR, and tests/cpp/layout checks them against the ISA tables).
//
//   shape      A / B types        C / D      per-thread registers (A, B, C)
//   m16n8k16   f16, bf16          f32        4 x b32, 2 x b32, 4 x f32
//   m16n8k16   f16                f16        4 x b32, 2 x b32, 2 x b32 (f16x2)
//   m16n8k8    tf32               f32        4 x b32, 2 x b32, 4 x f32
//   m16n8k32   s8/u8              s32        4 x b32, 2 x b32, 4 x s32
//   m16n8k32   e4m3/e5m2 (sm_89+) f32        4 x b32, 2 x b32, 4 x f32
//
// A is row-major (M x K), B column-major (K x N): the ".row.col" form, the only one these shapes
// have; a transposed operand is handled by how the fragment is loaded (ldmatrix .trans).
#pragma once

#include "tl/cuda/types.h"

namespace tl {

// D (4 x f32) = A (4 x b32) * B (2 x b32) + C (4 x f32); SHAPE and the A / B types vary.
#define TL_MMA_F32(NAME, SHAPE, AT, BT)                                                           \
  TL_DEVICE void NAME(float* d, const uint32_t* a, const uint32_t* b, const float* c) {           \
    asm volatile("mma.sync.aligned." SHAPE ".row.col.f32." AT "." BT                              \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                \
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), \
                   "f"(c[1]), "f"(c[2]), "f"(c[3]));                                             \
  }
TL_MMA_F32(mma_m16n8k16_f16f16f32, "m16n8k16", "f16", "f16")
TL_MMA_F32(mma_m16n8k16_bf16bf16f32, "m16n8k16", "bf16", "bf16")
TL_MMA_F32(mma_m16n8k8_tf32tf32f32, "m16n8k8", "tf32", "tf32")
#if TL_ARCH >= 890
TL_MMA_F32(mma_m16n8k32_e4m3e4m3f32, "m16n8k32", "e4m3", "e4m3")
TL_MMA_F32(mma_m16n8k32_e5m2e5m2f32, "m16n8k32", "e5m2", "e5m2")
TL_MMA_F32(mma_m16n8k32_e4m3e5m2f32, "m16n8k32", "e4m3", "e5m2")
TL_MMA_F32(mma_m16n8k32_e5m2e4m3f32, "m16n8k32", "e5m2", "e4m3")
#endif
#undef TL_MMA_F32

TL_DEVICE void mma_m16n8k16_f16f16f16(uint32_t* d, const uint32_t* a, const uint32_t* b, const uint32_t* c) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
      : "=r"(d[0]), "=r"(d[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
}

#define TL_MMA_INT8(NAME, AT, BT)                                                                  \
  TL_DEVICE void NAME(int32_t* d, const uint32_t* a, const uint32_t* b, const int32_t* c) {        \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32." AT "." BT                      \
                 ".s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"                 \
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]),  \
                   "r"(c[1]), "r"(c[2]), "r"(c[3]));                                              \
  }
TL_MMA_INT8(mma_m16n8k32_s8s8s32, "s8", "s8")
TL_MMA_INT8(mma_m16n8k32_u8u8s32, "u8", "u8")
TL_MMA_INT8(mma_m16n8k32_s8u8s32, "s8", "u8")
TL_MMA_INT8(mma_m16n8k32_u8s8s32, "u8", "s8")
#undef TL_MMA_INT8

// One m16n8 tile of D = A * B + C selected by operand types, for generated code:
//   tl::mma<half_t, half_t, float>(d, a, b, c)
template <typename AT, typename BT, typename CT>
struct mma_op;
// kK is an enum, not a static member: no device global.
#define TL_MMA_OP(AT, BT, CT, K, FN)                                                               \
  template <>                                                                                      \
  struct mma_op<AT, BT, CT> {                                                                      \
    enum : int { kM = 16, kN = 8, kK = K };                                                        \
    TL_DEVICE static void run(CT* d, const uint32_t* a, const uint32_t* b, const CT* c) {          \
      FN(d, a, b, c);                                                                              \
    }                                                                                              \
  };
TL_MMA_OP(half_t, half_t, float, 16, mma_m16n8k16_f16f16f32)
TL_MMA_OP(bfloat16_t, bfloat16_t, float, 16, mma_m16n8k16_bf16bf16f32)
TL_MMA_OP(float, float, float, 8, mma_m16n8k8_tf32tf32f32)  // tf32 inputs
TL_MMA_OP(int8_t, int8_t, int32_t, 32, mma_m16n8k32_s8s8s32)
TL_MMA_OP(uint8_t, uint8_t, int32_t, 32, mma_m16n8k32_u8u8s32)
#if TL_ARCH >= 890
TL_MMA_OP(fp8_e4m3_t, fp8_e4m3_t, float, 32, mma_m16n8k32_e4m3e4m3f32)
TL_MMA_OP(fp8_e5m2_t, fp8_e5m2_t, float, 32, mma_m16n8k32_e5m2e5m2f32)
#endif
#undef TL_MMA_OP

// In-place accumulate: c = a * b + c.
template <typename AT, typename BT, typename CT>
TL_DEVICE void mma(CT* c, const uint32_t* a, const uint32_t* b) {
  mma_op<AT, BT, CT>::run(c, a, b, c);
}

}  // namespace tl
