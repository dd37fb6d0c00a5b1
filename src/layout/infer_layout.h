// Layout inference for a GPU kernel: which thread holds which element of every fragment
// (T.alloc_fragment), how every T.Parallel nest is spread over the threads, and how shared tiles
// are laid out (row-major or XOR-swizzled).
//
// Participants, in program order: tile ops (gemm, reduce, copy, fill, atomic_add, ...) and
// T.Parallel nests (a chain of directly nested parallel loops). The solver is deterministic:
//   1. strict: T.gemm fixes its accumulator and register operands to the mma.sync layouts of its
//      warp partition; fragments read or written outside any T.Parallel nest or tile op are held
//      by every thread (replicated);
//   2. propagation to a fixed point: a nest takes the layout of a fragment it indexes with exactly
//      its loop variables; fragments a nest indexes by a subset of them (F[i] in a (i, j) nest)
//      get the projection; T.reduce gives its destination the reduced layout of its source; a
//      fragment-to-fragment copy gives both sides one layout;
//   3. free: the first participant (program order) still without a layout gets the default
//      (threads walk the tile row-major, a vector of consecutive elements per thread), then 2
//      runs again.
// Finally every fragment access of every nest is checked by enumeration: the thread that runs
// an iteration must hold each fragment element that iteration reads or writes. A failure raises
// LayoutError naming the loop or op, the buffer and both layouts, and suggests staging the data
// through shared memory.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/target.h"
#include "layout/fragment.h"
#include "layout/layout.h"
#include "layout/mma_layout.h"

namespace tl {

// What T.gemm was decided to be.
struct GemmPlan {
  bool use_wgmma = false;     // wgmma.mma_async (sm_90a), or
  bool use_mma = false;       // mma.sync; otherwise the SIMT fallback
  WarpPartition warps;        // mma only
  WarpgroupPartition warpgroups;  // wgmma only
  std::string why_simt;       // why the SIMT fallback was chosen (verbose reports)
  std::string why_not_wgmma;  // why a kernel for sm_90a stayed on mma.sync (verbose reports)
};

struct LayoutMap {
  std::map<Buffer, Fragment, BufferLess> fragments;
  // Shared buffers that are not row-major (swizzled or user-annotated).
  std::map<Buffer, Layout, BufferLess> shared;
  // The layout of each T.Parallel nest, keyed by its outermost loop, over the nest's extents.
  std::map<const ForNode*, Fragment> loops;
  std::map<const TileOpNode*, GemmPlan> gemms;
  int64_t num_threads = 1;
};

// Infers the layouts of one kernel (the body of a KernelLaunchNode) running `num_threads`
// threads. The nodes of `body` are the keys of LayoutMap::loops / gemms, so the caller must
// lower that same tree.
//
// With `allow_wgmma` (sm_90a), the kernel's GEMMs use wgmma when every T.gemm of the kernel can
// (f16/bf16 operands, float accumulators, B in shared memory, A in shared memory or a fragment,
// whole warpgroups, M a multiple of 64 per warpgroup, shared tiles that take a gmma layout);
// otherwise all of them use mma.sync, so the register layouts of GEMMs that feed each other
// (flash attention's P = softmax(Q K^T) into P V) always come from the same instruction family.
LayoutMap infer_layouts(const Stmt& body, int64_t num_threads, const Target& target, bool allow_wgmma = false);

// The loop variables and constant extents of the T.Parallel nest rooted at `root` (a chain of
// directly nested parallel loops), and its innermost body. Throws LayoutError when an extent is
// not a constant.
struct ParallelNest {
  std::vector<Var> vars;
  std::vector<int64_t> extents;
  Stmt body;
};
ParallelNest parallel_nest(const ForNode* root);

// Shape of a buffer whose extents are all constants; throws LayoutError naming it otherwise.
std::vector<int64_t> const_shape(const Buffer& b, const char* what);

// The default layout of a tile over `num_threads` threads, with a vector of up to
// `max_vector_elems` consecutive elements of the last dimension per thread (fewer when the tile
// is small or the extent does not divide).
Fragment default_fragment(const std::vector<int64_t>& shape, int64_t num_threads, int64_t max_vector_elems);

}  // namespace tl
