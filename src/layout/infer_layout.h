// Layout inference for a GPU kernel: which thread holds which element of every fragment
// (T.alloc_fragment), how every T.Parallel nest is spread over the threads, and how shared tiles
// are laid out (row-major or XOR-swizzled).
//
// Participants, in program order: tile ops (gemm, reduce, copy, fill, atomic_add, ...) and
// T.Parallel nests (a chain of directly nested parallel loops). Each tile operator owns its layout
// constraints: TileOp::infer_layout / propose_layout (ir/tile_op.h), implemented by the operator's
// class in src/op/ against LayoutInference below. This file is the driver: it runs the stages over
// the operators and owns what belongs to no operator (T.Parallel nests, fragments used outside
// both). The solver is deterministic:
//   0. annotations (LayoutStage::kAnnotate): T.annotate_layout pins shared-memory layouts;
//   1. strict: fragments read or written outside any T.Parallel nest or tile op are held by every
//      thread (replicated); the kernel-wide instruction choice (wgmma for every T.gemm or for none:
//      TileOp::propose_layout) is made; then LayoutStage::kStrict, where T.gemm fixes its
//      accumulator and register operands to the mma.sync / wgmma layouts of its warp partition;
//   2. propagation to a fixed point: a nest takes the layout of a fragment it indexes with exactly
//      its loop variables; fragments a nest indexes by a subset of them (F[i] in a (i, j) nest)
//      get the projection; the operators' LayoutStage::kPropagate (T.reduce gives its destination
//      the reduced layout of its source; a fragment-to-fragment copy gives both sides one layout);
//   3. free: the first participant (program order) still without a layout gets the default
//      (threads walk the tile row-major, a vector of consecutive elements per thread; an operator
//      decides in LayoutStage::kFree which of its arguments may take it), then 2 runs again.
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
#include "ir/tile_op.h"
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

// The state of layout inference as an operator sees it (TileOp::infer_layout): the layouts known so
// far, which the operator reads and extends. The driver (infer_layouts) runs the stages.
class LayoutInference {
 public:
  LayoutInference(int64_t num_threads, const Target& target, bool allow_wgmma);

  int64_t num_threads() const { return map_.num_threads; }
  const Target& target() const { return target_; }

  // The layout of fragment `b`; nullptr while it has none.
  const Fragment* fragment(const Buffer& b) const;
  // Gives fragment `b` layout `f`; `who` names the constraint in messages ("file.py:3:5: T.reduce:
  // the result of the reduction"). Throws LayoutError when `b` already has another layout, when `f`
  // needs more threads than the kernel has, or is of another shape.
  void set_fragment(const Buffer& b, const Fragment& f, const std::string& who);
  // The free choice of an element-wise operator: its first fragment argument without a layout
  // (argument `except_arg` aside) gets the default layout, with vectors of up to 16 bytes of the
  // widest element the op moves. True when it set one.
  bool set_default_fragment(const TileOpNode& op, int except_arg = -1);

  // Shared-memory layouts other than row-major; nullptr for a row-major buffer.
  const Layout* shared_layout(const Buffer& b) const;
  void set_shared_layout(const Buffer& b, const Layout& l);

  // What T.gemm was decided to be (LayoutMap::gemms).
  void set_gemm_plan(const TileOpNode& op, const GemmPlan& plan);

  // The kernel-wide wgmma choice (see infer_layouts). wgmma_allowed(): the target allows it. In
  // TileOp::propose_layout a GEMM that can use it records its plan (propose_wgmma) and the shared
  // layouts it needs (proposed_shared_layouts), or says why not (refuse_wgmma). wgmma_granted():
  // every GEMM proposed, so in LayoutStage::kStrict each applies its proposal.
  bool wgmma_allowed() const { return allow_wgmma_; }
  bool wgmma_granted() const { return wgmma_granted_; }
  void propose_wgmma(const TileOpNode& op, const GemmPlan& plan) { wgmma_plans_[&op] = plan; }
  const GemmPlan& proposed_wgmma(const TileOpNode& op) const { return wgmma_plans_.at(&op); }
  std::map<Buffer, Layout, BufferLess>& proposed_shared_layouts() { return wgmma_layouts_; }
  void refuse_wgmma(const std::string& why) { why_not_wgmma_ = why; }
  const std::string& why_not_wgmma() const { return why_not_wgmma_; }

 private:
  friend class LayoutSolver;  // the driver (infer_layout.cc)

  const Target& target_;
  bool allow_wgmma_ = false;
  bool wgmma_granted_ = false;
  LayoutMap map_;
  std::map<Buffer, std::string, BufferLess> origin_;  // who gave each fragment its layout
  bool changed_ = false;                              // a layout was set since the driver last looked
  std::map<const TileOpNode*, GemmPlan> wgmma_plans_;
  std::map<Buffer, Layout, BufferLess> wgmma_layouts_;
  std::string why_not_wgmma_;
};

// A tile-op region argument as layout inference sees it: constant extents without the unit
// dimensions.
struct LayoutRegion {
  Buffer buffer;
  std::vector<int64_t> extents;  // squeezed, constant (-1 where not constant)
  std::vector<int> dims;         // buffer dimension of each squeezed extent
  bool full = false;             // covers the whole buffer
};
LayoutRegion layout_region(const BufferRegion& r);
inline bool is_fragment_buffer(const Buffer& b) { return b.defined() && b.scope() == MemScope::kFragment; }

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
