// stream_global_stores (cpu): a loop that copies a long contiguous run of a block-local buffer into
// a global buffer stores it with non-temporal (streaming) stores.
//
// The copy of a GEMM's accumulator fragment into C at the end of a block (`T.copy(C_local,
// C[by * bm, bx * bn])`) writes a row of C that no cache line of this core holds; a plain store
// first reads the line from memory (read for ownership), so the copy moves twice the bytes it
// writes. Streaming stores write whole lines without that read (docs/TARGET_CPU.md; measured on
// the 2048^3 int8 / bf16 GEMMs of bench/cpu_gemm.py: the copy-out took 1.1 instead of 3.3 ms of a
// 15 ms run). The rewrite
//   for i in [min, min + n): G[f + i] = L[g + i]   ->   tl.cpu.copy_stream(&G[f + min], &L[g + min], n)
// followed by `tl.cpu.store_fence()` (sfence: the streaming stores are weakly ordered; after the
// fence they are ordered before every later store and atomic of the block, as plain stores are),
// is done on the flattened, simplified function when all of these hold:
//   - the loop is serial or vectorized, with a constant trip count n, n * element bytes >= 1 KiB;
//   - the copy is at least 512 KiB: this loop alone, or with a serial loop of constant trip count
//     directly around it (the rows of a tile). Smaller copies are left alone: a streaming store
//     does not let the copy overlap the block's later work (the fence waits for the lines to reach
//     memory), and paired runs of the fp32 GEMMs with 256 KiB C tiles and of
//     the decode shapes (16 or 1 rows of 1 KiB) were 10-20% slower streamed;
//   - its body is exactly that store: G a global buffer, L a buffer of another scope with G's dtype,
//     the value the loaded element itself (no arithmetic; the one cast allowed is float32 L to a
//     bfloat16 or float16 G, the copy-out of a float32 accumulator into a bfloat16 / float16 C as in
//     TileLang's GEMM examples), both indices one-dimensional and of the form (something not
//     depending on i) + i;
//     row and copy sizes count G's bytes.
// tl::cpu::copy_stream (include/tl/cpu/stream.h) stores the 64-byte-aligned middle of the run with
// vmovntdq (AVX-512 / AVX2 / SSE2 widths) and the ends with plain stores; its float32 -> bfloat16
// and float32 -> float16 overloads round as bfloat16_t(float) / half_t(float) do (to nearest even,
// NaN quieted) and stream 32 results per 64-byte line in AVX-512 builds (float16 through
// vcvtps2ph; plain converting stores in other builds). Off with the pass config
// tl.disable_cpu_stream_stores.
#pragma once

#include "transform/pass.h"

namespace tl {

// The sizes from which a copy is streamed (fuse_elementwise_loops leaves such copies alone).
constexpr int64_t kStreamMinRowBytes = 1024;         // one run (shorter: partial lines, little to gain)
constexpr int64_t kStreamMinTotalBytes = 512 * 1024;  // the whole copy (smaller: plain stores measured faster)

PrimFunc stream_global_stores(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
