#include "op/op_util.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
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
  if (r.region.size() != r.buffer.ndim()) {
    std::ostringstream os;
    os << role << " region of '" << r.buffer.name() << "' has " << r.region.size() << " ranges but the buffer has "
       << r.buffer.ndim() << " dimensions";
    throw_op_error_type(op, os.str());
  }
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

int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool bounds_rec(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int depth, int64_t* lo, int64_t* hi) {
  if (depth > 32 || !e.defined()) return false;
  int64_t v;
  if (is_const_int(e, &v)) {
    *lo = *hi = v;
    return true;
  }
  if (auto* var = e.as<VarNode>()) {
    auto it = ranges.find(Var(std::static_pointer_cast<const VarNode>(e.node())));
    (void)var;
    if (it == ranges.end()) return false;
    int64_t mlo, mhi, elo, ehi;
    if (!bounds_rec(it->second.min, ranges, depth + 1, &mlo, &mhi)) return false;
    if (!bounds_rec(it->second.extent, ranges, depth + 1, &elo, &ehi)) return false;
    if (ehi <= 0) return false;  // an empty loop: nothing to prove
    *lo = mlo;
    *hi = mhi + ehi - 1;
    return true;
  }
  if (auto* c = e.as<CastNode>()) {
    if (!c->dtype.is_integer() || !c->value.dtype().is_integer()) return false;
    if (!bounds_rec(c->value, ranges, depth + 1, lo, hi)) return false;
    if (c->dtype.bits < 64) {
      int64_t tmax = c->dtype.is_int() ? (int64_t(1) << (c->dtype.bits - 1)) - 1 : (int64_t(1) << c->dtype.bits) - 1;
      int64_t tmin = c->dtype.is_int() ? -(int64_t(1) << (c->dtype.bits - 1)) : 0;
      if (*lo < tmin || *hi > tmax) return false;
    }
    return true;
  }
  if (auto* s = e.as<SelectNode>()) {
    int64_t a0, a1, b0, b1;
    if (!bounds_rec(s->true_value, ranges, depth + 1, &a0, &a1) ||
        !bounds_rec(s->false_value, ranges, depth + 1, &b0, &b1))
      return false;
    *lo = std::min(a0, b0);
    *hi = std::max(a1, b1);
    return true;
  }
  auto* b = e.as<BinaryNode>();
  if (!b || !b->dtype.is_integer()) return false;
  int64_t a0, a1, b0, b1;
  if (!bounds_rec(b->a, ranges, depth + 1, &a0, &a1) || !bounds_rec(b->b, ranges, depth + 1, &b0, &b1)) return false;
  __int128 l, h;
  switch (b->op) {
    case BinOp::kAdd: l = (__int128)a0 + b0; h = (__int128)a1 + b1; break;
    case BinOp::kSub: l = (__int128)a0 - b1; h = (__int128)a1 - b0; break;
    case BinOp::kMul: {
      __int128 p[4] = {(__int128)a0 * b0, (__int128)a0 * b1, (__int128)a1 * b0, (__int128)a1 * b1};
      l = *std::min_element(p, p + 4);
      h = *std::max_element(p, p + 4);
      break;
    }
    case BinOp::kFloorDiv:
      if (b0 != b1 || b0 <= 0) return false;
      l = floordiv64(a0, b0);
      h = floordiv64(a1, b0);
      break;
    case BinOp::kDiv:
      if (b0 != b1 || b0 <= 0 || a0 < 0) return false;
      l = a0 / b0;
      h = a1 / b0;
      break;
    case BinOp::kFloorMod:
      if (b0 != b1 || b0 <= 0) return false;
      if (a0 >= 0 && a1 < b0) {
        l = a0;
        h = a1;
      } else {
        l = 0;
        h = b0 - 1;
      }
      break;
    case BinOp::kMod:
      if (b0 != b1 || b0 <= 0 || a0 < 0) return false;
      l = 0;
      h = std::min<int64_t>(a1, b0 - 1);
      break;
    case BinOp::kMin: l = std::min(a0, b0); h = std::min(a1, b1); break;
    case BinOp::kMax: l = std::max(a0, b0); h = std::max(a1, b1); break;
    default: return false;
  }
  if (!clamp_ok(l) || !clamp_ok(h)) return false;
  *lo = static_cast<int64_t>(l);
  *hi = static_cast<int64_t>(h);
  return true;
}

}  // namespace

bool const_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int64_t* lo, int64_t* hi) {
  return bounds_rec(e, ranges, 0, lo, hi);
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
    int64_t lo = 0, hi = 0, dmin = 0, dmax = 0;
    bool have = const_bounds(idx, ranges, &lo, &hi);
    bool have_dim = const_bounds(dim, ranges, &dmin, &dmax);
    if (!(have && lo >= 0)) out.push_back(idx >= make_int(0, idx.dtype()));
    if (!(have && have_dim && hi < dmin)) out.push_back(idx < dim);
  }
  return out;
}

Expr conjunction(const std::vector<Expr>& conds) {
  Expr c;
  for (auto& x : conds) c = c.defined() ? (c && x) : x;
  return c.defined() ? c : make_bool(true);
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
