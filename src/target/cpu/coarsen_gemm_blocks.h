// coarsen_gemm_blocks (cpu): a grid whose every block is one GEMM tile runs as fewer, larger
// blocks, each the union of Fm x Fn neighbouring ones.
//
// TileLang's GEMM example is written for a GPU: 128 x 128 blocks of C (block_K 32), sized for one
// SM's shared memory and registers. After forward_gemm_operands (operands read in place, the k loop
// one GEMM, the clear folded into it) its block is
//     alloc C_local: fragment[bm, bn]
//     gemm(A[by * bm :+ bm, K-range], B[K-range, bx * bn :+ bn], C_local)   (clear_accum true)
//     copy(C_local, C[by * bm :+ bm, bx * bn :+ bn])
// On cpu a block is one task of one core, and the header GEMM packs its operands per call: a
// 128-row block repacks its B panel for 128 rows of A and its A rows for 128 columns of B, which
// the cpu configurations avoid with 512 x 512 blocks (docs/PERFORMANCE.md: the example's blocks
// ran 0.37x oneDNN int8 where 512 x 512 ones ran 0.79x, on the AMX core). This pass makes that
// choice for an unmodified kernel: the same statements over an (Fm bm) x (Fn bn) tile (every tile
// buffer at that shape along its axes, the nests' loops over it), the grid extents divided by Fm and
// Fn, each block variable now indexing the coarse tiles (`by * (Fm bm)`, `by * Fm` in a nest). The
// coarse block computes exactly the union of its fine blocks' elements, each C element from the
// same products (a GEMM's k order does not depend on M or N; the driver may
// differ with the size, so a float result is rounded as well, not always to the same bits).
//
// Applied when all of these hold (anything else is left as it is):
//   - the kernel has exactly two block variables and constant grid extents; its body is
//     allocations around one `T.gemm` with clear_accum true and, after it, `T.copy`s and
//     T.Parallel nests (two loops), besides no-op statements; the allocations not named are unused
//     (the example's A / B staging buffers);
//   - the GEMM's C is a whole 2-D block-local buffer [bm, bn] of constant shape; A and B are 2-D
//     global buffers; A's rows (op(A)'s M dimension) start at vm * bm + constant with extent bm,
//     B's columns at vn * bn + constant with extent bn, for two different block variables vm, vn;
//     the k ranges are constants;
//   - every block-local buffer the later statements name is a "tile": each of its dimensions runs
//     along the rows (extent bm) or the columns (extent bn) — C; a buffer a copy fills whole from
//     another tile (example_gemm_autotune's C_local -> C_shared, a cast when the dtypes differ); a
//     buffer a copy fills whole from a global range [vm * bm + c :+ bm] / [vn * bn + c :+ bn] per
//     dimension (examples/gemm_relu's bias row);
//   - a copy moves all of one tile into all of another, or all of a tile to / from such global
//     ranges; a nest indexes every tile by its two loop variables along the tile's axes (loop
//     extents bm / bn), and each of its other expressions (global indices, values, conditions;
//     tile loads taken as opaque values) is the same for (vm, i) and (vm + 1, i - bm) and for
//     (vn, j) and (vn + 1, j - bn): it depends on them only through the global row / column;
//   - something writes global memory (a copy or a store of a nest);
//   - Fm divides vm's grid extent and Fn vn's (so the coarse blocks cover exactly the fine ones).
// Fm and Fn give the largest tile of at most kMaxTileRows x kMaxTileCols elements (the cpu
// configurations' 512 x 512) that leaves at least min(grid blocks, 4 x workers) blocks (workers:
// tl.cpu_num_threads, or the host's hardware threads), the squarer, then the taller tile on a tie
// (the taller one's B pack serves more rows). Kernel attributes (T.use_swizzle) stay and apply to
// the coarse grid. Off with the pass config tl.disable_cpu_block_coarsening.
#pragma once

#include "transform/pass.h"

namespace tl {

PrimFunc coarsen_gemm_blocks(const PrimFunc& f, const PassContext& ctx);

// The worker threads the pass plans the grid for: tl.cpu_num_threads when set (> 0), else the
// host's hardware threads. The cpu backend puts the latter in the kernel cache key, so a kernel
// planned for one core count is not reused on a host with another.
int64_t cpu_grid_workers(const AttrMap& configs);

}  // namespace tl
