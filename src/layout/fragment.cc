#include "layout/fragment.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/int_arith.h"
#include "layout/layout.h"

namespace tl {

namespace {

std::string mode_str(const FragmentMode& m) {
  std::ostringstream os;
  if (m.is_replica()) {
    os << "rep " << m.extent << " -> t*" << m.thread_stride;
  } else {
    os << "d" << m.dim << " " << m.extent << "@" << m.dim_stride << " -> "
       << (m.on_threads() ? "t*" + std::to_string(m.thread_stride) : "r*" + std::to_string(m.reg_stride));
  }
  return os.str();
}

// Checks that the strides of `ms` (by `stride_of`) form a compact mixed radix; returns the product.
template <typename F>
int64_t check_compact(std::vector<FragmentMode> ms, F stride_of, const std::string& what,
                      const std::vector<FragmentMode>& all, const std::vector<int64_t>& shape) {
  std::sort(ms.begin(), ms.end(), [&](const FragmentMode& a, const FragmentMode& b) { return stride_of(a) < stride_of(b); });
  int64_t expect = 1;
  for (const FragmentMode& m : ms) {
    if (stride_of(m) != expect) {
      std::ostringstream os;
      os << "invalid fragment " << shape_str(shape) << ": the " << what << " digits are not compact (expected stride "
         << expect << ", found " << mode_str(m) << "); modes:";
      for (const FragmentMode& x : all) os << " {" << mode_str(x) << "}";
      throw LayoutError(os.str());
    }
    expect *= m.extent;
  }
  return expect;
}

std::vector<FragmentMode> normalize(std::vector<FragmentMode> ms) {
  ms.erase(std::remove_if(ms.begin(), ms.end(), [](const FragmentMode& m) { return m.extent == 1; }), ms.end());
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < ms.size() && !changed; ++i) {
      for (size_t j = 0; j < ms.size() && !changed; ++j) {
        if (i == j) continue;
        const FragmentMode& a = ms[i];
        const FragmentMode& b = ms[j];
        if (a.dim != b.dim || a.on_threads() != b.on_threads()) continue;
        bool dims_adjacent = a.is_replica() || b.dim_stride == a.dim_stride * a.extent;
        bool space_adjacent = a.on_threads() ? b.thread_stride == a.thread_stride * a.extent
                                             : b.reg_stride == a.reg_stride * a.extent;
        if (dims_adjacent && space_adjacent) {
          FragmentMode merged = a;
          merged.extent = a.extent * b.extent;
          ms[i] = merged;
          ms.erase(ms.begin() + static_cast<std::ptrdiff_t>(j));
          changed = true;
        }
      }
    }
  }
  std::sort(ms.begin(), ms.end(), [](const FragmentMode& a, const FragmentMode& b) {
    if (a.dim != b.dim) return a.dim < b.dim;
    if (a.dim_stride != b.dim_stride) return a.dim_stride < b.dim_stride;
    return a.thread_stride < b.thread_stride;
  });
  return ms;
}

Expr digit_expr(const Expr& x, int64_t stride, int64_t extent, bool top) {
  Expr d = stride == 1 ? x : floordiv(x, make_int(stride, x.dtype()));
  return top ? d : floormod(d, make_int(extent, x.dtype()));
}

Expr scaled(const Expr& e, int64_t s) { return s == 1 ? e : e * make_int(s, e.dtype()); }

}  // namespace

Fragment Fragment::make(std::vector<int64_t> shape, std::vector<FragmentMode> modes) {
  for (int64_t s : shape)
    if (s <= 0) throw_error<LayoutError>("invalid fragment ", shape_str(shape), ": every extent must be positive");
  for (const FragmentMode& m : modes) {
    bool ok = m.extent >= 1 && m.dim < static_cast<int>(shape.size()) &&
              (m.is_replica() ? (m.dim_stride == 0 && m.thread_stride > 0 && m.reg_stride == 0)
                              : (m.dim_stride > 0 && ((m.thread_stride > 0) != (m.reg_stride > 0))));
    if (!ok) throw_error<LayoutError>("invalid fragment ", shape_str(shape), ": malformed mode {", mode_str(m), "}");
  }
  auto n = std::make_shared<FragmentNode>();
  n->shape = shape;
  n->modes = normalize(std::move(modes));
  const auto& ms = n->modes;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::vector<FragmentMode> dm;
    for (const FragmentMode& m : ms)
      if (m.dim == static_cast<int>(d)) dm.push_back(m);
    int64_t slots = check_compact(dm, [](const FragmentMode& m) { return m.dim_stride; },
                                  "dimension " + std::to_string(d), ms, shape);
    if (slots < shape[d])
      throw_error<LayoutError>("invalid fragment ", shape_str(shape), ": the digits of dimension ", d, " cover ",
                               slots, " slots for an extent of ", shape[d]);
  }
  std::vector<FragmentMode> tm, rm;
  for (const FragmentMode& m : ms) (m.on_threads() ? tm : rm).push_back(m);
  n->num_threads = check_compact(tm, [](const FragmentMode& m) { return m.thread_stride; }, "thread", ms, shape);
  n->num_regs = check_compact(rm, [](const FragmentMode& m) { return m.reg_stride; }, "register", ms, shape);
  for (const FragmentMode& m : ms)
    if (m.is_replica()) n->replicate *= m.extent;
  return Fragment(std::move(n));
}

Fragment Fragment::with_thread_offset(int64_t offset) const {
  if (offset < 0) throw_error<LayoutError>("invalid fragment ", shape_str(shape()), ": thread offset ", offset, " < 0");
  if (offset == thread_offset()) return *this;
  auto n = std::make_shared<FragmentNode>();
  n->shape = node_->shape;
  n->modes = node_->modes;
  n->num_threads = node_->num_threads;
  n->num_regs = node_->num_regs;
  n->replicate = node_->replicate;
  n->thread_offset = offset;
  return Fragment(std::move(n));
}

int64_t Fragment::num_elements() const {
  int64_t n = 1;
  for (int64_t s : shape()) n *= s;
  return n;
}

std::vector<int64_t> Fragment::padded_shape() const {
  std::vector<int64_t> p(shape().size(), 1);
  for (const FragmentMode& m : modes())
    if (!m.is_replica()) p[static_cast<size_t>(m.dim)] *= m.extent;
  return p;
}

bool Fragment::padded() const { return padded_shape() != shape(); }

// ---------------------------------------------------------------------------------------------
// Expressions.

namespace {

// Whether `m` is the most significant digit of its dimension / of its space.
bool top_of_dim(const std::vector<FragmentMode>& ms, const FragmentMode& m) {
  for (const FragmentMode& x : ms)
    if (x.dim == m.dim && !x.is_replica() && x.dim_stride > m.dim_stride) return false;
  return true;
}
bool top_of_space(const std::vector<FragmentMode>& ms, const FragmentMode& m) {
  for (const FragmentMode& x : ms) {
    if (x.on_threads() != m.on_threads()) continue;
    if (m.on_threads() ? x.thread_stride > m.thread_stride : x.reg_stride > m.reg_stride) return false;
  }
  return true;
}

}  // namespace

Expr Fragment::thread_of(const std::vector<Expr>& indices, const Expr& replica) const {
  if (indices.size() != shape().size())
    throw_error<LayoutError>("fragment ", shape_str(shape()), " indexed with ", indices.size(), " indices");
  DataType t = indices.empty() ? DataType::Int32() : indices[0].dtype();
  Expr out = make_int(0, t);
  int64_t rep_base = 1;
  std::vector<FragmentMode> reps;
  for (const FragmentMode& m : modes())
    if (m.is_replica()) reps.push_back(m);
  std::sort(reps.begin(), reps.end(), [](auto& a, auto& b) { return a.thread_stride < b.thread_stride; });
  for (const FragmentMode& m : modes()) {
    if (!m.on_threads() || m.is_replica()) continue;
    out = out + scaled(digit_expr(indices[static_cast<size_t>(m.dim)], m.dim_stride, m.extent, top_of_dim(modes(), m)),
                       m.thread_stride);
  }
  for (size_t k = 0; k < reps.size(); ++k) {
    Expr d = digit_expr(replica, rep_base, reps[k].extent, k + 1 == reps.size());
    out = out + scaled(d, reps[k].thread_stride);
    rep_base *= reps[k].extent;
  }
  if (thread_offset() != 0) out = out + make_int(thread_offset(), t);
  return out;
}

Expr Fragment::reg_of(const std::vector<Expr>& indices) const {
  if (indices.size() != shape().size())
    throw_error<LayoutError>("fragment ", shape_str(shape()), " indexed with ", indices.size(), " indices");
  DataType t = indices.empty() ? DataType::Int32() : indices[0].dtype();
  Expr out = make_int(0, t);
  for (const FragmentMode& m : modes()) {
    if (m.on_threads()) continue;
    out = out + scaled(digit_expr(indices[static_cast<size_t>(m.dim)], m.dim_stride, m.extent, top_of_dim(modes(), m)),
                       m.reg_stride);
  }
  return out;
}

std::vector<Expr> Fragment::index_of(const Expr& thread_in, const Expr& reg) const {
  const Expr thread = thread_offset() ? thread_in - make_int(thread_offset(), thread_in.dtype()) : thread_in;
  std::vector<Expr> idx(shape().size());
  for (size_t d = 0; d < idx.size(); ++d) idx[d] = make_int(0, thread.dtype());
  for (const FragmentMode& m : modes()) {
    if (m.is_replica()) continue;
    const Expr& src = m.on_threads() ? thread : reg;
    int64_t stride = m.on_threads() ? m.thread_stride : m.reg_stride;
    // The top register digit needs no modulo (reg < num_regs); the top thread digit keeps it so
    // threads beyond num_threads alias harmlessly (is_valid excludes them).
    bool top = !m.on_threads() && top_of_space(modes(), m);
    Expr d = digit_expr(src, stride, m.extent, top);
    idx[static_cast<size_t>(m.dim)] = idx[static_cast<size_t>(m.dim)] + scaled(d, m.dim_stride);
  }
  return idx;
}

Expr Fragment::replica_of(const Expr& thread_in) const {
  const Expr thread = thread_offset() ? thread_in - make_int(thread_offset(), thread_in.dtype()) : thread_in;
  std::vector<FragmentMode> reps;
  for (const FragmentMode& m : modes())
    if (m.is_replica()) reps.push_back(m);
  std::sort(reps.begin(), reps.end(), [](auto& a, auto& b) { return a.thread_stride < b.thread_stride; });
  Expr out = make_int(0, thread.dtype());
  int64_t base = 1;
  for (const FragmentMode& m : reps) {
    out = out + scaled(digit_expr(thread, m.thread_stride, m.extent, false), base);
    base *= m.extent;
  }
  return out;
}

Expr Fragment::is_valid(const Expr& thread, const Expr& reg, int64_t block_threads) const {
  Expr ok = make_bool(true);
  if (block_threads > thread_end()) ok = thread < make_int(thread_end(), thread.dtype());
  if (thread_offset() > 0) ok = (thread >= make_int(thread_offset(), thread.dtype())) && ok;
  std::vector<Expr> idx = index_of(thread, reg);
  std::vector<int64_t> p = padded_shape();
  for (size_t d = 0; d < idx.size(); ++d)
    if (p[d] != shape()[d]) ok = ok && (idx[d] < make_int(shape()[d], idx[d].dtype()));
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Integers.

int64_t Fragment::thread_at(const std::vector<int64_t>& index, int64_t replica) const {
  TL_ICHECK(index.size() == shape().size());
  int64_t t = 0;
  std::vector<FragmentMode> reps;
  for (const FragmentMode& m : modes()) {
    if (m.is_replica()) {
      reps.push_back(m);
    } else if (m.on_threads()) {
      t += (index[static_cast<size_t>(m.dim)] / m.dim_stride % m.extent) * m.thread_stride;
    }
  }
  std::sort(reps.begin(), reps.end(), [](auto& a, auto& b) { return a.thread_stride < b.thread_stride; });
  for (const FragmentMode& m : reps) {
    t += (replica % m.extent) * m.thread_stride;
    replica /= m.extent;
  }
  return t + thread_offset();
}

int64_t Fragment::reg_at_slow(const std::vector<int64_t>& index) const {
  int64_t r = 0;
  for (const FragmentMode& m : modes())
    if (!m.on_threads()) r += (index[static_cast<size_t>(m.dim)] / m.dim_stride % m.extent) * m.reg_stride;
  return r;
}

bool Fragment::index_at_slow(int64_t thread, int64_t reg, std::vector<int64_t>* index) const {
  for (const FragmentMode& m : modes()) {
    if (m.is_replica()) continue;
    int64_t src = m.on_threads() ? thread : reg;
    int64_t stride = m.on_threads() ? m.thread_stride : m.reg_stride;
    (*index)[static_cast<size_t>(m.dim)] += floordiv_int<int64_t>(src, stride) % m.extent * m.dim_stride;
  }
  for (size_t d = 0; d < index->size(); ++d)
    if ((*index)[d] >= shape()[d]) return false;
  return true;
}

namespace {

const FragmentTables kUntabulated;  // the marker of a fragment too large to tabulate

// The tables of `n`, or null when too large to tabulate.
std::unique_ptr<FragmentTables> make_tables(const FragmentNode& n) {
  const size_t rank = n.shape.size();
  std::vector<int64_t> padded(rank, 1);
  for (const FragmentMode& m : n.modes)
    if (!m.is_replica()) padded[static_cast<size_t>(m.dim)] *= m.extent;
  int64_t slots = 0;
  for (int64_t p : padded) slots += p;
  // At most 4 MiB of int32 entries (register tiles are far smaller); every entry is at most a
  // thread, register or slot count, so below the bound too.
  constexpr int64_t kMaxEntries = int64_t(1) << 20;
  int64_t total = (n.num_threads + n.num_regs) * static_cast<int64_t>(rank) + n.num_threads + 2 * slots;
  if (total > kMaxEntries) return nullptr;
  auto t = std::make_unique<FragmentTables>();
  t->tabulated = true;
  t->padded = padded;
  t->thread_of_dim.resize(rank);
  t->reg_of_dim.resize(rank);
  for (size_t d = 0; d < rank; ++d) {
    t->thread_of_dim[d].assign(static_cast<size_t>(padded[d]), 0);
    t->reg_of_dim[d].assign(static_cast<size_t>(padded[d]), 0);
  }
  t->thread_key.assign(static_cast<size_t>(n.num_threads), 0);
  t->index_of_thread.assign(static_cast<size_t>(n.num_threads) * rank, 0);
  t->index_of_reg.assign(static_cast<size_t>(n.num_regs) * rank, 0);
  for (const FragmentMode& m : n.modes) {
    if (m.is_replica()) continue;
    const size_t d = static_cast<size_t>(m.dim);
    const bool on_threads = m.on_threads();
    const int64_t stride = on_threads ? m.thread_stride : m.reg_stride;
    auto& of_dim = on_threads ? t->thread_of_dim[d] : t->reg_of_dim[d];
    for (int64_t i = 0; i < padded[d]; ++i)
      of_dim[static_cast<size_t>(i)] += static_cast<int32_t>(i / m.dim_stride % m.extent * stride);
    const int64_t count = on_threads ? n.num_threads : n.num_regs;
    auto& index_of = on_threads ? t->index_of_thread : t->index_of_reg;
    for (int64_t x = 0; x < count; ++x) {
      const int64_t digit = x / stride % m.extent;
      index_of[static_cast<size_t>(x) * rank + d] += static_cast<int32_t>(digit * m.dim_stride);
      if (on_threads) t->thread_key[static_cast<size_t>(x)] += static_cast<int32_t>(digit * stride);
    }
  }
  return t;
}

}  // namespace

FragmentNode::~FragmentNode() {
  const FragmentTables* t = tables.load(std::memory_order_acquire);
  if (t != &kUntabulated) delete t;
}

const FragmentTables* Fragment::build_tables() const {
  const FragmentNode& n = *node_;
  std::unique_ptr<FragmentTables> built = make_tables(n);
  const FragmentTables* mine = built ? built.get() : &kUntabulated;
  const FragmentTables* t = nullptr;
  if (n.tables.compare_exchange_strong(t, mine, std::memory_order_acq_rel, std::memory_order_acquire)) {
    built.release();
    return mine;
  }
  return t;  // another thread published first: its table (ours is freed)
}

int64_t Fragment::reg_at(const std::vector<int64_t>& index) const {
  TL_ICHECK(index.size() == shape().size());
  if (const FragmentTables* t = tables()) {
    int64_t r = 0;
    bool in_range = true;
    for (size_t d = 0; d < index.size() && in_range; ++d) {
      in_range = index[d] >= 0 && index[d] < t->padded[d];
      if (in_range) r += t->reg_of_dim[d][static_cast<size_t>(index[d])];
    }
    if (in_range) return r;
  }
  return reg_at_slow(index);
}

bool Fragment::index_at(int64_t thread, int64_t reg, std::vector<int64_t>* index) const {
  return index_at_rel(thread - thread_offset(), reg, index);
}

bool Fragment::index_at_rel(int64_t thread, int64_t reg, std::vector<int64_t>* index) const {
  index->assign(shape().size(), 0);
  if (thread < 0 || thread >= num_threads() || reg < 0 || reg >= num_regs()) return false;
  const FragmentTables* t = tables();
  if (!t) return index_at_slow(thread, reg, index);
  const size_t rank = index->size();
  const int32_t* th = t->index_of_thread.data() + static_cast<size_t>(thread) * rank;
  const int32_t* rg = t->index_of_reg.data() + static_cast<size_t>(reg) * rank;
  bool valid = true;
  for (size_t d = 0; d < rank; ++d) {
    (*index)[d] = int64_t(th[d]) + rg[d];
    valid &= (*index)[d] < shape()[d];
  }
  return valid;
}

bool Fragment::holds_slow(int64_t thread, const int64_t* index, int64_t* reg) const {
  if (thread < 0 || thread >= num_threads()) return false;
  std::vector<int64_t> idx(index, index + shape().size()), back;
  int64_t r = reg_at_slow(idx);
  if (!index_at_rel(thread, r, &back) || back != idx) return false;
  *reg = r;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Algebra.

Fragment Fragment::repeat(int dim, int64_t times, bool on_threads) const {
  if (dim < 0 || dim >= static_cast<int>(shape().size()))
    throw_error<LayoutError>("Fragment::repeat: dimension ", dim, " out of range for ", shape_str(shape()));
  if (padded_shape()[static_cast<size_t>(dim)] != shape()[static_cast<size_t>(dim)])
    throw_error<LayoutError>("Fragment::repeat: dimension ", dim, " of ", shape_str(shape()), " is padded");
  std::vector<int64_t> s = shape();
  std::vector<FragmentMode> ms = modes();
  FragmentMode m;
  m.dim = dim;
  m.extent = times;
  m.dim_stride = s[static_cast<size_t>(dim)];
  if (on_threads) m.thread_stride = num_threads();
  else m.reg_stride = num_regs();
  ms.push_back(m);
  s[static_cast<size_t>(dim)] *= times;
  return make(s, ms).with_thread_offset(thread_offset());
}

Fragment Fragment::insert_register_dim(int dim, int64_t extent) const {
  if (dim < 0 || dim > static_cast<int>(shape().size()))
    throw_error<LayoutError>("Fragment::insert_register_dim: dimension ", dim, " out of range for ",
                             shape_str(shape()));
  if (extent < 1) throw_error<LayoutError>("Fragment::insert_register_dim: extent ", extent, " must be positive");
  std::vector<int64_t> s = shape();
  s.insert(s.begin() + dim, extent);
  std::vector<FragmentMode> ms = modes();
  for (FragmentMode& m : ms)
    if (m.dim >= dim) ++m.dim;
  if (extent > 1) {
    FragmentMode m;
    m.dim = dim;
    m.extent = extent;
    m.dim_stride = 1;
    m.reg_stride = num_regs();
    ms.push_back(m);
  }
  return make(s, ms).with_thread_offset(thread_offset());
}

Fragment Fragment::replicate_on_threads(int64_t times) const {
  std::vector<FragmentMode> ms = modes();
  FragmentMode m;
  m.dim = -1;
  m.extent = times;
  m.thread_stride = num_threads();
  ms.push_back(m);
  return make(shape(), ms).with_thread_offset(thread_offset());
}

namespace {

// New register strides after dropping the register digits of `dim`.
std::map<size_t, int64_t> renumbered_regs(const std::vector<FragmentMode>& ms, int dim) {
  std::vector<size_t> keep;
  for (size_t i = 0; i < ms.size(); ++i)
    if (!ms[i].on_threads() && ms[i].dim != dim) keep.push_back(i);
  std::sort(keep.begin(), keep.end(), [&](size_t a, size_t b) { return ms[a].reg_stride < ms[b].reg_stride; });
  std::map<size_t, int64_t> out;
  int64_t stride = 1;
  for (size_t i : keep) {
    out[i] = stride;
    stride *= ms[i].extent;
  }
  return out;
}

}  // namespace

Fragment Fragment::reduce(int dim, std::vector<ThreadGroup>* groups) const {
  if (dim < 0 || dim >= static_cast<int>(shape().size()))
    throw_error<LayoutError>("Fragment::reduce: dimension ", dim, " out of range for ", shape_str(shape()));
  const auto& ms = modes();
  std::map<size_t, int64_t> regs = renumbered_regs(ms, dim);
  std::vector<FragmentMode> out;
  std::vector<ThreadGroup> gs;
  for (size_t i = 0; i < ms.size(); ++i) {
    FragmentMode m = ms[i];
    if (m.dim == dim) {
      if (m.on_threads()) {
        gs.push_back({m.extent, m.thread_stride});
        m.dim = -1;
        m.dim_stride = 0;
        out.push_back(m);
      }
      continue;
    }
    if (m.dim > dim) --m.dim;
    if (!m.on_threads()) m.reg_stride = regs.at(i);
    out.push_back(m);
  }
  std::sort(gs.begin(), gs.end(), [](auto& a, auto& b) { return a.stride < b.stride; });
  if (groups) *groups = gs;
  std::vector<int64_t> s = shape();
  s.erase(s.begin() + dim);
  if (s.empty()) s.push_back(1);
  return make(s, out).with_thread_offset(thread_offset());
}

std::vector<int64_t> Fragment::reduce_reg_map(int dim) const {
  const auto& ms = modes();
  std::map<size_t, int64_t> regs = renumbered_regs(ms, dim);
  std::vector<int64_t> out(static_cast<size_t>(num_regs()), 0);
  for (int64_t r = 0; r < num_regs(); ++r) {
    int64_t dest = 0;
    for (size_t i = 0; i < ms.size(); ++i) {
      if (ms[i].on_threads() || ms[i].dim == dim) continue;
      dest += r / ms[i].reg_stride % ms[i].extent * regs.at(i);
    }
    out[static_cast<size_t>(r)] = dest;
  }
  return out;
}

Fragment Fragment::permute(const std::vector<int>& order) const {
  const size_t n = shape().size();
  std::vector<int> inverse(n, -1);
  if (order.size() != n) throw_error<LayoutError>("Fragment::permute: ", order.size(), " dims for ", shape_str(shape()));
  for (size_t d = 0; d < n; ++d) {
    int src = order[d];
    if (src < 0 || static_cast<size_t>(src) >= n || inverse[static_cast<size_t>(src)] != -1)
      throw_error<LayoutError>("Fragment::permute: not a permutation of the dimensions of ", shape_str(shape()));
    inverse[static_cast<size_t>(src)] = static_cast<int>(d);
  }
  std::vector<int64_t> s(n);
  for (size_t d = 0; d < n; ++d) s[d] = shape()[static_cast<size_t>(order[d])];
  std::vector<FragmentMode> ms = modes();
  for (FragmentMode& m : ms)
    if (!m.is_replica()) m.dim = inverse[static_cast<size_t>(m.dim)];
  return make(s, ms).with_thread_offset(thread_offset());
}

Fragment Fragment::project(const std::vector<int>& dims) const {
  const int n = static_cast<int>(shape().size());
  std::vector<bool> keep(static_cast<size_t>(n), false);
  for (int d : dims) {
    if (d < 0 || d >= n || keep[static_cast<size_t>(d)])
      throw_error<LayoutError>("Fragment::project: bad dimension list for ", shape_str(shape()));
    keep[static_cast<size_t>(d)] = true;
  }
  Fragment f = *this;
  std::vector<int> remaining;  // original dimension of each dimension of f
  for (int d = 0; d < n; ++d) remaining.push_back(d);
  for (int d = n - 1; d >= 0; --d) {
    if (keep[static_cast<size_t>(d)]) continue;
    if (remaining.size() == 1) {
      // Projecting everything away: a scalar held by every thread that held an element.
      f = f.reduce(0);
      remaining.clear();
      break;
    }
    f = f.reduce(d);
    remaining.erase(remaining.begin() + d);
  }
  if (dims.empty()) return f;
  std::vector<int> order;
  for (int d : dims) order.push_back(static_cast<int>(std::find(remaining.begin(), remaining.end(), d) - remaining.begin()));
  return f.permute(order);
}

bool Fragment::same_as(const Fragment& other) const {
  return shape() == other.shape() && modes() == other.modes() && thread_offset() == other.thread_offset();
}

bool Fragment::is_bijective(std::string* why) const {
  int64_t slots = num_threads() * num_regs();
  if (slots > (int64_t(1) << 24)) throw_error<LayoutError>("Fragment::is_bijective: too large to enumerate");
  std::vector<char> seen(static_cast<size_t>(slots), 0);
  bool ok = true;
  for_each_index(shape(), [&](const std::vector<int64_t>& idx) {
    for (int64_t rep = 0; rep < replicate(); ++rep) {
      int64_t t = thread_at(idx, rep) - thread_offset(), r = reg_at(idx);
      std::vector<int64_t> back;
      if (t < 0 || t >= num_threads() || r < 0 || r >= num_regs()) {
        if (why) *why = "an element maps out of the thread/register space";
        ok = false;
      } else if (seen[static_cast<size_t>(t * num_regs() + r)]++) {
        if (why) *why = "two elements share thread " + std::to_string(t) + " register " + std::to_string(r);
        ok = false;
      } else if (!index_at_rel(t, r, &back) || back != idx) {
        if (why) *why = "the inverse map disagrees at thread " + std::to_string(t) + " register " + std::to_string(r);
        ok = false;
      }
      if (!ok) return false;
    }
    return true;
  });
  if (ok && !padded()) {
    for (char c : seen)
      if (!c) {
        if (why) *why = "some (thread, register) slot holds no element";
        return false;
      }
  }
  return ok;
}

std::string Fragment::str() const {
  std::ostringstream os;
  os << "Fragment" << shape_str(shape()) << "(threads=" << num_threads() << ", regs=" << num_regs();
  if (replicate() > 1) os << ", replicate=" << replicate();
  if (thread_offset() != 0) os << ", thread_offset=" << thread_offset();
  os << ":";
  for (const FragmentMode& m : modes()) os << " {" << mode_str(m) << "}";
  os << ")";
  return os.str();
}

// ---------------------------------------------------------------------------------------------

Fragment make_parallel_fragment(const std::vector<int64_t>& shape, int64_t num_threads, int64_t vector) {
  if (shape.empty()) throw_error<LayoutError>("make_parallel_fragment: empty shape");
  if (num_threads < 1 || vector < 1) throw_error<LayoutError>("make_parallel_fragment: bad thread count or vector");
  std::vector<FragmentMode> ms;
  int64_t threads_left = num_threads, thread_stride = 1;
  std::vector<std::pair<int, int64_t>> reg_digits;  // (dim, extent) of the top register digit per dim
  std::vector<int64_t> stride_in_dim(shape.size(), 1);
  int last = static_cast<int>(shape.size()) - 1;
  std::vector<int64_t> remaining(shape.begin(), shape.end());
  // Vector digit (lowest registers) on the last dimension.
  int64_t vec = std::min<int64_t>(vector, shape.back());
  if (vec > 1) {
    if (shape.back() % vec != 0) throw_error<LayoutError>("make_parallel_fragment: vector ", vec, " does not divide ", shape.back());
    ms.push_back({last, vec, 1, 0, 1});
    stride_in_dim[static_cast<size_t>(last)] = vec;
    remaining[static_cast<size_t>(last)] /= vec;
  }
  int64_t reg_stride = vec;
  for (int d = last; d >= 0; --d) {
    int64_t rem = remaining[static_cast<size_t>(d)];
    int64_t t = 1;
    if (threads_left > 1 && rem > 1) {
      if (rem >= threads_left) {
        t = threads_left;
      } else if (threads_left % rem == 0) {
        t = rem;
      } else {
        t = rem;
        while (threads_left % t != 0) ++t;  // smallest divisor of the thread count above rem: pad
      }
    }
    if (t > 1) {
      ms.push_back({d, t, stride_in_dim[static_cast<size_t>(d)], thread_stride, 0});
      thread_stride *= t;
      threads_left /= t;
      stride_in_dim[static_cast<size_t>(d)] *= t;
    }
    int64_t rest = (rem + t - 1) / t;
    if (rest > 1) reg_digits.push_back({d, rest});
  }
  // Registers: inner dimensions first (they were pushed last-dim first).
  for (auto& [d, e] : reg_digits) {
    ms.push_back({d, e, stride_in_dim[static_cast<size_t>(d)], 0, reg_stride});
    reg_stride *= e;
  }
  return Fragment::make(shape, ms);
}

Fragment make_replicated_fragment(const std::vector<int64_t>& shape, int64_t num_threads) {
  std::vector<FragmentMode> ms;
  int64_t reg_stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    ms.push_back({d, shape[static_cast<size_t>(d)], 1, 0, reg_stride});
    reg_stride *= shape[static_cast<size_t>(d)];
  }
  ms.push_back({-1, num_threads, 0, 1, 0});
  return Fragment::make(shape, ms);
}

}  // namespace tl
