#include "sim/tile_exec.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>
#include <vector>

#include "ir/error.h"
#include "tl/common/float_formats.h"
#include "sim/program.h"

namespace tl::sim {

int64_t Operand::elements() const {
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= ext[i];
  return n;
}
int64_t Operand::valid_elements() const {
  int64_t n = 1;
  for (int i = 0; i < nd; ++i) n *= valid[i];
  return n;
}

double load_scalar(const uint8_t* p, DataType t) {
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) { float f; std::memcpy(&f, p, 4); return f; }
      if (t.bits == 16) { uint16_t h; std::memcpy(&h, p, 2); return ff::half_bits_to_float(h); }
      if (t.bits == 64) { double d; std::memcpy(&d, p, 8); return d; }
      break;
    case DataType::kBFloat: { uint16_t h; std::memcpy(&h, p, 2); return ff::bfloat16_bits_to_float(h); }
    default: return static_cast<double>(load_int(p, t));
  }
  throw_error<NotImplemented>("not implemented: dtype ", t.str(), " in the ascend simulator");
}

void store_scalar(uint8_t* p, DataType t, double v) {
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) { float f = static_cast<float>(v); std::memcpy(p, &f, 4); return; }
      if (t.bits == 16) { uint16_t h = ff::float_to_half_bits(static_cast<float>(v)); std::memcpy(p, &h, 2); return; }
      if (t.bits == 64) { std::memcpy(p, &v, 8); return; }
      break;
    case DataType::kBFloat: { uint16_t h = ff::float_to_bfloat16_bits(static_cast<float>(v)); std::memcpy(p, &h, 2); return; }
    case DataType::kBool: *p = v != 0; return;
    default: {
      double r = std::nearbyint(v);
      if (std::isnan(r)) r = 0;
      store_int(p, t, static_cast<int64_t>(std::clamp(r, -9.2e18, 9.2e18)));
      return;
    }
  }
  throw_error<NotImplemented>("not implemented: dtype ", t.str(), " in the ascend simulator");
}

int64_t load_int(const uint8_t* p, DataType t) {
  if (t.is_bool()) return *p != 0;
  if (t.is_float()) return static_cast<int64_t>(load_scalar(p, t));
  bool s = t.is_int();
  switch (t.bits) {
    case 8: return s ? int64_t(int8_t(*p)) : int64_t(*p);
    case 16: { uint16_t v; std::memcpy(&v, p, 2); return s ? int64_t(int16_t(v)) : int64_t(v); }
    case 32: { uint32_t v; std::memcpy(&v, p, 4); return s ? int64_t(int32_t(v)) : int64_t(v); }
    case 64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    default: break;
  }
  throw_error<NotImplemented>("not implemented: dtype ", t.str(), " in the ascend simulator");
}

void store_int(uint8_t* p, DataType t, int64_t v) {
  if (t.is_bool()) { *p = v != 0; return; }
  if (t.is_float()) { store_scalar(p, t, static_cast<double>(v)); return; }
  switch (t.bits) {
    case 8: { uint8_t x = static_cast<uint8_t>(v); *p = x; return; }
    case 16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); return; }
    case 32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); return; }
    case 64: std::memcpy(p, &v, 8); return;
    default: break;
  }
  throw_error<NotImplemented>("not implemented: dtype ", t.str(), " in the ascend simulator");
}

namespace {

std::string shape_str(const Operand& o) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < o.nd; ++i) os << (i ? ", " : "") << o.ext[i];
  os << "]";
  return os.str();
}

// Strides of `src` aligned to the dimensions of `dst` (0 = broadcast). Equal ranks broadcast
// numpy-style over unit extents; otherwise the squeezed shapes must be equal.
bool align_strides(const Operand& dst, const Operand& src, int64_t out[4]) {
  for (int i = 0; i < 4; ++i) out[i] = 0;
  if (src.nd == dst.nd) {
    bool ok = true;
    for (int d = 0; d < dst.nd; ++d) {
      if (src.ext[d] == dst.ext[d]) out[d] = src.stride[d];
      else if (src.ext[d] == 1) out[d] = 0;
      else ok = false;
    }
    if (ok) return true;
  }
  std::vector<int> dd, sd;
  for (int d = 0; d < dst.nd; ++d)
    if (dst.ext[d] != 1) dd.push_back(d);
  for (int d = 0; d < src.nd; ++d)
    if (src.ext[d] != 1) sd.push_back(d);
  if (dd.size() == sd.size()) {
    bool ok = true;
    for (size_t i = 0; i < dd.size(); ++i)
      if (dst.ext[dd[i]] != src.ext[sd[i]]) ok = false;
    if (ok) {
      for (int i = 0; i < 4; ++i) out[i] = 0;
      for (size_t i = 0; i < dd.size(); ++i) out[dd[i]] = src.stride[sd[i]];
      return true;
    }
  }
  if (src.elements() == 1) {
    for (int i = 0; i < 4; ++i) out[i] = 0;
    return true;
  }
  return false;
}

// Calls fn(dst_offset, src_offsets...) in elements for every element of dst's region.
template <int N, typename F>
void walk(const Operand& dst, const int64_t (&strides)[N][4], F&& fn) {
  int64_t ext[4] = {1, 1, 1, 1}, ds[4] = {0, 0, 0, 0};
  for (int d = 0; d < dst.nd; ++d) {
    ext[4 - dst.nd + d] = dst.ext[d];
    ds[4 - dst.nd + d] = dst.stride[d];
  }
  int64_t ss[N][4] = {};
  for (int k = 0; k < N; ++k)
    for (int d = 0; d < dst.nd; ++d) ss[k][4 - dst.nd + d] = strides[k][d];
  int64_t so[N];
  for (int64_t i0 = 0; i0 < ext[0]; ++i0)
    for (int64_t i1 = 0; i1 < ext[1]; ++i1)
      for (int64_t i2 = 0; i2 < ext[2]; ++i2) {
        int64_t dbase = i0 * ds[0] + i1 * ds[1] + i2 * ds[2];
        for (int k = 0; k < N; ++k) so[k] = i0 * ss[k][0] + i1 * ss[k][1] + i2 * ss[k][2];
        for (int64_t i3 = 0; i3 < ext[3]; ++i3) {
          int64_t o[N];
          for (int k = 0; k < N; ++k) o[k] = so[k] + i3 * ss[k][3];
          fn(dbase + i3 * ds[3], o);
        }
      }
}

[[noreturn]] void shape_error(const std::string& where, const Operand& a, const Operand& b, const char* what) {
  throw_error<Error>(where, what, ": shapes ", shape_str(a), " and ", shape_str(b), " do not match");
}

// Squeezed 2-D view (rows, cols, row stride) of an operand; false when it is not 2-D.
bool view2d(const Operand& o, int64_t* rows, int64_t* cols, int64_t* rs, int64_t* cs) {
  std::vector<int> d;
  for (int i = 0; i < o.nd; ++i)
    if (o.ext[i] != 1) d.push_back(i);
  if (d.size() > 2) return false;
  if (d.empty()) { *rows = *cols = 1; *rs = *cs = 1; return true; }
  if (d.size() == 1) {
    // A vector is one row if it is the innermost dimension, else one column.
    if (d[0] == o.nd - 1) { *rows = 1; *cols = o.ext[d[0]]; *rs = 0; *cs = o.stride[d[0]]; }
    else { *rows = o.ext[d[0]]; *cols = 1; *rs = o.stride[d[0]]; *cs = 1; }
    return true;
  }
  *rows = o.ext[d[0]];
  *cols = o.ext[d[1]];
  *rs = o.stride[d[0]];
  *cs = o.stride[d[1]];
  return true;
}

}  // namespace

void exec_copy(const Operand& src, const Operand& dst, bool transpose, bool relu, bool has_pad, double pad,
               const std::string& where) {
  int64_t eb_s = src.dt.element_bytes(), eb_d = dst.dt.element_bytes();
  if (transpose) {
    int64_t sr, sc, srs, scs, dr, dc, drs, dcs;
    if (!view2d(src, &sr, &sc, &srs, &scs) || !view2d(dst, &dr, &dc, &drs, &dcs) || sr != dc || sc != dr)
      shape_error(where, src, dst, " (transposed copy)");
    for (int64_t i = 0; i < dr; ++i)
      for (int64_t j = 0; j < dc; ++j) {
        double v = load_scalar(src.ptr + (j * srs + i * scs) * eb_s, src.dt);
        store_scalar(dst.ptr + (i * drs + j * dcs) * eb_d, dst.dt, relu && v < 0 ? 0 : v);
      }
    return;
  }
  int64_t ss[1][4];
  if (!align_strides(dst, src, ss[0]) || src.elements() != dst.elements()) shape_error(where, src, dst, "");
  // Fast path: same dtype, no tails, contiguous innermost runs.
  bool same = src.dt == dst.dt && !relu && !src.partial && !dst.partial && dst.nd > 0 &&
              dst.stride[dst.nd - 1] == 1 && ss[0][dst.nd - 1] == 1;
  if (same) {
    int64_t run = dst.ext[dst.nd - 1] * eb_d;
    Operand d1 = dst;
    d1.ext[d1.nd - 1] = 1;
    walk<1>(d1, ss, [&](int64_t doff, const int64_t* so) {
      std::memcpy(dst.ptr + doff * eb_d, src.ptr + so[0] * eb_s, run);
    });
    return;
  }
  // General path with casts, ReLU and out-of-bounds tails (reads fill `pad`, writes are dropped).
  // Positions are tracked in the destination's index space; bounds are checked per operand.
  int64_t idx[4];
  int64_t ext[4] = {1, 1, 1, 1};
  for (int d = 0; d < dst.nd; ++d) ext[d] = dst.ext[d];
  auto src_valid = [&](const int64_t* id) {
    if (!src.partial) return true;
    // Map destination indices back to source indices through the squeezed correspondence.
    std::vector<int> dd, sd;
    for (int d = 0; d < dst.nd; ++d) if (dst.ext[d] != 1) dd.push_back(d);
    for (int d = 0; d < src.nd; ++d) if (src.ext[d] != 1) sd.push_back(d);
    if (src.nd == dst.nd) {
      for (int d = 0; d < src.nd; ++d) if (id[d] >= src.valid[d]) return false;
      return true;
    }
    for (size_t k = 0; k < sd.size() && k < dd.size(); ++k) if (id[dd[k]] >= src.valid[sd[k]]) return false;
    for (int d = 0; d < src.nd; ++d) if (src.ext[d] == 1 && src.valid[d] < 1) return false;
    return true;
  };
  for (idx[0] = 0; idx[0] < ext[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < ext[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < ext[2]; ++idx[2])
        for (idx[3] = 0; idx[3] < ext[3]; ++idx[3]) {
          bool dvalid = true;
          int64_t doff = 0, soff = 0;
          for (int d = 0; d < dst.nd; ++d) {
            if (idx[d] >= dst.valid[d]) dvalid = false;
            doff += idx[d] * dst.stride[d];
            soff += idx[d] * ss[0][d];
          }
          if (!dvalid) continue;
          double v = src_valid(idx) ? load_scalar(src.ptr + soff * eb_s, src.dt) : (has_pad ? pad : 0.0);
          if (relu && v < 0) v = 0;
          store_scalar(dst.ptr + doff * eb_d, dst.dt, v);
        }
}

void exec_mma(const Operand& a, const Operand& b, const Operand& c, bool init, bool ta, bool tb,
              const std::string& where) {
  int64_t m, k, k2, n, mc, nc, ars, acs, brs, bcs, crs, ccs;
  bool ok = view2d(a, &m, &k, &ars, &acs) && view2d(b, &k2, &n, &brs, &bcs) && view2d(c, &mc, &nc, &crs, &ccs);
  if (ok && ta) {
    std::swap(m, k);
    std::swap(ars, acs);
  }
  if (ok && tb) {
    std::swap(k2, n);
    std::swap(brs, bcs);
  }
  if (!ok || k != k2 || m != mc || n != nc)
    throw_error<Error>(where, "operand shapes A ", shape_str(a), ", B ", shape_str(b), ", C ", shape_str(c),
                       " do not form C[M,N] += A[M,K] * B[K,N]");
  int64_t ea = a.dt.element_bytes(), ebb = b.dt.element_bytes(), ec = c.dt.element_bytes();
  if (c.dt.is_float() && a.dt.is_float()) {
    std::vector<float> A(m * k), B(k * n), C(m * n, 0.f);
    auto loadf = [](const uint8_t* p, DataType t) -> float {
      if (t.code == DataType::kFloat && t.bits == 16) { uint16_t h; std::memcpy(&h, p, 2); return ff::half_bits_to_float(h); }
      if (t.code == DataType::kBFloat) { uint16_t h; std::memcpy(&h, p, 2); return ff::bfloat16_bits_to_float(h); }
      if (t.code == DataType::kFloat && t.bits == 32) { float f; std::memcpy(&f, p, 4); return f; }
      return static_cast<float>(load_scalar(p, t));
    };
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j) A[i * k + j] = loadf(a.ptr + (i * ars + j * acs) * ea, a.dt);
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < n; ++j) B[i * n + j] = loadf(b.ptr + (i * brs + j * bcs) * ebb, b.dt);
    bool c32 = c.dt.code == DataType::kFloat && c.dt.bits == 32 && ccs == 1;
    if (!init) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) C[i * n + j] = loadf(c.ptr + (i * crs + j * ccs) * ec, c.dt);
    }
    for (int64_t i = 0; i < m; ++i) {
      float* crow = &C[i * n];
      for (int64_t kk = 0; kk < k; ++kk) {
        float av = A[i * k + kk];
        const float* brow = &B[kk * n];
        for (int64_t j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
    for (int64_t i = 0; i < m; ++i) {
      if (c32) {
        std::memcpy(c.ptr + i * crs * ec, &C[i * n], n * 4);
      } else {
        for (int64_t j = 0; j < n; ++j) store_scalar(c.ptr + (i * crs + j * ccs) * ec, c.dt, C[i * n + j]);
      }
    }
    return;
  }
  // Integer cube (int8 x int8 -> int32).
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = init ? 0 : load_int(c.ptr + (i * crs + j * ccs) * ec, c.dt);
      for (int64_t kk = 0; kk < k; ++kk)
        acc += load_int(a.ptr + (i * ars + kk * acs) * ea, a.dt) * load_int(b.ptr + (kk * brs + j * bcs) * ebb, b.dt);
      store_int(c.ptr + (i * crs + j * ccs) * ec, c.dt, acc);
    }
}

void exec_fill(const Operand& dst, double value, const std::string& where) {
  int64_t eb = dst.dt.element_bytes();
  uint8_t pattern[8];
  store_scalar(pattern, dst.dt, value);
  int64_t none[1][4] = {};
  walk<1>(dst, none, [&](int64_t doff, const int64_t*) { std::memcpy(dst.ptr + doff * eb, pattern, eb); });
}

void exec_atomic_add(const Operand& dst, const Operand& src, const std::string& where) {
  int64_t ss[1][4];
  if (!align_strides(dst, src, ss[0])) shape_error(where, src, dst, "");
  int64_t ed = dst.dt.element_bytes(), es = src.dt.element_bytes();
  int64_t idx[4] = {0, 0, 0, 0}, ext[4] = {1, 1, 1, 1};
  for (int d = 0; d < dst.nd; ++d) ext[d] = dst.ext[d];
  for (idx[0] = 0; idx[0] < ext[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < ext[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < ext[2]; ++idx[2])
        for (idx[3] = 0; idx[3] < ext[3]; ++idx[3]) {
          int64_t doff = 0, soff = 0;
          bool ok = true;
          for (int d = 0; d < dst.nd; ++d) {
            if (idx[d] >= dst.valid[d]) ok = false;
            doff += idx[d] * dst.stride[d];
            soff += idx[d] * ss[0][d];
          }
          if (!ok) continue;
          double v = load_scalar(dst.ptr + doff * ed, dst.dt) + load_scalar(src.ptr + soff * es, src.dt);
          store_scalar(dst.ptr + doff * ed, dst.dt, v);
        }
}

}  // namespace tl::sim
