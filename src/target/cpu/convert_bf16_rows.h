// convert_bf16_rows (cpu): a float32 value rounded into a block-local bfloat16 buffer inside an
// element-wise loop nest becomes one row conversion at the end of each row's iteration.
//
// Flash attention casts its exponentiated scores into the bfloat16 operand of the P V GEMM
// (`acc_s_cast[i, j] = acc_s[i, j]`), and fuse_elementwise_loops puts that store into the exp2 nest.
// GCC vectorizes `bfloat16_t(float)` (round to nearest even, NaN quieted) into about twenty integer
// operations per 32 results; AVX512-BF16's vcvtne2ps2bf16 does the same rounding for 32 results in
// one. The rewrite, on the flattened, simplified function:
//   for i in [0, R): for j in [0, E): { ...; D[d + i * sd + j] = cast<bfloat16>(X[x + i * sx + j]); ... }
//   ->  for i in [0, R): { for j in [0, E): { ...; ... }
//                          tl.cpu.convert_bf16(&D[d + i * sd], &X[x + i * sx], E) }
// (converted while the row is in L1; one conversion of the whole 64 KiB block after the nest read it
// back from L2, 10% of a bf16 flash-attention KV step on an AMX Xeon), and for a single loop over j
// one conversion after it. It is done when all of these hold:
//   - the loops have constant trip counts and zero minimums, the inner one serial or vectorized,
//     the outer one serial; the store is a statement at the top level of the innermost body;
//   - D is a bfloat16 buffer that is not global (a copy into global memory is left to
//     stream_global_stores), X a float32 buffer, both indices one-dimensional, each of the form
//     (something free of the loops' variables) + i * (a constant) + j, with the row strides sd and
//     sx at least E (distinct iterations touch distinct elements);
//   - no other statement of the nest reads or writes D, no statement after the store writes X, and
//     every write of X in the nest is at the store's own index of X (so X's row holds, at the end
//     of its iteration, exactly what the store read).
// Then the values are bit for bit those of the loop: tl::cpu::convert_bf16 (include/tl/cpu/stream.h)
// rounds like bfloat16_t(float), through vcvtne2ps2bf16 where the build and the CPU have AVX512-BF16
// (blocks of 32 holding a denormal float, which that instruction reads as zero, go through the
// scalar rounding) and element by element elsewhere. Off with the pass config
// tl.disable_cpu_convert_rows (docs/TARGET_CPU.md).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc convert_bf16_rows(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
