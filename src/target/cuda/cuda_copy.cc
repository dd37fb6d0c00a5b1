// T.copy on target cuda.
//
// Thread mapping: a copy that involves a fragment follows the fragment's layout (each thread moves
// the elements it holds); other copies spread the tile over the threads row-major with a vector of
// consecutive elements per thread. A vector access (2 to 16 bytes) is used when every group of V
// consecutive elements is contiguous and V-aligned on both sides, which is proved from the
// region offsets, the strides and the layouts; otherwise elements move one by one. Reads of global
// tensors outside their shape produce zeros and writes there are dropped (whole groups when the
// tensor's last extent is a multiple of V, else element by element).
#include <algorithm>

#include "ir/error.h"
#include "ir/tile_op.h"
#include "layout/swizzle.h"
#include "op/op_util.h"
#include "target/cuda/cuda_ops.h"
#include "target/cuda/cuda_tma.h"

namespace tl {

namespace {

bool is_frag(const Buffer& b) { return b.scope() == MemScope::kFragment; }

// Index of the last dimension of `r` with a non-unit extent (-1 when all are unit).
int last_kept_dim(const BufferRegion& r) {
  for (int d = static_cast<int>(r.region.size()) - 1; d >= 0; --d)
    if (!is_one(r.region[static_cast<size_t>(d)].extent)) return d;
  return -1;
}

// Largest power of two V <= max_v such that every group of V consecutive elements of `r` along
// its last squeezed dimension, starting at a multiple of V, is contiguous and aligned to V
// elements in memory, and (for global tensors) lies entirely inside or outside the tensor.
int64_t vector_width(const BufferRegion& r, int64_t max_v, const CudaLowerCtx& ctx) {
  const Buffer& b = r.buffer;
  if (b.dtype().is_fp4() && b.scope() == MemScope::kGlobal) return 1;  // packed nibbles: element-wise (docs/FLOAT4.md)
  int last = last_kept_dim(r);
  if (last < 0 || last != static_cast<int>(b.ndim()) - 1) return 1;
  int64_t ext = 0;
  if (!is_const_int(r.region[static_cast<size_t>(last)].extent, &ext)) return 1;
  std::vector<Expr> strides;
  if (b.scope() == MemScope::kShared) {
    auto it = ctx.layouts.shared.find(b);
    if (it != ctx.layouts.shared.end() && !chunk_preserving(it->second)) return 1;
    // Swizzled and gmma layouts move whole 16-byte chunks: groups of up to 16 bytes stay contiguous.
    std::vector<int64_t> shape = const_shape(b, "shared buffer");
    int64_t s = 1;
    strides.assign(shape.size(), make_int(1));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      strides[static_cast<size_t>(d)] = make_int(s);
      s *= shape[static_cast<size_t>(d)];
    }
  } else {
    strides = b.effective_strides();
    if (!is_one(strides.back())) return 1;
  }
  int64_t v = 1;
  const int64_t bytes = b.dtype().element_bytes();
  while (v * 2 <= max_v && v * 2 * bytes <= 16 && ext % (v * 2) == 0) {
    int64_t w = v * 2;
    bool ok = provably_divisible(r.region[static_cast<size_t>(last)].min, w);
    for (size_t d = 0; ok && d + 1 < strides.size(); ++d) ok = provably_divisible(strides[d], w);
    if (ok && b.scope() == MemScope::kGlobal && ctx.guard_global) {
      // Groups must be wholly in or out of the tensor, unless the last index is provably in.
      Expr hi = r.region[static_cast<size_t>(last)].min + make_int(ext - 1);
      Expr in = ctx.simplify_cond(hi < b.shape()[static_cast<size_t>(last)]);
      if (!is_one(in)) ok = provably_divisible(b.shape()[static_cast<size_t>(last)], w);
    }
    if (!ok) break;
    v = w;
  }
  return v;
}

// Registers per vector group of a fragment: the extent of its unit-stride register digit when
// that digit runs along `dim` with dimension stride 1.
int64_t fragment_vector(const Fragment& f, int dim) {
  for (const FragmentMode& m : f.modes())
    if (!m.on_threads() && !m.is_replica() && m.reg_stride == 1)
      return (m.dim == dim && m.dim_stride == 1) ? m.extent : 1;
  return 1;
}

int64_t pow2_divisor(int64_t n, int64_t cap) {
  int64_t v = 1;
  while (v * 2 <= cap && n % (v * 2) == 0) v *= 2;
  return v;
}

Expr zero_of(DataType t) { return make_const(t, 0); }

// One group of `v` elements from (sbuf, sidx) to (dbuf, didx), where either side may be a register
// array (already remapped) or a buffer that ctx remaps. `src_guards` protect reads of global
// memory (zero fill), `dst_guards` writes (dropped).
struct Side {
  Buffer buffer;              // original buffer, or the register array
  std::vector<Expr> indices;  // original indices, or {register}
  bool is_regs = false;
};

Expr side_address(const CudaLowerCtx& ctx, const Side& s, int mode) {
  if (s.is_regs) return make_call(DataType::Handle(), "cuda.address_of", {make_load(s.buffer, s.indices), make_int(mode)});
  return ctx.address_of(s.buffer, s.indices, mode);
}
Expr side_load(const CudaLowerCtx& ctx, const Side& s) {
  return s.is_regs ? make_load(s.buffer, s.indices) : ctx.load(s.buffer, s.indices);
}
Stmt side_store(const CudaLowerCtx& ctx, const Side& s, const Expr& v) {
  return s.is_regs ? make_store(s.buffer, s.indices, make_cast(s.buffer.dtype(), v)) : ctx.store(s.buffer, s.indices, v);
}
Side side_offset(const Side& s, int64_t k) {
  Side o = s;
  Expr& last = o.indices.back();
  last = last + make_int(k, last.dtype());
  return o;
}

Stmt move_group(const CudaLowerCtx& ctx, const Side& src, const Side& dst, int64_t v, const Expr& src_ok,
                const Expr& dst_ok, bool async, const Expr& fill_in = Expr()) {
  DataType st = src.buffer.dtype(), dt = dst.buffer.dtype();
  const bool same = st == dt;
  // Out-of-bounds reads fill `fill_in` (T.annotate_safe_value), 0 when undefined: cp.async and the
  // vector copies zero-fill in hardware, so another value goes through the element-wise forms.
  const Expr fill = fill_in.defined() ? make_cast(dt, fill_in) : zero_of(dt);
  if (!is_one(src_ok) && !is_zero(fill)) {
    if (v > 1) {
      Stmt cp = same ? builtin_stmt("cuda.copy_vec", {side_address(ctx, dst, 2), side_address(ctx, src, 1),
                                                      make_int(v * st.element_bytes())})
                     : builtin_stmt("cuda.copy_cast", {side_address(ctx, dst, 2), side_address(ctx, src, 1), make_int(v)});
      std::vector<Stmt> fills;
      for (int64_t k = 0; k < v; ++k) fills.push_back(side_store(ctx, side_offset(dst, k), fill));
      return guarded(dst_ok, guarded(src_ok, cp, make_seq(fills)));
    }
    Stmt st_ok = side_store(ctx, dst, make_cast(dt, side_load(ctx, src)));
    return guarded(dst_ok, guarded(src_ok, st_ok, side_store(ctx, dst, fill)));
  }
  if (async && same && src.buffer.scope() == MemScope::kGlobal && !dst.is_regs &&
      dst.buffer.scope() == MemScope::kShared) {
    int64_t bytes = v * st.element_bytes();
    if (bytes == 4 || bytes == 8 || bytes == 16) {
      Stmt cp = builtin_stmt("cuda.cp_async", {side_address(ctx, dst, 2), side_address(ctx, src, 1),
                                               make_int(bytes), src_ok});
      return guarded(dst_ok, cp);
    }
  }
  if (v > 1 && same) {
    int64_t bytes = v * st.element_bytes();
    Stmt cp = is_one(src_ok) ? builtin_stmt("cuda.copy_vec", {side_address(ctx, dst, 2), side_address(ctx, src, 1),
                                                                make_int(bytes)})
                             : builtin_stmt("cuda.copy_vec_zfill", {side_address(ctx, dst, 2),
                                                                    side_address(ctx, src, 1), make_int(bytes), src_ok});
    return guarded(dst_ok, cp);
  }
  if (v > 1) {
    Stmt cp = builtin_stmt("cuda.copy_cast", {side_address(ctx, dst, 2), side_address(ctx, src, 1), make_int(v)});
    if (!is_one(src_ok)) {
      std::vector<Stmt> zeros;
      for (int64_t k = 0; k < v; ++k) zeros.push_back(side_store(ctx, side_offset(dst, k), zero_of(dt)));
      cp = guarded(src_ok, cp, make_seq(zeros));
    }
    return guarded(dst_ok, cp);
  }
  Stmt st_ok = side_store(ctx, dst, make_cast(dt, side_load(ctx, src)));
  if (!is_one(src_ok)) st_ok = guarded(src_ok, st_ok, side_store(ctx, dst, zero_of(dt)));
  return guarded(dst_ok, st_ok);
}

// ---- fragment <-> fragment ---------------------------------------------------------------------
// A slice of a fragment (unit extent, possibly a run-time index, in dimensions the source holds
// in registers only) copied into a whole fragment laid out as the source without those dimensions:
// each thread already holds its elements (e.g. row k of a [splits, M] fragment whose rows are in
// registers, into an [M] fragment). Undefined when the copy is not of that form.
Stmt copy_register_slice(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& src, const BufferRegion& dst,
                         const Fragment& fs, const Fragment& fd) {
  if (fs.padded() || fd.padded()) return Stmt();
  for (size_t d = 0; d < dst.region.size(); ++d)
    if (!is_zero(dst.region[d].min) || !is_const_value(dst.region[d].extent, fd.shape()[d])) return Stmt();
  std::vector<int> sliced, kept;
  for (size_t d = 0; d < src.region.size(); ++d) {
    if (is_one(src.region[d].extent) && fs.shape()[d] != 1) {
      sliced.push_back(static_cast<int>(d));
    } else {
      if (!is_zero(src.region[d].min) || !is_const_value(src.region[d].extent, fs.shape()[d])) return Stmt();
      kept.push_back(static_cast<int>(d));
    }
  }
  if (sliced.empty() || kept.size() != fd.shape().size()) return Stmt();
  for (const FragmentMode& m : fs.modes())
    if (m.on_threads() && std::find(sliced.begin(), sliced.end(), m.dim) != sliced.end()) return Stmt();
  // Dropping the sliced (register-only) dimensions must give the destination's layout.
  Fragment rest = fs;
  for (size_t i = sliced.size(); i-- > 0;) rest = rest.reduce(sliced[i]);
  if (!rest.same_as(fd)) return Stmt();
  const Buffer& rs = ctx.regs_of(src.buffer);
  const Buffer& rd = ctx.regs_of(dst.buffer);
  std::vector<Stmt> out;
  for (int64_t r = 0; r < fd.num_regs(); ++r) {
    std::vector<int64_t> di;
    // Register digits do not depend on the thread: any thread's view of register r will do.
    if (!fd.index_at(0, r, &di)) return Stmt();
    std::vector<Expr> si(fs.shape().size());
    for (int d : sliced) si[static_cast<size_t>(d)] = src.region[static_cast<size_t>(d)].min;
    for (size_t k = 0; k < kept.size(); ++k) si[static_cast<size_t>(kept[k])] = make_int(di[k]);
    out.push_back(make_store(rd, {make_int(r)}, make_cast(rd.dtype(), make_load(rs, {fs.reg_of(si)}))));
  }
  return make_seq(out, op.span);
}

Stmt copy_registers(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& src, const BufferRegion& dst) {
  const Fragment& fs = ctx.layout_of(src.buffer);
  const Fragment& fd = ctx.layout_of(dst.buffer);
  if (Stmt sl = copy_register_slice(op, ctx, src, dst, fs, fd); sl.defined()) return sl;
  if (!fs.same_as(fd) || const_shape(src.buffer, "fragment") != const_shape(dst.buffer, "fragment"))
    throw_error<LayoutError>(op_error_prefix(op), "copying fragment '", src.buffer.name(), "' (", fs.str(),
                             ") to fragment '", dst.buffer.name(), "' (", fd.str(), ") needs data to move between ",
                             "threads; stage it through a shared-memory buffer (T.alloc_shared)");
  for (size_t d = 0; d < src.region.size(); ++d)
    if (!is_zero(src.region[d].min) || !is_zero(dst.region[d].min) ||
        !is_const_value(src.region[d].extent, fs.shape()[d]))
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: copying part of a fragment into another "
                                  "fragment on target cuda; copy whole fragments");
  const Buffer& rs = ctx.regs_of(src.buffer);
  const Buffer& rd = ctx.regs_of(dst.buffer);
  std::vector<Stmt> out;
  // A float conversion into a type narrower than 4 bytes (P = cast(S) in attention) moves 4-byte
  // groups of registers (tl::copy_cast: two floats into one packed f16x2 / bf16x2 register).
  // Element by element, NVVM keeps each 16-bit register apart and ptxas re-packs the pairs with
  // PRMT before every use as a wgmma / mma operand (81 PRMT per 128x128 block in the flash loop).
  const int64_t n = fs.num_regs(), sb = rs.dtype().element_bytes(), db = rd.dtype().element_bytes();
  const bool floats = rs.dtype().is_float() && rd.dtype().is_float();
  const int64_t v = floats && db < 4 && rs.dtype() != rd.dtype() ? 4 / db : 1;
  // Register arrays are aligned to 16 bytes from 16 bytes on, to 8 from 8 (codegen_stmt.cc).
  auto aligned = [&](int64_t elem_bytes) {
    const int64_t total = n * elem_bytes, chunk = v * elem_bytes;
    return chunk <= (total >= 16 ? 16 : total >= 8 ? 8 : elem_bytes);
  };
  if (v > 1 && n % v == 0 && aligned(sb) && aligned(db)) {
    for (int64_t r = 0; r < n; r += v)
      out.push_back(builtin_stmt("cuda.copy_cast",
                                 {make_call(DataType::Handle(), "cuda.address_of", {make_load(rd, {make_int(r)}), make_int(2)}),
                                  make_call(DataType::Handle(), "cuda.address_of", {make_load(rs, {make_int(r)}), make_int(1)}),
                                  make_int(v)}));
    return make_seq(out, op.span);
  }
  for (int64_t r = 0; r < n; ++r)
    out.push_back(make_store(rd, {make_int(r)}, make_cast(rd.dtype(), make_load(rs, {make_int(r)}))));
  return make_seq(out, op.span);
}

// ---- fragment -> global, lanes exchanging groups -------------------------------------------------
// The mma / wgmma accumulator gives each lane V (2) neighbouring elements of a row, and the G lanes
// next to it the next groups of that row; stored as they are, every store moves 4 bytes (a 16-bit
// result) and a warp's store covers half sectors. When the fragment has that shape, the G lanes
// exchange their groups through shuffles (tl::store_exchange) so that each lane stores G * V
// contiguous elements (16 bytes) at once. Taken only where every lane stores (no padding, no
// replication, no bounds guard, the whole fragment) and the destination is aligned for it; otherwise
// undefined (the caller moves groups of V). Measured on an H100: a 4096^3 fp16 GEMM 665 -> 712 TFLOPS
// (bench/gpu_hopper_variants.py, docs/PERFORMANCE.md).
Stmt store_fragment_exchanged(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& frag,
                              const BufferRegion& other, int last, int64_t v) {
  const Fragment& L = ctx.layout_of(frag.buffer);
  const Buffer& dst = other.buffer;
  if (ctx.disable_store_exchange || dst.scope() != MemScope::kGlobal || L.replicate() > 1 || v < 2) return Stmt();
  const int64_t db = dst.dtype().element_bytes();
  if ((v * db) % 4 != 0) return Stmt();
  const FragmentMode *lanes = nullptr, *blocks = nullptr;
  for (const FragmentMode& m : L.modes()) {
    if (m.dim != last) continue;
    if (m.on_threads() && m.thread_stride == 1 && m.dim_stride == v) lanes = &m;
  }
  if (!lanes) return Stmt();
  int64_t G = 1;
  while (G * 2 <= lanes->extent && G * 2 * v * db <= 16) G *= 2;
  if (G < 2) return Stmt();
  for (const FragmentMode& m : L.modes())
    if (m.dim == last && !m.on_threads() && m.reg_stride > 0 && m.extent % G == 0 && m.dim_stride % (G * v) == 0 &&
        (!blocks || m.dim_stride < blocks->dim_stride))
      blocks = &m;
  if (!blocks) return Stmt();
  for (const FragmentMode& m : L.modes())  // every other digit along the row keeps blocks aligned
    if (m.dim == last && &m != lanes && &m != blocks && !(m.reg_stride == 1 && m.dim_stride == 1) &&
        m.dim_stride % (G * v) != 0)
      return Stmt();
  if (vector_width(other, G * v, ctx) < G * v) return Stmt();
  const Buffer& regs = ctx.regs_of(frag.buffer);
  const DataType it = ctx.tid.dtype();
  const Expr q = floormod(ctx.tid, make_int(G, it));
  std::vector<Stmt> out;
  for (int64_t r = 0; r < L.num_regs(); r += v) {
    if ((r / blocks->reg_stride) % blocks->extent % G != 0) continue;
    if (!is_one(ctx.simplify_cond(L.is_valid(ctx.tid, make_int(r), ctx.num_threads)))) return Stmt();
    // This lane's own group, moved to the group of lane 0 (the lane digit's low part is q) and to
    // register block q.
    std::vector<Expr> idx = L.index_of(ctx.tid, make_int(r));
    idx[static_cast<size_t>(last)] = idx[static_cast<size_t>(last)] + q * make_int(blocks->dim_stride - v, it);
    std::vector<Expr> pos;
    for (size_t d = 0; d < idx.size(); ++d)
      if (!is_one(frag.region[d].extent)) pos.push_back(idx[d]);
    if (pos.empty()) pos.push_back(make_int(0));
    std::vector<Expr> oidx = region_point(other, pos);
    std::vector<Expr> hi = oidx;
    hi.back() = hi.back() + make_int(G * v - 1, hi.back().dtype());
    if (!ctx.bounds_guards(dst, oidx).empty() || !ctx.bounds_guards(dst, hi).empty()) return Stmt();
    out.push_back(builtin_stmt("cuda.store_exchange",
                               {ctx.address_of(dst, oidx, 2),
                                make_call(DataType::Handle(), "cuda.address_of", {make_load(regs, {make_int(r)}), make_int(1)}),
                                make_int(G), make_int(v), make_int(blocks->reg_stride), q}));
  }
  return make_seq(out, op.span);
}

// ---- fragment -> shared through stmatrix (sm_90) -------------------------------------------------
// stmatrix.m8n8.x4 stores four 8x8 matrices of 16-bit elements for a warp: lane l holds element pair
// (l / 4, 2 * (l % 4) + {0, 1}) of matrix m in its packed register m, and lane 8 m + i gives the
// shared address of row i of matrix m (16 contiguous bytes). An mma / wgmma accumulator is such a
// fragment: each group of 8 registers of a thread is 4 pairs, pair p in matrix p of its warp. Where
// the layout is proved to be that (every thread, every register group, by enumeration), a fragment
// copied into a 16-bit shared tile whose 16-byte row pieces stay contiguous (row-major, swizzled or
// gmma layouts) moves 16 bytes per lane and instruction (tl::stmatrix_x4_cast, converting the pairs)
// instead of 4. Undefined where it is not (the caller then stores pairs).
Stmt store_fragment_stmatrix(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& frag,
                             const BufferRegion& other, const std::vector<int64_t>& fmin,
                             const std::vector<int64_t>& fext) {
  const Fragment& L = ctx.layout_of(frag.buffer);
  const Buffer& dst = other.buffer;
  if (ctx.target.arch.rfind("sm_90", 0) != 0 || dst.scope() != MemScope::kShared || dst.dtype().bits != 16 ||
      dst.dtype().lanes != 1 || frag.buffer.dtype().lanes != 1 || L.replicate() > 1 || L.padded() ||
      L.thread_offset() != 0 || L.num_threads() != ctx.num_threads || ctx.num_threads % 32 != 0 ||
      L.shape().size() != 2 || other.region.size() != 2 || L.num_regs() % 8 != 0)
    return Stmt();
  for (const Range& r : other.region)
    if (is_one(r.extent)) return Stmt();
  if (vector_width(other, 8, ctx) < 8) return Stmt();  // 16-byte row pieces, contiguous and aligned
  auto in_region = [&](const std::vector<int64_t>& i) {
    return i[0] >= fmin[0] && i[0] < fmin[0] + fext[0] && i[1] >= fmin[1] && i[1] < fmin[1] + fext[1];
  };
  std::vector<int64_t> groups;
  std::vector<int64_t> e, e1, b, b0;
  // Matrix m's first element, relative to matrix 0's, the same in every warp and register group:
  // d[m] (row, column); it must be m's bits times two vectors (the lane term below is one formula).
  int64_t d[4][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
  bool d_known = false;
  for (int64_t r0 = 0; r0 < L.num_regs(); r0 += 8) {
    int in = -1;
    for (int64_t t = 0; t < ctx.num_threads; ++t) {
      const int64_t lane = t % 32, wb = t - lane;
      if (!L.index_at(wb, r0, &b0)) return Stmt();
      for (int64_t p = 0; p < 4; ++p) {
        if (!L.index_at(t, r0 + 2 * p, &e) || !L.index_at(t, r0 + 2 * p + 1, &e1) || !L.index_at(wb, r0 + 2 * p, &b))
          return Stmt();
        if (e[0] != b[0] + lane / 4 || e[1] != b[1] + 2 * (lane % 4) || e1[0] != e[0] || e1[1] != e[1] + 1 ||
            (b[1] - fmin[1]) % 8 != 0)
          return Stmt();
        if (!d_known) {
          d[p][0] = b[0] - b0[0];
          d[p][1] = b[1] - b0[1];
        } else if (d[p][0] != b[0] - b0[0] || d[p][1] != b[1] - b0[1]) {
          return Stmt();
        }
        const int here = in_region(e) && in_region(e1) ? 1 : (!in_region(e) && !in_region(e1) ? 0 : -2);
        if (here == -2 || (in >= 0 && here != in)) return Stmt();  // a group partly in the region
        in = here;
      }
      d_known = true;
    }
    if (in == 1) groups.push_back(r0);
  }
  if (groups.empty()) return Stmt();
  for (int k = 0; k < 2; ++k)
    if (d[3][k] != d[1][k] + d[2][k]) return Stmt();
  // Lane l addresses row l % 8 of matrix m = l / 8: matrix 0's first element (this thread's element
  // of register r0 less its lane's place in the matrix) plus (l % 8, 0) plus d[m].
  const DataType it = ctx.tid.dtype();
  const Expr lane = floormod(ctx.tid, make_int(32, it));
  const Expr m1 = floormod(floordiv(lane, make_int(8, it)), make_int(2, it));
  const Expr m2 = floordiv(lane, make_int(16, it));
  const Expr lane_row = floormod(lane, make_int(8, it)) - floordiv(lane, make_int(4, it)) +
                        m1 * make_int(d[1][0], it) + m2 * make_int(d[2][0], it);
  const Expr lane_col = m1 * make_int(d[1][1], it) + m2 * make_int(d[2][1], it) -
                        floormod(lane, make_int(4, it)) * make_int(2, it);
  const Buffer& regs = ctx.regs_of(frag.buffer);
  std::vector<Stmt> out;
  for (int64_t r0 : groups) {
    std::vector<Expr> idx = L.index_of(ctx.tid, make_int(r0, it));
    idx[0] = idx[0] + lane_row;
    idx[1] = idx[1] + lane_col;
    std::vector<Expr> pos;
    for (size_t k = 0; k < idx.size(); ++k) pos.push_back(fmin[k] ? idx[k] - make_int(fmin[k], it) : idx[k]);
    std::vector<Expr> oidx = region_point(other, pos);
    out.push_back(builtin_stmt("cuda.stmatrix_x4", {ctx.address_of(dst, oidx, 2),
                                                    make_call(DataType::Handle(), "cuda.address_of",
                                                              {make_load(regs, {make_int(r0)}), make_int(1)})}));
  }
  return make_seq(out, op.span);
}

// ---- fragment <-> memory -----------------------------------------------------------------------
Stmt copy_with_fragment(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& frag,
                        const BufferRegion& other, bool frag_is_dst) {
  const Buffer& F = frag.buffer;
  const Fragment& L = ctx.layout_of(F);
  const Buffer& regs = ctx.regs_of(F);
  std::vector<int64_t> fshape = L.shape();
  // The fragment region: constant mins and extents.
  std::vector<int64_t> fmin, fext;
  for (size_t d = 0; d < frag.region.size(); ++d) {
    int64_t mn = 0, ex = 0;
    if (!is_const_int(frag.region[d].min, &mn) || !is_const_int(frag.region[d].extent, &ex))
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: a fragment region with run-time bounds (",
                                  F.name(), ") on target cuda");
    fmin.push_back(mn);
    fext.push_back(ex);
  }
  bool full = true;
  for (size_t d = 0; d < fmin.size(); ++d) full = full && fmin[d] == 0 && fext[d] == fshape[d];
  // Vector groups: the fragment's unit-stride register digit along the region's last dimension.
  int last = last_kept_dim(frag);
  int64_t v = 1;
  if (last >= 0) {
    int64_t fv = fragment_vector(L, last);
    if (fmin[static_cast<size_t>(last)] % 2 == 0 || fv == 1) {
      int64_t cap = std::min<int64_t>(16 / F.dtype().element_bytes(), 16 / other.buffer.dtype().element_bytes());
      if (F.dtype() != other.buffer.dtype()) cap = std::min<int64_t>(cap, 8);
      v = pow2_divisor(fv, cap);
      while (v > 1 && fmin[static_cast<size_t>(last)] % v != 0) v /= 2;
      v = std::min(v, vector_width(other, v, ctx));
    }
  }
  if (!frag_is_dst && full && last >= 0) {
    Stmt x = store_fragment_exchanged(op, ctx, frag, other, last, v);
    if (x.defined()) return x;
  }
  if (!frag_is_dst && !ctx.disable_stmatrix) {
    Stmt x = store_fragment_stmatrix(op, ctx, frag, other, fmin, fext);
    if (x.defined()) return x;
  }
  // Stores to memory from a replicated fragment: only replica 0 writes.
  Expr writer = make_bool(true);
  if (!frag_is_dst && L.replicate() > 1) writer = eq(L.replica_of(ctx.tid), make_int(0));
  std::vector<Stmt> out;
  for (int64_t r = 0; r < L.num_regs(); r += v) {
    std::vector<Expr> idx = L.index_of(ctx.tid, make_int(r));
    Expr valid = L.is_valid(ctx.tid, make_int(r), ctx.num_threads);
    std::vector<Expr> pos;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!full) {
        valid = valid && (idx[d] >= make_int(fmin[d])) && (idx[d] < make_int(fmin[d] + fext[d]));
      }
      if (fext[d] != 1) pos.push_back(fmin[d] ? idx[d] - make_int(fmin[d]) : idx[d]);
    }
    if (pos.empty()) pos.push_back(make_int(0));
    std::vector<Expr> oidx = region_point(other, pos);
    Expr guard = all_of(ctx.bounds_guards(other.buffer, oidx));
    Side fs{regs, {make_int(r)}, true};
    Side os{other.buffer, oidx, false};
    Stmt s = frag_is_dst ? move_group(ctx, os, fs, v, guard, make_bool(true), false, copy_fill_value(op, F.dtype()))
                         : move_group(ctx, fs, os, v, make_bool(true), guard, false);
    out.push_back(guarded(ctx.simplify_cond(valid && writer), s));
  }
  return make_seq(out, op.span);
}

// ---- memory <-> memory -------------------------------------------------------------------------
Stmt copy_tiles(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& src, const BufferRegion& dst,
                const std::vector<int64_t>& ext) {
  bool async = attr_bool(op.attrs, "async", false);
  int64_t v = 1;
  if (src.buffer.dtype() == dst.buffer.dtype()) {
    int64_t cap = 16 / src.buffer.dtype().element_bytes();
    v = std::min(vector_width(src, cap, ctx), vector_width(dst, cap, ctx));
  }
  Fragment L = default_fragment(ext, ctx.num_threads, v);
  v = std::min(v, fragment_vector(L, static_cast<int>(ext.size()) - 1));
  std::vector<Stmt> out;
  for (int64_t r = 0; r < L.num_regs(); r += v) {
    std::vector<Expr> pos = L.index_of(ctx.tid, make_int(r));
    Expr valid = ctx.simplify_cond(L.is_valid(ctx.tid, make_int(r), ctx.num_threads));
    std::vector<Expr> sidx = region_point(src, pos), didx = region_point(dst, pos);
    Expr sg = all_of(ctx.bounds_guards(src.buffer, sidx));
    Expr dg = all_of(ctx.bounds_guards(dst.buffer, didx));
    Side ss{src.buffer, sidx, false}, ds{dst.buffer, didx, false};
    out.push_back(guarded(valid, move_group(ctx, ss, ds, v, sg, dg, async, copy_fill_value(op, src.buffer.dtype()))));
  }
  return make_seq(out, op.span);
}

// ---- per-thread (local) copies -------------------------------------------------------------------
Stmt copy_per_thread(const TileOpNode& op, CudaLowerCtx& ctx, const BufferRegion& src, const BufferRegion& dst,
                     const std::vector<int64_t>& ext) {
  std::vector<Var> vars;
  std::vector<Expr> pos;
  for (size_t k = 0; k < ext.size(); ++k) {
    vars.push_back(Var(ctx.fresh("c")));
    pos.push_back(vars.back());
  }
  std::vector<Expr> sidx = region_point(src, pos), didx = region_point(dst, pos);
  Side ss{src.buffer, sidx, false}, ds{dst.buffer, didx, false};
  Stmt body = move_group(ctx, ss, ds, 1, all_of(ctx.bounds_guards(src.buffer, sidx)),
                         all_of(ctx.bounds_guards(dst.buffer, didx)), false, copy_fill_value(op, src.buffer.dtype()));
  for (int k = static_cast<int>(ext.size()) - 1; k >= 0; --k)
    body = make_for(vars[static_cast<size_t>(k)], make_int(0), make_int(ext[static_cast<size_t>(k)]),
                    ForKind::kSerial, body);
  return body;
}

}  // namespace

Stmt lower_cuda_copy(const TileOpNode& op, CudaLowerCtx& ctx) {
  if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region())
    throw_error<TypeError>(op_error_prefix(op), "expects T.copy(src, dst) with two buffer regions");
  if (attr_bool(op.attrs, "tma", false)) return lower_cuda_tma_copy(op, ctx);
  if (attr_bool(op.attrs, "tma_store", false)) return lower_cuda_tma_store(op, ctx);
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  std::vector<int64_t> se = const_extents(src, op_error_prefix(op) + "src");
  std::vector<int64_t> de = const_extents(dst, op_error_prefix(op) + "dst");
  if (se != de) {
    auto str = [](const std::vector<int64_t>& v) {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    };
    throw_error<ValueError>(op_error_prefix(op), "source tile ", str(se), " of '", src.buffer.name(),
                            "' and destination tile ", str(de), " of '", dst.buffer.name(), "' differ in shape");
  }
  const bool user_async = attr_bool(op.attrs, "async_commit", false);  // T.async_copy
  if (user_async && (src.buffer.scope() != MemScope::kGlobal || dst.buffer.scope() != MemScope::kShared))
    throw_error<TypeError>(op_error_prefix(op), "T.async_copy copies global memory into shared memory (cp.async); '",
                           src.buffer.name(), "' -> '", dst.buffer.name(), "' is not such a copy: use T.copy");
  bool fs = is_frag(src.buffer), fd = is_frag(dst.buffer);
  bool ls = src.buffer.scope() == MemScope::kLocal || src.buffer.scope() == MemScope::kLocalVar;
  bool ld = dst.buffer.scope() == MemScope::kLocal || dst.buffer.scope() == MemScope::kLocalVar;
  if (fs && fd) return copy_registers(op, ctx, src, dst);
  if ((fs || fd) && (ls || ld))
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: copies between a fragment and a per-thread "
                                "local buffer on target cuda; go through shared memory");
  if (fd) return copy_with_fragment(op, ctx, dst, src, true);
  if (fs) return copy_with_fragment(op, ctx, src, dst, false);
  if (ls || ld) return copy_per_thread(op, ctx, src, dst, se);
  if (user_async) {
    // T.async_copy: cp.async groups of 4, 8 or 16 bytes (narrower or unaligned tiles fall back to
    // plain stores), then one commit; the program waits itself (T.ptx_wait_group).
    return make_seq({copy_tiles(op, ctx, src, dst, se), builtin_stmt("cuda.cp_async_commit", {})}, op.span);
  }
  return copy_tiles(op, ctx, src, dst, se);
}

}  // namespace tl
