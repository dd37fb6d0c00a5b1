// Native execution of the vector (V pipe) tile ops on UB: element-wise unary/binary ops, casts,
// compare/select, reductions, cumsum, transpose, broadcast, axpy, fill.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "ir/error.h"
#include "sim/program.h"
#include "sim/tile_exec.h"

namespace tl::sim {

namespace {

struct Elems {
  // The operand's elements in row-major order of its region (squeezed), as doubles.
  std::vector<double> v;
  std::vector<int64_t> offs;  // element offsets from the origin
};

void collect_offsets(const Operand& o, std::vector<int64_t>* offs) {
  offs->clear();
  offs->reserve(o.elements());
  int64_t ext[4] = {1, 1, 1, 1}, st[4] = {0, 0, 0, 0};
  for (int d = 0; d < o.nd; ++d) {
    ext[4 - o.nd + d] = o.ext[d];
    st[4 - o.nd + d] = o.stride[d];
  }
  for (int64_t a = 0; a < ext[0]; ++a)
    for (int64_t b = 0; b < ext[1]; ++b)
      for (int64_t c = 0; c < ext[2]; ++c)
        for (int64_t d = 0; d < ext[3]; ++d) offs->push_back(a * st[0] + b * st[1] + c * st[2] + d * st[3]);
}

// The element loops below decide the data type once per operand (float32, the common case, without
// the per-element conversion switch) and the operation once per instruction: the suite's element-wise
// programs on 55 M elements spent most of their time comparing operation names per element.
Elems read(const Operand& o) {
  Elems e;
  collect_offsets(o, &e.offs);
  const size_t n = e.offs.size();
  e.v.resize(n);
  if (o.dt == DataType::Float32()) {
    const float* p = reinterpret_cast<const float*>(o.ptr);
    for (size_t i = 0; i < n; ++i) e.v[i] = p[e.offs[i]];
    return e;
  }
  int64_t eb = o.dt.element_bytes();
  for (size_t i = 0; i < n; ++i) e.v[i] = load_scalar(o.ptr + e.offs[i] * eb, o.dt);
  return e;
}

void write(const Operand& o, const std::vector<int64_t>& offs, const std::vector<double>& v) {
  if (o.dt == DataType::Float32()) {
    float* p = reinterpret_cast<float*>(o.ptr);
    for (size_t i = 0; i < offs.size(); ++i) p[offs[i]] = static_cast<float>(v[i]);
    return;
  }
  int64_t eb = o.dt.element_bytes();
  for (size_t i = 0; i < offs.size(); ++i) store_scalar(o.ptr + offs[i] * eb, o.dt, v[i]);
}

std::vector<int64_t> squeezed(const Operand& o) {
  std::vector<int64_t> s;
  for (int d = 0; d < o.nd; ++d)
    if (o.ext[d] != 1) s.push_back(o.ext[d]);
  return s;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

// Expands `src` to the element order of `dst` with numpy-style broadcasting (equal ranks, unit
// extents broadcast), or returns src's elements when the squeezed shapes are equal.
std::vector<double> expand(const Operand& dst, const Operand& src, const std::string& where) {
  Elems s = read(src);
  int64_t n = dst.elements();
  if (static_cast<int64_t>(s.v.size()) == n && squeezed(dst) == squeezed(src)) return s.v;
  if (s.v.size() == 1) return std::vector<double>(n, s.v[0]);
  if (src.nd == dst.nd) {
    bool ok = true;
    for (int d = 0; d < dst.nd; ++d)
      if (src.ext[d] != dst.ext[d] && src.ext[d] != 1) ok = false;
    if (ok) {
      std::vector<double> out(n);
      int64_t idx[4] = {0, 0, 0, 0};
      for (int64_t i = 0; i < n; ++i) {
        int64_t rem = i, sidx = 0, mul = 1;
        for (int d = dst.nd - 1; d >= 0; --d) {
          idx[d] = rem % dst.ext[d];
          rem /= dst.ext[d];
        }
        for (int d = src.nd - 1; d >= 0; --d) {
          sidx += (src.ext[d] == 1 ? 0 : idx[d]) * mul;
          mul *= src.ext[d];
        }
        out[i] = s.v[sidx];
      }
      return out;
    }
  }
  // A row vector [R] against [R, C]: broadcast along the last axis (per-row scalars).
  auto sd = squeezed(dst), ss = squeezed(src);
  if (ss.size() == 1 && sd.size() == 2 && ss[0] == sd[0]) {
    std::vector<double> out(n);
    for (int64_t i = 0; i < sd[0]; ++i)
      for (int64_t j = 0; j < sd[1]; ++j) out[i * sd[1] + j] = s.v[i];
    return out;
  }
  throw_error<Error>(where, "operand shape ", shape_str(squeezed(src)), " does not match the destination shape ",
                     shape_str(squeezed(dst)));
}

double round_mode(double v, const std::string& mode, bool to_int) {
  if (mode == "CAST_FLOOR") return std::floor(v);
  if (mode == "CAST_CEIL") return std::ceil(v);
  if (mode == "CAST_ROUND") return std::round(v);
  if (mode == "CAST_TRUNC") return std::trunc(v);
  if (mode == "CAST_RINT" || mode == "CAST_ODD") return to_int ? std::nearbyint(v) : v;
  return to_int ? std::trunc(v) : v;  // CAST_NONE
}

using UnaryFn = double (*)(double);
using BinaryFn = double (*)(double, double);

// The element function of a unary vector op.
UnaryFn unary_fn(const std::string& n) {
  if (n == "exp") return [](double x) { return std::exp(x); };
  if (n == "exp2") return [](double x) { return std::exp2(x); };
  if (n == "ln" || n == "log") return [](double x) { return std::log(x); };
  if (n == "abs") return [](double x) { return std::fabs(x); };
  if (n == "reciprocal") return [](double x) { return 1.0 / x; };
  if (n == "sqrt") return [](double x) { return std::sqrt(x); };
  if (n == "rsqrt") return [](double x) { return 1.0 / std::sqrt(x); };
  if (n == "relu") return [](double x) { return x > 0 ? x : 0.0; };
  if (n == "sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (n == "silu") return [](double x) { return x / (1.0 + std::exp(-x)); };
  if (n == "sin") return [](double x) { return std::sin(x); };
  if (n == "cos") return [](double x) { return std::cos(x); };
  if (n == "neg") return [](double x) { return -x; };
  if (n == "tanh") return [](double x) { return std::tanh(x); };
  throw_error<NotImplemented>("not implemented: vector op '", n, "' on target ascend");
}

// The element function of a binary vector op.
BinaryFn binary_fn(const std::string& n) {
  if (n == "add") return [](double a, double b) { return a + b; };
  if (n == "sub") return [](double a, double b) { return a - b; };
  if (n == "mul") return [](double a, double b) { return a * b; };
  if (n == "div") return [](double a, double b) { return a / b; };
  if (n == "max") return [](double a, double b) { return std::max(a, b); };
  if (n == "min") return [](double a, double b) { return std::min(a, b); };
  if (n == "pow") return [](double a, double b) { return std::pow(a, b); };
  // Integer tiles (the op checks the dtype); their values are exact in a double.
  if (n == "bitwise_and") return [](double a, double b) { return double(int64_t(a) & int64_t(b)); };
  if (n == "bitwise_or") return [](double a, double b) { return double(int64_t(a) | int64_t(b)); };
  if (n == "bitwise_xor") return [](double a, double b) { return double(int64_t(a) ^ int64_t(b)); };
  throw_error<NotImplemented>("not implemented: vector op '", n, "' on target ascend");
}

// The comparison of T.tile.compare's mode (1.0 where it holds).
BinaryFn compare_fn(const std::string& mode) {
  if (mode == "EQ") return [](double a, double b) { return a == b ? 1.0 : 0.0; };
  if (mode == "NE") return [](double a, double b) { return a != b ? 1.0 : 0.0; };
  if (mode == "GT") return [](double a, double b) { return a > b ? 1.0 : 0.0; };
  if (mode == "GE") return [](double a, double b) { return a >= b ? 1.0 : 0.0; };
  if (mode == "LT") return [](double a, double b) { return a < b ? 1.0 : 0.0; };
  if (mode == "LE") return [](double a, double b) { return a <= b ? 1.0 : 0.0; };
  throw_error<ValueError>("T.tile.compare: unknown mode '", mode, "'; expected EQ, NE, GT, GE, LT or LE");
}

// Reads a mask operand as one flag per element of `n` (element-wise bool/uint8, or a bitmask).
std::vector<bool> read_mask(const Operand& m, int64_t n, const std::string& where) {
  Elems e = read(m);
  std::vector<bool> out(n);
  if (static_cast<int64_t>(e.v.size()) == n) {
    for (int64_t i = 0; i < n; ++i) out[i] = e.v[i] != 0;
  } else if (static_cast<int64_t>(e.v.size()) * m.dt.bits == n) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t bits = static_cast<int64_t>(e.v[i / m.dt.bits]);
      out[i] = (bits >> (i % m.dt.bits)) & 1;
    }
  } else {
    throw_error<Error>(where, "mask has ", e.v.size(), " elements for ", n, " values");
  }
  return out;
}

void reduce(const Operand& dst, const Operand& src, const std::string& type, int64_t dim, bool clear,
            const std::string& where) {
  auto ss = squeezed(src);
  if (ss.empty()) ss.push_back(1);
  int64_t r = static_cast<int64_t>(ss.size());
  if (dim < 0) dim += r;
  if (dim < 0 || dim >= r) throw_error<Error>(where, "reduction dim ", dim, " out of range for shape ", shape_str(ss));
  int64_t outer = 1, inner = 1, len = ss[dim];
  for (int64_t d = 0; d < dim; ++d) outer *= ss[d];
  for (int64_t d = dim + 1; d < r; ++d) inner *= ss[d];
  Elems s = read(src);
  Elems d = read(dst);
  if (static_cast<int64_t>(d.v.size()) != outer * inner)
    throw_error<Error>(where, "destination has ", d.v.size(), " elements, the reduction of ", shape_str(ss),
                       " over dim ", dim, " has ", outer * inner);
  const bool is_abs = type == "abssum" || type == "absmax";
  const int kind = type == "sum" || type == "abssum" ? 0 : type == "max" || type == "absmax" ? 1 : type == "min" ? 2 : -1;
  if (kind < 0) throw_error<ValueError>(where, "unknown reduction type '", type, "'");
  const double init = kind == 1 ? -std::numeric_limits<double>::infinity()
                      : kind == 2 ? std::numeric_limits<double>::infinity() : 0.0;
  auto combine = [kind](double acc, double v) { return kind == 0 ? acc + v : kind == 1 ? std::max(acc, v) : std::min(acc, v); };
  std::vector<double> out(outer * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double acc = init;
      for (int64_t k = 0; k < len; ++k) {
        double v = s.v[(o * len + k) * inner + i];
        acc = combine(acc, is_abs ? std::fabs(v) : v);
      }
      if (!clear) acc = combine(acc, d.v[o * inner + i]);
      out[o * inner + i] = acc;
    }
  write(dst, d.offs, out);
}

}  // namespace

void exec_vector(const InstrTemplate& t, const Operand* ops, int nops, bool has_scalar, double scalar,
                 const std::string& where) {
  const std::string& n = t.fn.empty() ? t.node->op : t.fn;
  if (nops < 1) throw_error<Error>(where, "expects a destination buffer");
  const Operand& dst = ops[0];
  Elems d;
  collect_offsets(dst, &d.offs);
  int64_t count = static_cast<int64_t>(d.offs.size());
  auto src_or_scalar = [&](int i) -> std::vector<double> {
    if (i < nops) return expand(dst, ops[i], where);
    if (has_scalar) return std::vector<double>(count, scalar);
    throw_error<Error>(where, "missing operand");
  };
  if (t.kind == TileOpKind::kFill) {
    exec_fill(dst, scalar, where);
    return;
  }
  if (t.kind == TileOpKind::kReduce) {
    reduce(ops[1], ops[0], t.mode, t.dim, t.clear, where);
    return;
  }
  if (n == "reduce_sum" || n == "reduce_max" || n == "reduce_min") {
    if (nops < 2) throw_error<Error>(where, "expects (dst, src)");
    reduce(dst, ops[1], n.substr(7), t.dim, t.clear, where);
    return;
  }
  if (t.kind == TileOpKind::kCumsum) {
    // cumsum(src, dst): inclusive scan along `dim` of the squeezed source.
    const Operand& src = ops[0];
    const Operand& out = nops > 1 ? ops[1] : ops[0];
    auto ss = squeezed(src);
    if (ss.empty()) ss.push_back(1);
    int64_t r = static_cast<int64_t>(ss.size()), dim = t.dim < 0 ? t.dim + r : t.dim;
    if (dim < 0 || dim >= r) dim = 0;
    int64_t outer = 1, inner = 1, len = ss[dim];
    for (int64_t k = 0; k < dim; ++k) outer *= ss[k];
    for (int64_t k = dim + 1; k < r; ++k) inner *= ss[k];
    Elems s = read(src);
    Elems o;
    collect_offsets(out, &o.offs);
    std::vector<double> res(s.v.size());
    for (int64_t a = 0; a < outer; ++a)
      for (int64_t i = 0; i < inner; ++i) {
        double acc = 0;
        for (int64_t kk = 0; kk < len; ++kk) {
          int64_t k = t.reverse ? len - 1 - kk : kk;
          acc += s.v[(a * len + k) * inner + i];
          res[(a * len + k) * inner + i] = acc;
        }
      }
    write(out, o.offs, res);
    return;
  }
  if (n == "createvecindex") {
    // first, first + 1, ... in row-major order of dst's region (exact in a double for these dtypes).
    std::vector<double> idx(count);
    for (int64_t i = 0; i < count; ++i) idx[i] = scalar + double(i);
    write(dst, d.offs, idx);
    return;
  }
  if (n == "gather") {
    // dst[i] = the element at byte (base + offsets[i]) from src's origin; the bytes move unchanged.
    if (nops < 3 || !has_scalar) throw_error<Error>(where, "expects (dst, src, src_offset, src_base_addr)");
    const Operand& src = ops[1];
    const Operand& off = ops[2];
    std::vector<int64_t> ooffs;
    collect_offsets(off, &ooffs);
    const int64_t eb = dst.dt.element_bytes();
    int64_t span = 1;  // elements from src's origin to the last element of its region
    for (int k = 0; k < src.nd; ++k) span += (src.ext[k] - 1) * src.stride[k];
    const int64_t n_out = std::min<int64_t>(count, static_cast<int64_t>(ooffs.size()));
    const int64_t base = static_cast<int64_t>(scalar);
    const int64_t ob = off.dt.element_bytes();
    for (int64_t i = 0; i < n_out; ++i) {
      int64_t byte = base + load_int(off.ptr + ooffs[i] * ob, off.dt);
      if (byte < 0 || byte % eb != 0 || byte / eb >= span)
        throw_error<RuntimeError>(where, "gather offset ", i, " selects byte ", byte, " of '",
                                  src.buf ? src.buf->name : std::string("src"), "' (base ", base, " + offset ",
                                  byte - base, "), which is ",
                                  byte % eb != 0 && byte >= 0 ? "not a multiple of the element size " + std::to_string(eb)
                                                              : "outside its " + std::to_string(span * eb) + " bytes",
                                  "; offsets are byte offsets from src's first element (index * ", eb, ")");
      std::memcpy(dst.ptr + d.offs[i] * eb, src.ptr + byte, static_cast<size_t>(eb));
    }
    return;
  }
  std::vector<double> out(count);
  if (n == "cast") {
    auto s = src_or_scalar(1);
    bool to_int = !dst.dt.is_float();
    const std::string& m = t.mode;
    if (m.empty() || m == "CAST_NONE") {
      for (int64_t i = 0; i < count; ++i) out[i] = to_int ? std::trunc(s[i]) : s[i];
    } else {
      for (int64_t i = 0; i < count; ++i) out[i] = round_mode(s[i], m, to_int);
    }
  } else if (n == "axpy") {
    Elems cur = read(dst);
    auto s = src_or_scalar(1);
    for (int64_t i = 0; i < count; ++i) out[i] = cur.v[i] + scalar * s[i];
  } else if (n == "compare") {
    auto a = src_or_scalar(1);
    auto b = src_or_scalar(2);
    int64_t nvals = static_cast<int64_t>(a.size());
    if (nvals == count) {
      BinaryFn f = compare_fn(t.mode);
      for (int64_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
    } else {
      throw_error<Error>(where, "compare destination must have one element per compared value");
    }
  } else if (n == "select") {
    if (nops < 3) throw_error<Error>(where, "expects (dst, mask, a, b)");
    auto mask = read_mask(ops[1], count, where);
    auto a = expand(dst, ops[2], where);
    auto b = src_or_scalar(3);
    for (int64_t i = 0; i < count; ++i) out[i] = mask[i] ? a[i] : b[i];
  } else if (n == "transpose") {
    auto sd = squeezed(dst);
    if (nops < 2 || sd.size() != 2 || squeezed(ops[1]) != std::vector<int64_t>{sd[1], sd[0]})
      throw_error<Error>(where, "transpose expects dst [N, M] and src [M, N]");
    Elems s = read(ops[1]);
    for (int64_t i = 0; i < sd[0]; ++i)
      for (int64_t j = 0; j < sd[1]; ++j) out[i * sd[1] + j] = s.v[j * sd[0] + i];
  } else if (n == "broadcast" || t.kind == TileOpKind::kCopy) {
    out = src_or_scalar(1);
  } else if (nops + (has_scalar ? 1 : 0) >= 3) {
    BinaryFn f = binary_fn(n);
    auto a = src_or_scalar(1);
    auto b = src_or_scalar(2);
    for (int64_t i = 0; i < count; ++i) out[i] = f(a[i], b[i]);
  } else {
    UnaryFn f = unary_fn(n);
    auto a = src_or_scalar(1);
    for (int64_t i = 0; i < count; ++i) out[i] = f(a[i]);
  }
  write(dst, d.offs, out);
}

}  // namespace tl::sim
