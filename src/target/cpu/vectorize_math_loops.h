// vectorize_math_loops (cpu): an element-wise loop that calls exp2 / exp on float32 values is marked
// for explicit vector code, 16 lanes per step (annotation `cpu.vector_lanes = 16`), which the code
// generator emits with tl::cpu::vexp2 / vexp (include/tl/cpu/math.h) instead of leaving the loop to
// GCC's auto-vectorizer.
//
// GCC vectorizes the scalar tl::cpu::exp2 into about 24 vector operations per 16 results: it has no
// pattern for AVX-512's vscalefps, so p * 2^n stays seven integer and float steps. The vector
// functions round n with one vrndscaleps and scale with one vscalefps (about 15 operations, each
// lane bit for bit the scalar result). Flash attention's exp2 nest is a third of a KV step on an
// AMX CPU, where the two GEMMs are fast.
//
// A loop is marked when all of these hold (on the flattened, simplified function):
//   - it is vectorized (T.Parallel / T.vectorized after legalize_cpu_loops) and its body is one
//     store or a sequence of stores (no loop, let, if or call statement);
//   - every store writes a float32 buffer at a one-dimensional index (something free of the loop
//     variable) + the loop variable (possibly widened to int64: loop_index.h), or is a per-iteration
//     temporary: a float32 buffer stored only
//     at one index free of the loop variable (fuse_elementwise_loops' scalar for a buffer used inside
//     one iteration) and read only at that index, in statements after one that writes it (so no
//     value crosses iterations; codegen keeps it in a vector register and stores its last lane);
//   - every part of a stored value that depends on the loop variable is a float32 load at such an
//     index, a float32 +, -, * or /, or a float32 exp2 / exp of such a part; the loop variable itself
//     is not a value; a load of a buffer the loop stores is at the index of a store to it; the parts
//     free of the loop variable are pure and read no buffer the loop stores (one scalar per step);
//   - some store's value calls exp2 or exp on a part that depends on the loop variable (other
//     element-wise loops vectorize well as they are).
// In a marked loop, a store B[x] = B[x] * f (or f * B[x]) with f free of the loop variable, whose
// buffer no other statement of the loop names (online softmax's rescale of the output rows by
// exp2(m_old - m_new)), leaves as a marked loop of its own under `if (f != 1)`: x * 1 == x for every
// float (NaN, infinities, -0 and subnormals included; a signaling NaN stays signaling), so a row whose
// running maximum did not change skips its pass over the output instead of rewriting it unchanged.
// A vectorized loop that is nothing but such a store (the rescale as a nest of its own, when the
// score rows are shorter than the output rows) is marked and guarded the same way.
// Off with the pass config tl.disable_cpu_vector_math (docs/TARGET_CPU.md).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc vectorize_math_loops(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
