#include "op/op_util.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <sstream>

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

namespace {

constexpr int64_t kBoundLimit = int64_t(1) << 62;

bool clamp_ok(__int128 v) { return v > -static_cast<__int128>(kBoundLimit) && v < static_cast<__int128>(kBoundLimit); }

using Bound = std::optional<int64_t>;

Bound checked(__int128 v) { return clamp_ok(v) ? Bound(static_cast<int64_t>(v)) : std::nullopt; }
Bound add(Bound a, Bound b) { return a && b ? checked(static_cast<__int128>(*a) + *b) : std::nullopt; }

// Lower and upper bounds are tracked separately: `by * 128 + i >= 0` is provable even when by's
// range ends at a dynamic ceildiv(m, 128).
IntBounds bounds_rec(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int depth) {
  IntBounds out;
  if (depth > 32 || !e.defined() || !(e.dtype().is_integer() || e.dtype().is_bool())) return out;
  int64_t v;
  if (is_const_int(e, &v)) return IntBounds{v, v};
  if (e.as<VarNode>()) {
    auto it = ranges.find(Var(std::static_pointer_cast<const VarNode>(e.node())));
    if (it == ranges.end()) return out;
    IntBounds mn = bounds_rec(it->second.min, ranges, depth + 1);
    IntBounds ext = bounds_rec(it->second.extent, ranges, depth + 1);
    out.lo = mn.lo;
    if (mn.hi && ext.hi) out.hi = add(mn.hi, checked(static_cast<__int128>(*ext.hi) - 1));
    return out;
  }
  if (auto* c = e.as<CastNode>()) {
    if (!c->dtype.is_integer() || !c->value.dtype().is_integer()) return out;
    IntBounds in = bounds_rec(c->value, ranges, depth + 1);
    if (c->dtype.bits >= 64 && c->dtype.is_int()) return in;
    // A narrowing cast keeps the bounds only when both are known to fit.
    int64_t tmax = c->dtype.bits >= 64 ? INT64_MAX
                   : c->dtype.is_int() ? (int64_t(1) << (c->dtype.bits - 1)) - 1
                                       : (int64_t(1) << c->dtype.bits) - 1;
    int64_t tmin = c->dtype.is_int() && c->dtype.bits < 64 ? -(int64_t(1) << (c->dtype.bits - 1)) : 0;
    if (in.lo && in.hi && *in.lo >= tmin && *in.hi <= tmax) return in;
    return out;
  }
  if (auto* s = e.as<SelectNode>()) {
    IntBounds a = bounds_rec(s->true_value, ranges, depth + 1), b = bounds_rec(s->false_value, ranges, depth + 1);
    if (a.lo && b.lo) out.lo = std::min(*a.lo, *b.lo);
    if (a.hi && b.hi) out.hi = std::max(*a.hi, *b.hi);
    return out;
  }
  auto* b = e.as<BinaryNode>();
  if (!b || !b->dtype.is_integer()) return out;
  IntBounds x = bounds_rec(b->a, ranges, depth + 1), y = bounds_rec(b->b, ranges, depth + 1);
  int64_t k = 0;
  bool y_const = y.lo && y.hi && *y.lo == *y.hi;
  if (y_const) k = *y.lo;
  switch (b->op) {
    case BinOp::kAdd:
      out.lo = add(x.lo, y.lo);
      out.hi = add(x.hi, y.hi);
      break;
    case BinOp::kSub:
      if (x.lo && y.hi) out.lo = checked(static_cast<__int128>(*x.lo) - *y.hi);
      if (x.hi && y.lo) out.hi = checked(static_cast<__int128>(*x.hi) - *y.lo);
      break;
    case BinOp::kMul: {
      bool x_const = x.lo && x.hi && *x.lo == *x.hi;
      const IntBounds& var = y_const ? x : y;
      if (y_const || x_const) {
        int64_t f = y_const ? k : *x.lo;
        Bound l = var.lo ? checked(static_cast<__int128>(*var.lo) * f) : std::nullopt;
        Bound h = var.hi ? checked(static_cast<__int128>(*var.hi) * f) : std::nullopt;
        if (f >= 0) {
          out.lo = l;
          out.hi = h;
        } else {
          out.lo = h;
          out.hi = l;
        }
      } else if (x.lo && x.hi && y.lo && y.hi) {
        __int128 p[4] = {(__int128)*x.lo * *y.lo, (__int128)*x.lo * *y.hi, (__int128)*x.hi * *y.lo,
                         (__int128)*x.hi * *y.hi};
        out.lo = checked(*std::min_element(p, p + 4));
        out.hi = checked(*std::max_element(p, p + 4));
      }
      break;
    }
    case BinOp::kFloorDiv:
      if (y_const && k > 0) {
        if (x.lo) out.lo = floordiv_int<int64_t>(*x.lo, k);
        if (x.hi) out.hi = floordiv_int<int64_t>(*x.hi, k);
      }
      break;
    case BinOp::kDiv:
      if (y_const && k > 0 && x.lo && *x.lo >= 0) {
        out.lo = *x.lo / k;
        if (x.hi) out.hi = *x.hi / k;
      }
      break;
    case BinOp::kFloorMod:
      if (y_const && k > 0) {
        bool inside = x.lo && x.hi && *x.lo >= 0 && *x.hi < k;
        out.lo = inside ? *x.lo : 0;
        out.hi = inside ? *x.hi : k - 1;
      }
      break;
    case BinOp::kMod:
      if (y_const && k > 0 && x.lo && *x.lo >= 0) {
        out.lo = 0;
        out.hi = x.hi ? std::min<int64_t>(*x.hi, k - 1) : k - 1;
      }
      break;
    case BinOp::kMin:
      if (x.lo && y.lo) out.lo = std::min(*x.lo, *y.lo);
      if (x.hi || y.hi) out.hi = x.hi && y.hi ? std::min(*x.hi, *y.hi) : (x.hi ? x.hi : y.hi);
      break;
    case BinOp::kMax:
      if (x.lo || y.lo) out.lo = x.lo && y.lo ? std::max(*x.lo, *y.lo) : (x.lo ? x.lo : y.lo);
      if (x.hi && y.hi) out.hi = std::max(*x.hi, *y.hi);
      break;
    default: break;
  }
  return out;
}

}  // namespace

IntBounds int_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges) { return bounds_rec(e, ranges, 0); }

bool const_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int64_t* lo, int64_t* hi) {
  IntBounds b = bounds_rec(e, ranges, 0);
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

AccessRegions dst_first_access(const TileOpNode& op, size_t num_writes) {
  AccessRegions acc;
  size_t seen = 0;
  for (auto& a : op.args) {
    if (!a.is_region()) continue;
    (seen++ < num_writes ? acc.writes : acc.reads).push_back(a.region);
  }
  return acc;
}

}  // namespace tl
