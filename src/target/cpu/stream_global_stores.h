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
//     or, in a function without GEMM calls (a memory-bound kernel: a norm, a softmax, an
//     element-wise chain staged through block-local buffers), at least 16 KiB when G itself is at
//     least stream_min_output_bytes(): an output larger than the last-level cache (at most
//     64 MiB) leaves the caches anyway, so its lines are better written without the read.
//     examples/rms_norm on a Zen 4 core (32 MiB L3, paired against the rule off): 16-64 KiB
//     copies into a 32-64 MiB Y 1.05-1.14x (docs/PERFORMANCE.md, eighteenth session); 8 KiB
//     copies 0.88-0.92x (the fence after each block's copy); a 1 MiB Y, which stays in the caches
//     between calls, ran 0.75x streamed; on the Xeon hosts 64 MiB Ys 1.22-1.72x (nineteenth);
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
constexpr int64_t kStreamMinLargeOutputCopyBytes = 16 * 1024;  // the copy, into a global buffer larger than the caches

// The size from which a global buffer counts as larger than the caches: the pass config
// tl.cpu_stream_min_output_bytes when positive, else default_stream_min_output_bytes() of the host's
// last-level cache (the highest cache level Linux lists for cpu0, one instance: L3 on x86). Part of
// the cpu kernel cache key.
int64_t stream_min_output_bytes(const AttrMap& configs);

// The default for a last-level cache of llc_bytes (0: sysfs lists no level 3 or above): that cache,
// at most kStreamMaxDefaultOutputBytes; kStreamNoLlcOutputBytes without one. The cap: a server
// socket's L3 (300 MiB on the Emerald Rapids Xeon hosts) is shared by every core and tenant of the
// socket, so one kernel's 64 MiB output does not stay there either — examples/rms_norm fp32 with
// 64 MiB Ys ran 1.22-1.44x (one thread) and 1.59-1.72x (two) faster streamed on such a host, paired
// against the rule off; there a core wrote 8.4-8.8 GB/s with plain stores, memcpy or rep movsb
// against 19.5-19.9 GB/s non-temporal (docs/PERFORMANCE.md, nineteenth session). On the Zen 4 build
// VM the cache itself (32 MiB) is the measured threshold.
constexpr int64_t kStreamMaxDefaultOutputBytes = int64_t(64) << 20;
constexpr int64_t kStreamNoLlcOutputBytes = int64_t(32) << 20;
int64_t default_stream_min_output_bytes(int64_t llc_bytes);

// b's size in bytes when its shape is constant (saturating at 2^56), else 0.
int64_t constant_buffer_bytes(const Buffer& b);

// Whether s calls tl.cpu.gemm (a lowered T.gemm).
bool calls_cpu_gemm(const Stmt& s);

// Whether a copy into a global buffer is streamed: rows of row_bytes (>= kStreamMinRowBytes), the
// copy's copy_bytes in all (>= kStreamMinTotalBytes), or, with `large_outputs` (a function without
// GEMM calls), copy_bytes >= kStreamMinLargeOutputCopyBytes into a destination of dst_bytes >=
// min_output_bytes (dst_bytes 0: not a constant size).
bool stream_copy_wanted(int64_t row_bytes, int64_t copy_bytes, int64_t dst_bytes, bool large_outputs,
                        int64_t min_output_bytes);

PrimFunc stream_global_stores(const PrimFunc& f, const PassContext& ctx);

}  // namespace tl
