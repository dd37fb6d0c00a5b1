#include "op/op_util.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>

#include "arith/analyzer.h"
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/int_arith.h"
#include "ir/printer.h"

namespace tl {

std::string describe_extents(const std::vector<Expr>& extents) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < extents.size(); ++i) os << (i ? ", " : "") << print_expr(extents[i]);
  os << "]";
  return os.str();
}

std::string describe_region(const BufferRegion& r) {
  std::ostringstream os;
  os << r.buffer.name() << "[";
  for (size_t i = 0; i < r.region.size(); ++i) {
    if (i) os << ", ";
    const Range& rg = r.region[i];
    if (is_one(rg.extent)) {
      os << print_expr(rg.min);
    } else {
      os << print_expr(rg.min) << ":" << print_expr(rg.min + rg.extent);
    }
  }
  os << "] (" << scope_name(r.buffer.scope()) << " " << r.buffer.dtype().str() << describe_extents(r.buffer.shape())
     << ")";
  return os.str();
}

void throw_op_error_type(const TileOpNode& op, const std::string& message) {
  throw TypeError(op_error_prefix(op) + message);
}
void throw_op_error_value(const TileOpNode& op, const std::string& message) {
  throw ValueError(op_error_prefix(op) + message);
}

void check_num_args(const TileOpNode& op, size_t min_args, size_t max_args, const char* usage) {
  size_t n = op.args.size();
  if (n < min_args || n > max_args) {
    std::ostringstream os;
    os << "expects ";
    if (min_args == max_args) os << min_args;
    else os << min_args << " to " << max_args;
    os << " arguments, got " << n << "; the form is " << usage;
    throw_op_error_type(op, os.str());
  }
}

const BufferRegion& region_arg(const TileOpNode& op, size_t i, const char* role) {
  if (i >= op.args.size()) throw_op_error_type(op, std::string("missing argument '") + role + "'");
  if (!op.args[i].is_region())
    throw_op_error_type(op, std::string("argument '") + role + "' must be a buffer or buffer region, got the value " +
                                print_expr(op.args[i].expr));
  return op.args[i].region;
}

const Expr& expr_arg(const TileOpNode& op, size_t i, const char* role) {
  if (i >= op.args.size()) throw_op_error_type(op, std::string("missing argument '") + role + "'");
  if (!op.args[i].is_expr())
    throw_op_error_type(op, std::string("argument '") + role + "' must be a scalar value, got the region " +
                                describe_region(op.args[i].region));
  return op.args[i].expr;
}

std::vector<Expr> common_extents(const BufferRegion& a, const BufferRegion& b) {
  auto ea = a.squeezed_extents(), eb = b.squeezed_extents();
  for (size_t i = 0; i < ea.size() && i < eb.size(); ++i)
    if (!is_const_int(ea[i]) && is_const_int(eb[i])) ea[i] = eb[i];
  return ea;
}

bool extents_may_equal(const Expr& a, const Expr& b) {
  int64_t x, y;
  if (is_const_int(a, &x) && is_const_int(b, &y)) return x == y;
  return true;  // symbolic: decided at run time (the simplifier may prove more later)
}

void check_same_extents(const TileOpNode& op, const BufferRegion& a, const char* role_a, const BufferRegion& b,
                        const char* role_b) {
  auto ea = a.squeezed_extents(), eb = b.squeezed_extents();
  bool ok = ea.size() == eb.size();
  for (size_t i = 0; ok && i < ea.size(); ++i) ok = extents_may_equal(ea[i], eb[i]);
  if (!ok) {
    std::ostringstream os;
    os << role_a << " " << describe_region(a) << " and " << role_b << " " << describe_region(b)
       << " have different shapes " << describe_extents(ea) << " and " << describe_extents(eb)
       << " (unit dimensions dropped); make both regions cover the same tile";
    throw_op_error_value(op, os.str());
  }
}

void check_region_well_formed(const TileOpNode& op, const BufferRegion& r, const char* role) {
  // A region whose rank differs from its buffer's is malformed IR, reported by the verifier
  // (ir/verifier.h) with its own message; the op's check leaves it alone.
  if (r.region.size() != r.buffer.ndim()) return;
  for (size_t d = 0; d < r.region.size(); ++d) {
    const Range& rg = r.region[d];
    if (!rg.min.defined() || !rg.extent.defined() || !rg.min.dtype().is_integer() || !rg.extent.dtype().is_integer())
      throw_op_error_type(op, std::string(role) + " region of '" + r.buffer.name() + "' has a non-integer range");
    int64_t ext, mn, dim;
    if (is_const_int(rg.extent, &ext) && ext <= 0) {
      std::ostringstream os;
      os << role << " " << describe_region(r) << " has extent " << ext << " in dimension " << d
         << "; extents must be positive";
      throw_op_error_value(op, os.str());
    }
    // A non-global tile never grows: a constant region past its end is a bug in the kernel.
    if (r.buffer.scope() != MemScope::kGlobal && is_const_int(rg.extent, &ext) && is_const_int(rg.min, &mn) &&
        is_const_int(r.buffer.shape()[d], &dim) && (mn < 0 || mn + ext > dim)) {
      std::ostringstream os;
      os << role << " " << describe_region(r) << " lies outside the buffer in dimension " << d << " (" << mn << ":"
         << mn + ext << " of " << dim << ")";
      throw_op_error_value(op, os.str());
    }
  }
}

void check_same_shape_tiles(const TileOpNode& op, size_t i, const char* role_i, size_t j, const char* role_j) {
  const BufferRegion& a = region_arg(op, i, role_i);
  const BufferRegion& b = region_arg(op, j, role_j);
  check_region_well_formed(op, a, role_i);
  check_region_well_formed(op, b, role_j);
  check_same_extents(op, a, role_i, b, role_j);
}

void check_numeric_buffer(const TileOpNode& op, const BufferRegion& r, bool float_only, const std::string& needs) {
  DataType t = r.buffer.dtype();
  if (float_only ? !t.is_float() : !(t.is_float() || t.is_integer()))
    throw_op_error_type(op, "buffer '" + r.buffer.name() + "' has dtype " + t.str() + "; " + needs);
}

int64_t squeezed_dim_attr(const TileOpNode& op, const BufferRegion& src, const std::vector<Expr>& extents,
                          int64_t dflt, const char* verb) {
  int64_t rank = static_cast<int64_t>(extents.size());
  if (rank == 0)
    throw_op_error_value(op, "src " + describe_region(src) + " has no dimension larger than 1 to " + verb);
  int64_t given = attr_int(op.attrs, "dim", dflt);
  int64_t dim = given < 0 ? given + rank : given;
  if (dim < 0 || dim >= rank) {
    std::ostringstream os;
    os << "dim " << given << " is out of range for src " << describe_region(src)
       << ", whose shape without unit dimensions is " << describe_extents(extents) << " (rank " << rank << ")";
    throw_op_error_value(op, os.str());
  }
  return dim;
}

std::string checked_str_attr(const TileOpNode& op, const std::string& key, const std::vector<std::string>& allowed,
                             const std::string& dflt) {
  auto it = op.attrs.find(key);
  if (it == op.attrs.end() || it->second.is_none()) return dflt;
  if (it->second.kind() != Attr::kStr) throw_op_error_type(op, "attribute '" + key + "' must be a string");
  const std::string& v = it->second.as_str();
  if (std::find(allowed.begin(), allowed.end(), v) != allowed.end()) return v;
  std::ostringstream os;
  os << "unknown " << key << " '" << v << "'; expected one of";
  for (auto& a : allowed) os << " '" << a << "'";
  throw_op_error_value(op, os.str());
}

// ---- loop nests -----------------------------------------------------------------------------

std::vector<size_t> squeezed_dims(const BufferRegion& r) {
  std::vector<size_t> out;
  for (size_t d = 0; d < r.region.size(); ++d)
    if (!is_one(r.region[d].extent)) out.push_back(d);
  return out;
}

std::vector<Expr> region_indices(const BufferRegion& r, const std::vector<Expr>& squeezed_index) {
  std::vector<Expr> out;
  out.reserve(r.region.size());
  size_t k = 0;
  for (auto& rg : r.region) {
    if (is_one(rg.extent)) {
      out.push_back(rg.min);
    } else {
      TL_ICHECK(k < squeezed_index.size(), "region index rank mismatch for buffer ", r.buffer.name());
      out.push_back(rg.min + squeezed_index[k++]);
    }
  }
  TL_ICHECK(k == squeezed_index.size(), "region index rank mismatch for buffer ", r.buffer.name());
  return out;
}

Expr region_load(const BufferRegion& r, const std::vector<Expr>& squeezed_index) {
  return make_load(r.buffer, region_indices(r, squeezed_index));
}

bool uses_var(const Expr& e, const Var& v) {
  bool found = false;
  for_each_subexpr(e, [&](const Expr& x) {
    if (x.get() == v.get()) found = true;
  });
  return found;
}

Stmt LoopNest::wrap(Stmt body, ForKind kind, const std::vector<Expr>& guards) const {
  // Level of each guard: 1 + the position of the innermost loop variable it uses (0: none).
  std::vector<std::vector<Expr>> at_level(vars.size() + 1);
  for (auto& g : guards) {
    size_t level = 0;
    for (size_t i = 0; i < vars.size(); ++i)
      if (uses_var(g, vars[i])) level = i + 1;
    at_level[level].push_back(g);
  }
  for (size_t l = vars.size() + 1; l-- > 0;) {
    if (!at_level[l].empty()) body = make_if(conjunction(at_level[l]), body);
    if (l > 0) body = make_for(vars[l - 1], make_int(0, extents[l - 1].dtype()), extents[l - 1], kind, body);
  }
  return body;
}

LoopNest make_loop_nest(const std::vector<Expr>& extents, const std::string& prefix) {
  LoopNest n;
  for (size_t i = 0; i < extents.size(); ++i) {
    DataType t = extents[i].dtype().is_integer() ? extents[i].dtype() : DataType::Int32();
    n.vars.push_back(Var(prefix + std::to_string(i), t));
    n.extents.push_back(extents[i]);
  }
  return n;
}

// ---- bounds ---------------------------------------------------------------------------------

// The Analyzer's bound rules (arith/analyzer.h, const_int_bound_over). An end of the bound at the
// limit of the expression's type carries no information (a variable without a range, a dynamic
// dimension) and is reported unknown. Lower and upper ends are separate: `by * 128 + i >= 0` is
// provable even when by's range ends at a dynamic ceildiv(m, 128).
IntBounds int_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges) {
  IntBounds out;
  if (!e.defined() || !(e.dtype().is_integer() || e.dtype().is_bool())) return out;
  ConstIntBound b = const_int_bound_over(e, ranges);
  // Index types (int32 / int64) are assumed not to overflow, so the Analyzer clamps to their range:
  // there, an end at the type's limit means "unbounded". Other types' limits are real bounds.
  bool index = e.dtype().is_int() && e.dtype().bits >= 32;
  ConstIntBound full = index ? ConstIntBound::of_dtype(e.dtype()) : ConstIntBound::everything();
  if (b.has_lower() && (b.min_value > full.min_value || b.is_point())) out.lo = b.min_value;
  if (b.has_upper() && (b.max_value < full.max_value || b.is_point())) out.hi = b.max_value;
  return out;
}

bool const_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int64_t* lo, int64_t* hi) {
  IntBounds b = int_bounds(e, ranges);
  if (!b.lo || !b.hi) return false;
  *lo = *b.lo;
  *hi = *b.hi;
  return true;
}

std::vector<Expr> global_bounds_guards(const Buffer& buffer, const std::vector<Expr>& indices,
                                       const LowerContext& ctx, const LoopNest* nest) {
  std::vector<Expr> out;
  if (buffer.scope() != MemScope::kGlobal || !ctx.guard_global_bounds) return out;
  std::map<Var, Range, VarLess> ranges = ctx.var_ranges;
  if (nest)
    for (size_t i = 0; i < nest->vars.size(); ++i) ranges[nest->vars[i]] = Range(make_int(0, nest->vars[i].dtype()), nest->extents[i]);
  TL_ICHECK(indices.size() == buffer.ndim(), "guard of ", buffer.name(), ": index rank mismatch");
  for (size_t d = 0; d < indices.size(); ++d) {
    const Expr& idx = indices[d];
    const Expr& dim = buffer.shape()[d];
    IntBounds ib = int_bounds(idx, ranges), db = int_bounds(dim, ranges);
    if (!(ib.lo && *ib.lo >= 0)) out.push_back(idx >= make_int(0, idx.dtype()));
    if (!(ib.hi && db.lo && *ib.hi < *db.lo)) out.push_back(idx < dim);
  }
  return out;
}

Expr conjunction(const std::vector<Expr>& conds) {
  Expr c;
  for (auto& x : conds) c = c.defined() ? (c && x) : x;
  return c.defined() ? c : make_bool(true);
}

Expr copy_fill_value(const TileOpNode& op, DataType t) {
  auto it = op.attrs.find("pad_value");
  if (it == op.attrs.end() || it->second.is_none()) return make_const(t, 0);
  return make_cast(t, it->second.as_expr());
}

// ---- numeric helpers ------------------------------------------------------------------------

DataType compute_dtype(DataType t) {
  if (t.is_float() && t.bits < 32) return DataType::Float32();
  return t;
}

Expr max_value_of(DataType t) {
  if (t.is_float()) return make_float(std::numeric_limits<double>::infinity(), t);
  if (t.is_bool()) return make_bool(true);
  if (t.is_uint()) return t.bits >= 64 ? make_int(-1, t) : make_int((int64_t(1) << t.bits) - 1, t);
  return make_int(t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1, t);
}

Expr min_value_of(DataType t) {
  if (t.is_float()) return make_float(-std::numeric_limits<double>::infinity(), t);
  if (t.is_bool()) return make_bool(false);
  if (t.is_uint()) return make_int(0, t);
  return make_int(t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1)), t);
}

Expr max_propagating_nan(const Expr& a, const Expr& b) {
  if (!a.dtype().is_float()) return max(a, b);
  return make_select(a < b, b, make_select(b <= a, a, a + b));
}

Expr min_propagating_nan(const Expr& a, const Expr& b) {
  if (!a.dtype().is_float()) return min(a, b);
  return make_select(b < a, b, make_select(a <= b, a, a + b));
}

AccessRegions dst_first_access(const TileOpNode& op, size_t num_writes) {
  AccessRegions acc;
  size_t seen = 0;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (!op.args[i].is_region()) continue;
    if (seen++ < num_writes) acc.write(op, i);
    else acc.read(op, i);
  }
  return acc;
}

}  // namespace tl
