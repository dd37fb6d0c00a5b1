// Helpers shared by the tile operators of src/op/: argument checks with messages that name the
// op, buffers and shapes; loop nests over (squeezed) tile regions; bounds reasoning for the guards
// of global-tensor accesses.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/tile_op.h"

namespace tl {

// ---- describing things in messages ------------------------------------------------------------

// "A[by * 128:by * 128 + 128, 0:64] (global float16[1024, 1024])"
std::string describe_region(const BufferRegion& r);
// "[128, 64]"
std::string describe_extents(const std::vector<Expr>& extents);

// ---- argument checks (throw TypeError / ValueError prefixed with op_error_prefix) -------------

// Checks the argument count; `usage` shows the expected form, e.g. "T.copy(src, dst)".
void check_num_args(const TileOpNode& op, size_t min_args, size_t max_args, const char* usage);
// The i-th argument as a region; `role` names it in messages ("src", "dst").
const BufferRegion& region_arg(const TileOpNode& op, size_t i, const char* role);
// The i-th argument as a scalar expression.
const Expr& expr_arg(const TileOpNode& op, size_t i, const char* role);
// The squeezed extents of `a` and `b` agree (equal rank; equal where both are constants).
void check_same_extents(const TileOpNode& op, const BufferRegion& a, const char* role_a, const BufferRegion& b,
                        const char* role_b);
// The squeezed extents of `a`, with `b`'s constant extent where a's is symbolic (the loop bounds
// of an op over two tiles of the same shape: constant where either side says so).
std::vector<Expr> common_extents(const BufferRegion& a, const BufferRegion& b);
// Throws when two extents are provably different.
bool extents_may_equal(const Expr& a, const Expr& b);
// The region's entries are integers, its constant extents are positive and, for a non-global
// buffer with a constant shape, inside the buffer. (A region with the wrong number of ranges is
// left to the verifier, which reports it as malformed IR.)
void check_region_well_formed(const TileOpNode& op, const BufferRegion& r, const char* role);
// Arguments i and j are regions (named role_i, role_j), well formed, of the same squeezed shape:
// the checks of an op that maps one tile onto another element by element.
void check_same_shape_tiles(const TileOpNode& op, size_t i, const char* role_i, size_t j, const char* role_j);
// TypeError "buffer 'x' has dtype t; <needs>" unless the buffer holds floats (float_only) or
// integers or floats.
void check_numeric_buffer(const TileOpNode& op, const BufferRegion& r, bool float_only, const std::string& needs);
// The `dim` attribute (default `dflt`; negative counts from the end) of an op working along one
// dimension of `src`, whose squeezed extents are `extents`: ValueError when src has no such
// dimension (`verb` says what the op would do along it: "scan", "reduce").
int64_t squeezed_dim_attr(const TileOpNode& op, const BufferRegion& src, const std::vector<Expr>& extents,
                          int64_t dflt, const char* verb);
// A string attribute restricted to `allowed` (its default when absent).
std::string checked_str_attr(const TileOpNode& op, const std::string& key, const std::vector<std::string>& allowed,
                             const std::string& dflt);
[[noreturn]] void throw_op_error_type(const TileOpNode& op, const std::string& message);
[[noreturn]] void throw_op_error_value(const TileOpNode& op, const std::string& message);

// ---- loop nests over tiles --------------------------------------------------------------------

// Positions (in the region's rank) of the dimensions whose extent is not the constant 1.
std::vector<size_t> squeezed_dims(const BufferRegion& r);
// Buffer indices of the element of `r` at position `squeezed_index` of its squeezed shape.
std::vector<Expr> region_indices(const BufferRegion& r, const std::vector<Expr>& squeezed_index);
// A loaded element of `r` at a squeezed position.
Expr region_load(const BufferRegion& r, const std::vector<Expr>& squeezed_index);

// One loop per extent, outermost first; the last one is the innermost (contiguous) dimension.
struct LoopNest {
  std::vector<Var> vars;
  std::vector<Expr> extents;
  std::vector<Expr> indices() const { return std::vector<Expr>(vars.begin(), vars.end()); }
  // Wraps `body` into the loops. Each guard is placed just inside the innermost loop whose variable
  // it uses (guards that use none go outside all loops), so a row that is entirely out of bounds
  // is skipped as a whole.
  Stmt wrap(Stmt body, ForKind kind = ForKind::kParallel, const std::vector<Expr>& guards = {}) const;
};
// Loop variables named `<prefix>0`, `<prefix>1`, ... typed like their extents.
LoopNest make_loop_nest(const std::vector<Expr>& extents, const std::string& prefix = "i");

// ---- bounds -------------------------------------------------------------------------------------

// Constant lower and upper bounds of an integer expression, each unknown when some part it depends
// on is unbounded (a dynamic dimension, a variable without a range).
struct IntBounds {
  std::optional<int64_t> lo, hi;
};
IntBounds int_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges);
// Constant lower/upper bounds of an integer expression given the ranges of its variables; false
// when some part is unbounded (a dynamic dimension, an unknown variable).
bool const_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int64_t* lo, int64_t* hi);
// Conditions for `indices` to lie inside `buffer`'s shape, leaving out those that hold for every
// value of the variables in ctx.var_ranges and of the loop variables of `nest` (when given).
// Empty when the buffer is not global or guards are off.
std::vector<Expr> global_bounds_guards(const Buffer& buffer, const std::vector<Expr>& indices,
                                       const LowerContext& ctx, const LoopNest* nest = nullptr);
// a && b && ...; the constant true when empty.
Expr conjunction(const std::vector<Expr>& conds);
// What an out-of-bounds read of a T.copy gives, as a `t`: its `pad_value` attribute
// (T.copy(..., pad_value=), T.annotate_safe_value) converted, else 0.
Expr copy_fill_value(const TileOpNode& op, DataType t);
bool uses_var(const Expr& e, const Var& v);

// ---- numeric helpers ----------------------------------------------------------------------------

// The type element-wise math and reductions compute in: float32 for the 16/8-bit floats.
DataType compute_dtype(DataType t);
// The largest / smallest value of a type (infinities for floats).
Expr max_value_of(DataType t);
Expr min_value_of(DataType t);
// max(a, b) / min(a, b) that are NaN when either operand is (floats; the plain max / min otherwise):
// T.reduce_max / reduce_min / reduce_absmax with nan_propagate=True. Written with ordered
// comparisons only (both false for a NaN, which then propagates through a + b).
Expr max_propagating_nan(const Expr& a, const Expr& b);
Expr min_propagating_nan(const Expr& a, const Expr& b);

// Access regions of an op whose first `num_writes` region arguments are written and the other
// region arguments are read.
AccessRegions dst_first_access(const TileOpNode& op, size_t num_writes = 1);

}  // namespace tl
