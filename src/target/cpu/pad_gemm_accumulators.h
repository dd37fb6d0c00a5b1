// pad_gemm_accumulators (cpu): a block-local GEMM accumulator whose rows are a multiple of 1 KiB
// apart gets a row stride 64 bytes longer.
//
// The header GEMM's AMX path (include/tl/cpu/gemm.h) loads and stores C as 16-row tiles at the
// start and end of every block of C tiles of each call. With rows 2 KiB apart (a 512-wide fp32 or
// int32 C_local) the 16 rows of a tile column map onto 2 of the 64 L1 sets (4 KiB: 1 set), so the
// tiles of one block evict each other and the lines the block stores must be read again; with
// rows 64 bytes longer consecutive rows fall into consecutive sets. Measured on the 2048^3 bf16
// and int8 GEMMs of bench/cpu_gemm.py (512 x 512 blocks, one thread): +1-13%; fp16 (its tile path
// splits each value into two bf16) +15-23% on an Emerald Rapids core (docs/PERFORMANCE.md).
//
// A buffer B is given strides [.., ld + 64 bytes / element, 1] (the logical shape does not change;
// every access goes through the strides: flatten_buffer_access, the GEMM's ldc, the row routines
// and the copy loops read them; codegen_cpu sizes the allocation from them) when all of these hold:
//   - B is allocated in the function (shared, fragment or local scope), with a static shape of
//     rank >= 2 and no explicit strides, of dtype float32 or int32;
//   - its last dimension is a whole number of KiB (the aliasing case) and at least 16 rows;
//   - B is the C operand of a T.gemm whose A and B are bfloat16, float16 or int8 (the AMX /
//     AVX512-BF16 types; the fp32 micro-kernel's C access is not tile-shaped and is left alone);
//   - every tile op naming B is a copy, fill, gemm or reduce (each lowers through the strides), and
//     no tl.address_of takes its address outside them.
// Off with the pass config tl.disable_cpu_gemm_padding.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc pad_gemm_accumulators(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
