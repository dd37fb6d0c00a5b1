// What the cuda lowering of tile ops shares: the kernel's layouts, the thread index, variable
// ranges (to drop provably true bounds guards), the buffer remapping (fragments become per-thread
// register arrays, shared tiles become flat arrays indexed through their layout), and helpers to
// build the device builtins the code generator understands.
//
// Builtins of lowered cuda IR (CallNode ops; docs/TARGET_CUDA.md lists them):
//   cuda.address_of(load, mode)      &buf[index]; mode 1 read, 2 write, 3 both (for insert_sync)
//   cuda.call("callee", args...)     a device function call (tl::... in include/tl/cuda)
//   cuda.call_sync("callee", ...)    the same, for functions that contain __syncthreads(): every
//                                    thread of the block must call it (never under divergence)
//   cuda.copy_vec(dst, src, bytes)   one 2/4/8/16-byte copy (dst/src are address_of)
//   cuda.copy_vec_zfill(dst, src, bytes, valid)   zero-fills dst when !valid (src not read)
//   cuda.copy_cast(dst, src, n)      n elements, converted (vector access where it fits)
//   cuda.cp_async(dst, src, bytes, valid)        cp.async global -> shared (zero fill when !valid)
//   cuda.cp_async_commit(), cuda.cp_async_wait(n)
//   tl.sync_threads()                __syncthreads()
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "arith/analyzer.h"
#include "ir/stmt.h"
#include "ir/target.h"
#include "layout/infer_layout.h"

namespace tl {

// Constant bounds [lo, hi] of an integer expression given constant variable ranges; false when
// some part is unbounded or not understood.
bool cuda_const_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int64_t* lo, int64_t* hi);
// provably_divisible(e, n): arith/analyzer.h (the one divisibility analysis).

struct CudaLowerCtx {
  Target target;
  LayoutMap layouts;
  int64_t num_threads = 1;
  Expr tid;  // linear thread index
  std::map<Var, Range, VarLess> ranges;
  // Fragment -> its per-thread register array (scope local, shape [num_regs]).
  std::map<Buffer, Buffer, BufferLess> regs;
  // Shared buffer -> its flat replacement (shape [elements]).
  std::map<Buffer, Buffer, BufferLess> flat_shared;
  // Shared buffers created by lowerings (reduction workspaces), allocated at the kernel top.
  std::vector<Buffer> extra_shared;
  bool guard_global = true;
  // TL_DISABLE_STORE_EXCHANGE: fragment stores move each lane's own groups (no shuffle exchange).
  bool disable_store_exchange = false;
  bool disable_stmatrix = false;  // TL_DISABLE_STMATRIX: fragments into shared memory by pairs, not stmatrix
  // TL_DISABLE_WGMMA_ZERO_INIT: a wgmma T.gemm with clear_accum clears its registers first instead of
  // starting from zero itself (scale-d = 0).
  bool disable_wgmma_zero_init = false;
  // Accumulators of wgmma GEMMs left in flight by the current pipelined loop ({wgmma_async}): the
  // loop's lowering waits for them after the loop (tl::wgmma_drain).
  std::vector<Buffer> async_mma_accumulators;
  // Fragments completed by T.finalize_reducer (T.alloc_reducer): T.Parallel may accumulate into
  // their per-thread copies.
  std::set<const BufferNode*> reducers;
  int name_counter = 0;

  std::string fresh(const std::string& base) { return base + "_" + std::to_string(name_counter++); }

  // The register array of a fragment, and its layout.
  const Buffer& regs_of(const Buffer& fragment) const;
  const Fragment& layout_of(const Buffer& fragment) const;
  // Flat element index of a shared-buffer element (layout applied).
  Expr shared_offset(const Buffer& shared, const std::vector<Expr>& indices) const;
  // The buffer an access of `b` goes to after lowering, and its index list: shared -> flat
  // buffer and layout offset; global/local -> unchanged. (Fragments are not handled here.)
  std::pair<Buffer, std::vector<Expr>> remap(const Buffer& b, const std::vector<Expr>& indices) const;
  Expr load(const Buffer& b, const std::vector<Expr>& indices) const;
  Stmt store(const Buffer& b, const std::vector<Expr>& indices, const Expr& value) const;
  // An access whose indices are already lowered: a fragment element goes to register `reg` of the
  // fragment's register array (undefined: its layout's reg_of(indices), right for a fragment read
  // the same by every thread, outside T.Parallel); any other buffer goes through remap(). Stores
  // cast the value to the stored type.
  Expr lowered_load(const Buffer& b, const std::vector<Expr>& indices, Expr reg = Expr()) const;
  Stmt lowered_store(const Buffer& b, const std::vector<Expr>& indices, const Expr& value, const Span& span,
                     Expr reg = Expr()) const;
  // `&b[indices]` after remapping, with an access mode (1 read, 2 write, 3 both).
  Expr address_of(const Buffer& b, const std::vector<Expr>& indices, int mode) const;
  Expr reg_address(const Buffer& fragment, const Expr& reg, int mode) const;

  // Conditions for `indices` to lie inside a global buffer, without those that provably hold.
  // Empty for non-global buffers or when guards are off.
  std::vector<Expr> bounds_guards(const Buffer& b, const std::vector<Expr>& indices) const;
  // Drops a condition that provably holds (true) / is provably false (false constant).
  Expr simplify_cond(const Expr& c) const;
};

// Lowers a T.Parallel nest (loop variables `vars` over `extents`, innermost body `body`) laid out
// by `layout`: every thread runs the iterations it owns, one per register of the layout,
// unrolled so that fragment registers are indexed by constants; fragment accesses go to the
// register arrays and shared accesses through their layouts. (src/target/cuda/lower_parallel.cc)
Stmt lower_parallel_nest(CudaLowerCtx& ctx, const std::vector<Var>& vars, const std::vector<int64_t>& extents,
                         const Stmt& body, const Fragment& layout, const Span& span);
// Rewrites the buffer accesses of a statement / expression that runs the same in every thread
// (outside T.Parallel): fragments (replicated) go to their register arrays, shared tiles through
// their layouts.
Stmt lower_uniform_accesses(const CudaLowerCtx& ctx, const Stmt& s);
Expr lower_uniform_accesses(const CudaLowerCtx& ctx, const Expr& e);

// Conjunction of a list of conditions (true when empty).
Expr all_of(const std::vector<Expr>& conds);
// `if (cond) body` with constant conditions folded.
Stmt guarded(const Expr& cond, const Stmt& body, const Stmt& else_body = Stmt());
Stmt call_stmt(const std::string& callee, std::vector<Expr> args, bool syncs = false);
Expr call_expr(DataType t, const std::string& callee, std::vector<Expr> args);
Stmt builtin_stmt(const std::string& op, std::vector<Expr> args);
// C++ spelling of a scalar type in generated code ("float", "tl::half_t", ...).
std::string cuda_type_name(DataType t);

// Element positions: the buffer indices of the element at squeezed position `pos` of `r`.
std::vector<Expr> region_point(const BufferRegion& r, const std::vector<Expr>& pos);
// Squeezed constant extents of a region; throws LayoutError naming `what` when not constant.
std::vector<int64_t> const_extents(const BufferRegion& r, const std::string& what);

}  // namespace tl
