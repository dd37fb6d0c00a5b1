// Fragment layouts of the mma.sync instructions (sm_80+) and of block-level GEMM tiles built from
// them. Derived from the PTX ISA "matrix fragments for mma.m16n8k*" tables (groupID = lane / 4,
// threadID_in_group = lane % 4); tests/cpp/layout/mma_layout_test.cc checks them element by
// element against those tables, and the GPU tests check them against the hardware.
//
// Register index = element index in the thread's local array, low to high (a0, a1, ...), so a
// 16-bit operand's registers 2i and 2i+1 share the i-th 32-bit register of the instruction.
#pragma once

#include <cstdint>
#include <string>

#include "ir/dtype.h"
#include "layout/fragment.h"

namespace tl {

// K of the m16n8kK instruction for an operand type: 16 (f16/bf16), 8 (tf32 = float32), 32 (8-bit).
// Throws NotImplemented for types without an mma.sync form.
int mma_k(DataType ab_type);

// One warp (32 threads), one instruction tile.
Fragment mma_warp_fragment_a(DataType ab_type);  // A [16, K], row-major
Fragment mma_warp_fragment_b(DataType ab_type);  // B [K, 8]
Fragment mma_warp_fragment_c();                  // C/D [16, 8], 32-bit accumulators

// How the warps of a block split a GEMM's [M, N] accumulator tile.
enum class GemmWarpPolicy { kSquare, kFullRow, kFullCol };
GemmWarpPolicy parse_gemm_warp_policy(const std::string& name);  // "Square", "FullRow", "FullCol"
struct WarpPartition {
  int warps_m = 1;
  int warps_n = 1;
};
// Chooses warps_m x warps_n = num_warps with M divisible by 16 * warps_m and N by 8 * warps_n:
// FullRow puts as many warps as possible along M, FullCol along N, Square makes each warp's tile
// closest to square. Throws LayoutError naming the shapes when no split exists.
WarpPartition compute_warp_partition(int64_t m, int64_t n, int num_warps, GemmWarpPolicy policy);

// Block-level fragments of a GEMM C[M, N] += A[M, K] * B[K, N]. Warp w = wm * warps_n + wn owns
// C rows [wm * M/warps_m, ...) and columns [wn * N/warps_n, ...); inside a warp, instruction
// tiles are numbered n-tile first, so an accumulator tile of one GEMM has exactly the layout of
// the A operand of the next (flash attention's P = softmax(QK^T) fed to P V) when warps_n == 1.
Fragment make_mma_c_fragment(int64_t m, int64_t n, WarpPartition w);
// A held in registers ("rs" GEMM): each warp holds its rows for the whole K, replicated over the
// warps_n warps that share them.
Fragment make_mma_a_fragment(int64_t m, int64_t k, WarpPartition w, DataType ab_type);
// B held in registers: each warp holds its columns, replicated over the warps_m warps.
Fragment make_mma_b_fragment(int64_t k, int64_t n, WarpPartition w, DataType ab_type);

// ---- wgmma (sm_90a) ----------------------------------------------------------------------------
// How the warpgroups (4 consecutive warps) of a block split a GEMM's [M, N] accumulator:
// warpgroup g = gm * wg_n + gn owns rows [gm * M / wg_m, ...) and columns [gn * N / wg_n, ...),
// computed as (M / wg_m / 64) m64nNk16 instructions per K step with N = N / wg_n.
struct WarpgroupPartition {
  int wg_m = 1;
  int wg_n = 1;
};
// Splits over `num_warpgroups` so that M divides into 64-row tiles per warpgroup and each
// warpgroup's N is a multiple of 8 and at most 256. Prefers the fewest splits of N (wider
// instructions read each A row once for more columns), or of M for FullCol. False when none.
bool compute_warpgroup_partition(int64_t m, int64_t n, int num_warpgroups, GemmWarpPolicy policy,
                                 WarpgroupPartition* out);
// The accumulator as wgmma holds it: inside a warpgroup, warp w holds rows [16 w, 16 w + 16) of
// each 64-row instruction tile in the m16n8 C order, tiles along N first, then instruction rows.
Fragment make_wgmma_c_fragment(int64_t m, int64_t n, WarpgroupPartition p);
// A held in registers for wgmma (16-bit types): each warp holds the m16n8k16 A fragments of its
// 16 rows per instruction tile, K tiles first; replicated over the wg_n warpgroups sharing rows.
// With wg_n == 1 this is exactly make_wgmma_c_fragment of a GEMM with N = K (flash attention).
Fragment make_wgmma_a_fragment(int64_t m, int64_t k, WarpgroupPartition p, DataType ab_type);

}  // namespace tl
