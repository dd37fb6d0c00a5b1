// Fragments: how a block-level register tile (T.alloc_fragment, or a T.Parallel loop nest) is
// spread over the threads of a block.
//
// A Fragment maps each logical index (i0, ..., in-1) of a statically shaped tile to a thread and
// a register (element) index inside that thread's local array; with replication, one element is
// held by several threads. It is built from *modes*: each logical dimension is split into digits
// (a mixed radix, least significant first), and every digit is placed either on threads or on
// registers with a stride:
//
//     i_d = sum over modes m of dimension d:  digit_m * dim_stride_m      (0 <= digit_m < extent_m)
//     thread = sum over thread modes: digit_m * thread_stride_m   (replication modes included)
//     reg    = sum over register modes: digit_m * reg_stride_m
//
// The digits of each dimension, of the thread space and of the register space must each form a
// compact mixed radix (strides 1, e0, e0*e1, ...). That makes every Fragment a bijection between
// (logical index, replica) and (thread, reg) by construction, and makes both directions cheap
// expressions (a floordiv/floormod per digit), which is what lowering T.Parallel needs: each
// thread walks its registers and recovers the logical index.
//
// A dimension may be padded (its digits cover more than its extent, e.g. 50 rows over 64 slots);
// the slots beyond the extent are invalid and lowering guards them.
//
// A fragment may sit on threads that do not start at 0 (a T.Fragment annotation whose thread map
// is `32 + ...`): its threads are then [thread_offset, thread_offset + num_threads) of the block.
// Every map that takes or returns a thread (thread_of, index_of, is_valid, holds, ...) speaks of
// block threads; the digits, the tables and the ThreadGroups of reduce() are relative to the offset.
//
// The mma.sync operand and accumulator fragments are Fragments (mma_layout.h); reductions,
// repeats (warp tiling) and equality are operations here.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace tl {

struct FragmentMode {
  int dim = -1;               // logical dimension; -1 for a replication mode
  int64_t extent = 1;
  int64_t dim_stride = 0;     // weight of this digit in its dimension (0 for replication)
  int64_t thread_stride = 0;  // > 0: the digit is on threads
  int64_t reg_stride = 0;     // > 0: the digit is on registers
  bool on_threads() const { return thread_stride > 0; }
  bool is_replica() const { return dim < 0; }
  bool operator==(const FragmentMode& o) const {
    return dim == o.dim && extent == o.extent && dim_stride == o.dim_stride && thread_stride == o.thread_stride &&
           reg_stride == o.reg_stride;
  }
};

// One thread mode being reduced over: the threads { base + i * stride : 0 <= i < extent } hold
// parts of the same output element (see tl::allreduce in include/tl/cuda/reduce.h).
struct ThreadGroup {
  int64_t extent = 1;
  int64_t stride = 1;
};

// The integer maps of a fragment as tables (built on first use; see Fragment::tables): per
// dimension and index value, what its digits contribute to the thread and to the register; per
// thread and per register, what their digits contribute to the index. index_at, reg_at and holds
// are then additions instead of a division per digit (lowering an attention tile checks every
// (thread, register) of every fragment access: these maps were the bulk of its time).
struct FragmentTables {
  bool tabulated = false;                           // false: too large to tabulate (the maps divide)
  std::vector<int64_t> padded;                      // slots per dimension
  std::vector<std::vector<int32_t>> thread_of_dim;  // [d][i]: i's thread digits, weighted (no replicas)
  std::vector<std::vector<int32_t>> reg_of_dim;     // [d][i]: i's register digits, weighted
  std::vector<int32_t> thread_key;                  // [t]: t's non-replica thread digits, weighted
  std::vector<int32_t> index_of_thread;             // [t * rank + d]
  std::vector<int32_t> index_of_reg;                // [r * rank + d]
};

struct FragmentNode {
  std::vector<int64_t> shape;
  std::vector<FragmentMode> modes;  // normalized: no extent-1 modes, adjacent modes merged, sorted
  int64_t num_threads = 1;
  int64_t num_regs = 1;
  int64_t replicate = 1;
  int64_t thread_offset = 0;  // the first block thread holding data (see the file comment)
  // Built on first use by whichever thread asks first (nodes are shared and immutable otherwise;
  // concurrent lowerings may share one; a thread that loses the race frees its copy). Points to
  // a static table with tabulated == false when the fragment is too large to tabulate.
  mutable std::atomic<const FragmentTables*> tables{nullptr};
  FragmentNode() = default;
  FragmentNode(const FragmentNode&) = delete;
  FragmentNode& operator=(const FragmentNode&) = delete;
  ~FragmentNode();
};

class Fragment {
 public:
  Fragment() = default;
  explicit Fragment(std::shared_ptr<const FragmentNode> n) : node_(std::move(n)) {}
  // Validates the modes (compact digits per dimension, thread space and register space) and
  // normalizes them. Throws LayoutError describing the defect.
  static Fragment make(std::vector<int64_t> shape, std::vector<FragmentMode> modes);

  bool defined() const { return node_ != nullptr; }
  const std::vector<int64_t>& shape() const { return node_->shape; }
  const std::vector<FragmentMode>& modes() const { return node_->modes; }
  int64_t num_threads() const { return node_->num_threads; }  // threads holding data
  int64_t num_regs() const { return node_->num_regs; }        // elements per thread
  int64_t replicate() const { return node_->replicate; }      // copies of each element
  int64_t thread_offset() const { return node_->thread_offset; }  // first thread holding data
  int64_t thread_end() const { return thread_offset() + num_threads(); }  // one past the last
  // The same map on threads [offset, offset + num_threads()) (offset >= 0).
  Fragment with_thread_offset(int64_t offset) const;
  int64_t num_elements() const;
  // True when some dimension's digits cover more than its extent.
  bool padded() const;
  // Slots per dimension covered by the digits (>= shape).
  std::vector<int64_t> padded_shape() const;

  // Expression maps. `replica` selects which copy (0 <= replica < replicate()).
  Expr thread_of(const std::vector<Expr>& indices, const Expr& replica = make_int(0)) const;
  Expr reg_of(const std::vector<Expr>& indices) const;
  // Inverse: the logical index held by `thread` in register `reg` (possibly a padded slot).
  std::vector<Expr> index_of(const Expr& thread, const Expr& reg) const;
  // Which copy `thread` holds.
  Expr replica_of(const Expr& thread) const;
  // Whether (thread, reg) is a real element: every index below its extent, and the thread below
  // num_threads() when the block has more (`block_threads`); constant true when neither applies.
  Expr is_valid(const Expr& thread, const Expr& reg, int64_t block_threads = 0) const;

  // Integer versions.
  int64_t thread_at(const std::vector<int64_t>& index, int64_t replica = 0) const;
  int64_t reg_at(const std::vector<int64_t>& index) const;
  // Returns false for a padded slot.
  bool index_at(int64_t thread, int64_t reg, std::vector<int64_t>* index) const;
  // Whether `thread` holds element `index` (in range, not a padded slot); then *reg is its
  // register. The same as thread < num_threads() && index_at(thread, reg_at(index), &back) &&
  // back == index, without building `back`.
  bool holds(int64_t thread, const std::vector<int64_t>& index, int64_t* reg) const {
    return index.size() == shape().size() && holds(thread, index.data(), reg);
  }
  // The same for shape().size() indices at `index` (the loops that check every element use this).
  bool holds(int64_t thread, const int64_t* index, int64_t* reg) const {
    thread -= thread_offset();
    const FragmentTables* t = tables();
    if (!t) return holds_slow(thread, index, reg);
    if (thread < 0 || thread >= num_threads()) return false;
    int64_t r = 0, key = 0;
    const std::vector<int64_t>& s = shape();
    for (size_t d = 0; d < s.size(); ++d) {
      const int64_t i = index[d];
      if (i < 0 || i >= s[d]) return false;  // out of range or a padded slot
      r += t->reg_of_dim[d][static_cast<size_t>(i)];
      key += t->thread_of_dim[d][static_cast<size_t>(i)];
    }
    if (key != t->thread_key[static_cast<size_t>(thread)]) return false;
    *reg = r;
    return true;
  }
  // index_at into an array of shape().size() values.
  bool index_at(int64_t thread, int64_t reg, int64_t* index) const {
    const FragmentTables* t = tables();
    const size_t rank = shape().size();
    if (!t || thread < thread_offset() || thread >= thread_end() || reg < 0 || reg >= num_regs()) {
      std::vector<int64_t> v;
      bool ok = index_at(thread, reg, &v);
      std::copy(v.begin(), v.end(), index);
      return ok;
    }
    const int32_t* th = t->index_of_thread.data() + static_cast<size_t>(thread - thread_offset()) * rank;
    const int32_t* rg = t->index_of_reg.data() + static_cast<size_t>(reg) * rank;
    bool valid = true;
    for (size_t d = 0; d < rank; ++d) {
      index[d] = int64_t(th[d]) + rg[d];
      valid &= index[d] < shape()[d];
    }
    return valid;
  }
  // The integer maps as tables (null when the fragment is too large to tabulate), built on first use.
  const FragmentTables* tables() const {
    const FragmentTables* t = node_->tables.load(std::memory_order_acquire);
    if (!t) t = build_tables();
    return t->tabulated ? t : nullptr;
  }

  // Tiles the fragment `times` times along `dim`: the copies go to new threads (thread stride =
  // num_threads) or to new registers (reg stride = num_regs). The dimension must not be padded.
  Fragment repeat(int dim, int64_t times, bool on_threads) const;
  // Every element additionally held by `times` groups of threads (thread stride = num_threads).
  Fragment replicate_on_threads(int64_t times) const;
  // The fragment of the result of reducing over `dim`: threads of that dimension become
  // replicas (listed in `groups`, to all-reduce over), its registers disappear and the remaining
  // registers are renumbered compactly. A 1-d fragment reduces to shape [1].
  Fragment reduce(int dim, std::vector<ThreadGroup>* groups = nullptr) const;
  // The inverse of reduce(dim) for a reduction done inside each thread: a fragment with a new
  // dimension `dim` of `extent` elements inserted before the current dimension `dim`, held entirely
  // in registers (after the existing ones), so that result.reduce(dim) is this fragment again.
  Fragment insert_register_dim(int dim, int64_t extent) const;
  // The fragment with its dimensions reordered: dimension d of the result is dimension order[d]
  // of this one (order is a permutation).
  Fragment permute(const std::vector<int>& order) const;
  // The layout a thread needs to read `dims` of this fragment's index space (a projection): the
  // other dimensions are reduced away (their thread digits become replicas), then the kept ones
  // are put in the order given. Used for F[i] inside a T.Parallel(i, j) nest laid out by this.
  Fragment project(const std::vector<int>& dims) const;
  // For reduce(dim): the destination register of every source register.
  std::vector<int64_t> reduce_reg_map(int dim) const;

  // Same shape and normalized modes (the same map).
  bool same_as(const Fragment& other) const;
  // Checks the bijection by enumeration (tests).
  bool is_bijective(std::string* why = nullptr) const;
  std::string str() const;

 private:
  const FragmentTables* build_tables() const;
  bool holds_slow(int64_t thread, const int64_t* index, int64_t* reg) const;  // thread relative to the offset
  bool index_at_rel(int64_t thread, int64_t reg, std::vector<int64_t>* index) const;
  int64_t reg_at_slow(const std::vector<int64_t>& index) const;
  bool index_at_slow(int64_t thread, int64_t reg, std::vector<int64_t>* index) const;
  std::shared_ptr<const FragmentNode> node_;
};

// A T.Parallel-style fragment: the last dimension split into `vector` contiguous elements per
// thread (registers), then the threads walk the tile row-major, then the remaining elements go to
// registers. Shapes that do not divide evenly are padded (the top digit of a dimension).
Fragment make_parallel_fragment(const std::vector<int64_t>& shape, int64_t num_threads, int64_t vector = 1);
// Every thread holds the whole tile (fully replicated): for small tiles read by every thread.
Fragment make_replicated_fragment(const std::vector<int64_t>& shape, int64_t num_threads);

}  // namespace tl
