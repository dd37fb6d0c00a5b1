// fuse_elementwise_loops (cpu): adjacent loop nests over the same iteration space become one nest,
// and a block-local buffer that then lives only inside one iteration becomes a scalar.
//
// The cpu backend runs each tile statement as its own loop nest, so a memory-bound tile program
// (examples/rms_norm: copy X into shared, into a fragment, square it, ... copy out) passes over each
// block's values once per statement. After legalize_cpu_loops, in every statement sequence:
//
// 1. Fusion. Two loop nests N1 (earlier) and N2 (later) are fused into one nest whose innermost
//    body is N1's body followed by N2's (N2's loop variables renamed to N1's) when
//    - both are perfect nests of the same depth (each loop's body the next loop; the innermost body
//      without loops, holding only stores, lets and ifs of pure expressions: no tl.* builtin, no
//      tl.address_of), with structurally equal, load-free mins and extents, no annotations, and
//      mins / extents that do not use the nest's own variables (a rectangular space);
//    - every buffer that both nests access and at least one of them writes is accessed at one index
//      tuple T everywhere in both, and T maps iterations to elements one-to-one: one index per
//      dimension, each a distinct loop variable of the nest plus an offset free of the nest's
//      variables, every loop variable used once, and the element provably inside the buffer's shape
//      (so no two iterations touch one element, even after flattening; buffers with explicit
//      strides, which may overlap, are not taken). Then iteration p of N2 only
//      meets the element of iteration p of N1, which the fused order still runs before it;
//    - every statement between them touches no buffer that N2 touches where either side writes
//      (N2 is moved up across them), and none is a tile op, attribute, kernel or break / continue;
//      an impure call's buffer operands count as written, and an impure call with a handle
//      operand or without a buffer operand (an extern function, a barrier) is never crossed.
//    A nest that only copies a block-local buffer into a global one, long enough for
//    stream_global_stores to stream it (stream_copy_wanted: kStreamMinRowBytes /
//    kStreamMinTotalBytes, or a global buffer larger than the caches in a function without GEMMs), is not fused
//    (unless tl.disable_cpu_stream_stores is set): it would lose its non-temporal stores.
//    The fused loop at each level is `vectorized` (ivdep) or `unrolled` only when both were, else
//    serial. Fusion repeats, so a chain of element-wise statements becomes one nest.
// 2. Scalarization. A shared / fragment / local buffer allocated in the function whose every access
//    is inside one loop body without loops, where it is stored exactly once, by a statement at the
//    top level of that body, and loaded only by later statements of the body at the stored index
//    tuple (free of loads), becomes a `local.var` buffer of one element (every iteration writes the
//    value before reading it, and nothing reads it outside the iteration): the fused nest no longer
//    stores and reloads it (the copy into X_shared of rms_norm, for example).
//
// Reductions and GEMM calls (tl.cpu.*) are never moved or fused: their operands count as written,
// which stops a nest that touches them from being moved across them. Off with the pass config
// tl.disable_cpu_loop_fusion (docs/TARGET_CPU.md).
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc fuse_elementwise_loops(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
