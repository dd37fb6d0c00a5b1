// The cuda emulator's GEMMs: tl::gemm_ss/rs/sr/rr (mma.sync, include/tl/cuda/gemm.h) and
// tl::wgmma_gemm_ss/rs (include/tl/cuda/wgmma.h), computed from the operands their layouts place.
#include "target/cuda/emulator_impl.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/functor.h"

namespace tl::cuda_emu {

DataType type_of_name(const std::string& n) {
  if (n == "tl::half_t") return DataType::Float(16);
  if (n == "tl::bfloat16_t") return DataType::BFloat16();
  if (n == "float") return DataType::Float32();
  if (n == "double") return DataType::Float(64);
  if (n == "tl::int8_t") return DataType::Int(8);
  if (n == "tl::uint8_t") return DataType::UInt(8);
  if (n == "int") return DataType::Int32();
  if (n == "tl::fp8_e4m3_t") return DataType::F8E4M3();
  if (n == "tl::fp8_e5m2_t") return DataType::F8E5M2();
  throw_error<NotImplemented>("not implemented: emulating mma on ", n);
}

// C += op(A) op(B) for every thread's accumulators, through the contract of include/tl/cuda/gemm.h.
void Emulator::gemm(const CallNode* c, const Template& tp, const std::vector<char>& act) {
  auto I = [&](size_t i) { return std::stoll(tp.args[i]); };
  auto B_ = [&](size_t i) { return tp.args[i] == "true"; };
  const std::string kind = tp.name.substr(std::string("tl::gemm_").size());
  int64_t M = I(0), N = I(1), K = I(2), WM = I(3), WN = I(4);
  bool ta = false, tb = false, sa = false, sb = false;
  int64_t lda = 0, ldb = 0;
  size_t ti = 0;
  if (kind == "ss") {
    ta = B_(5), tb = B_(6), sa = B_(7), sb = B_(8), lda = I(9), ldb = I(10);
    ti = 11;
  } else if (kind == "rs") {
    tb = B_(5), sb = B_(6), ldb = I(7);
    ti = 8;
  } else if (kind == "rr") {
    ti = 5;
  } else {
    ta = B_(5), sa = B_(6), lda = I(7);
    ti = 8;
  }
  DataType at = type_of_name(tp.args[ti]), bt = type_of_name(tp.args[ti + 1]), ct = type_of_name(tp.args[ti + 2]);
  const int64_t kk = at.element_bytes() == 2 ? 16 : at.element_bytes() == 4 ? 8 : 32;
  const int64_t kp = 4 / at.element_bytes();
  const int64_t MT = M / WM / 16, NT = N / WN / 8, KT = K / kk;
  int64_t first = -1;
  for (int64_t t = 0; t < threads_; ++t)
    if (act[static_cast<size_t>(t)]) {
      first = t;
      break;
    }
  if (first < 0) return;
  if (!whole_block(act))
    throw_error<RuntimeError>("emulator: T.gemm executed by only some threads (mma.sync needs whole warps)");
  // Operand matrices, A[m][k] and B[k][n].
  std::vector<double> A(static_cast<size_t>(M * K), 0.0), Bm(static_cast<size_t>(K * N), 0.0);
  auto tile_off = [](int64_t row, int64_t col, int64_t cols, bool swz, int64_t eb) {
    if (!swz) return row * cols + col;
    int64_t chunk = 16 / eb;
    if ((cols * eb) % 128 == 0) return row * cols + (col ^ ((row & 7) * chunk));
    int64_t flat = row * cols + col, phase = 128 / eb;
    return flat ^ (((flat / phase) & 7) * chunk);
  };
  auto read_shared = [&](const Expr& ptr, DataType t, int64_t row, int64_t col, int64_t cols, bool swz) {
    Val p = address(ptr, first);
    int64_t off = p.off + tile_off(row, col, cols, swz, t.element_bytes()) * t.element_bytes();
    check_range(p.mem, off, t.element_bytes(), "gemm operand read");
    shared_read(p.mem, off, t.element_bytes(), -2);
    Val v = decode(t, p.mem.base + off);
    return t.is_float() ? v.f : static_cast<double>(v.i);
  };
  // float operands: gemm.h splits each into two tf32 parts (3xTF32), about fp32-accurate.
  auto tf32 = [&](DataType, double v) { return v; };
  if (kind == "rs" || kind == "rr") {
    for (int64_t t = 0; t < threads_; ++t) {
      int64_t warp = t / 32, lane = t % 32, g = lane / 4, tg = lane % 4;
      if (warp >= WM * WN) continue;
      int64_t wm = warp / WN;
      Val p = address(c->args[1], t);
      for (int64_t ri = 0; ri < MT * KT * (kk / 2); ++ri) {
        int64_t tile = ri / (kk / 2), within = ri % (kk / 2), kt = tile % KT, mt = tile / KT;
        int64_t pr = within / kp, e = within % kp, rh = pr % 2, kh = pr / 2;
        int64_t row = wm * (M / WM) + mt * 16 + g + 8 * rh, col = kt * kk + tg * kp + e + 4 * kp * kh;
        Val v = decode(at, p.mem.base + p.off + ri * at.element_bytes());
        A[static_cast<size_t>(row * K + col)] = tf32(at, at.is_float() ? v.f : static_cast<double>(v.i));
      }
    }
  } else {
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k)
        A[static_cast<size_t>(m * K + k)] =
            tf32(at, ta ? read_shared(c->args[1], at, k, m, lda, sa) : read_shared(c->args[1], at, m, k, lda, sa));
  }
  if (kind == "sr" || kind == "rr") {
    for (int64_t t = 0; t < threads_; ++t) {
      int64_t warp = t / 32, lane = t % 32, g = lane / 4, tg = lane % 4;
      if (warp >= WM * WN) continue;
      int64_t wn = warp % WN;
      Val p = address(c->args[2], t);
      for (int64_t ri = 0; ri < NT * KT * (kk / 4); ++ri) {
        int64_t tile = ri / (kk / 4), within = ri % (kk / 4), kt = tile % KT, nt = tile / KT;
        int64_t pr = within / kp, e = within % kp;
        int64_t k = kt * kk + tg * kp + e + 4 * kp * pr, n = wn * (N / WN) + nt * 8 + g;
        Val v = decode(bt, p.mem.base + p.off + ri * bt.element_bytes());
        Bm[static_cast<size_t>(k * N + n)] = tf32(bt, bt.is_float() ? v.f : static_cast<double>(v.i));
      }
    }
  } else {
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        Bm[static_cast<size_t>(k * N + n)] =
            tf32(bt, tb ? read_shared(c->args[2], bt, n, k, ldb, sb) : read_shared(c->args[2], bt, k, n, ldb, sb));
  }
  for (int64_t t = 0; t < threads_; ++t) {
    int64_t warp = t / 32, lane = t % 32, g = lane / 4, tg = lane % 4;
    if (warp >= WM * WN) continue;
    int64_t wm = warp / WN, wn = warp % WN;
    Val p = address(c->args[3], t);
    for (int64_t mt = 0; mt < MT; ++mt)
      for (int64_t nt = 0; nt < NT; ++nt)
        for (int64_t i = 0; i < 4; ++i) {
          int64_t row = wm * (M / WM) + mt * 16 + g + 8 * (i / 2), col = wn * (N / WN) + nt * 8 + 2 * tg + i % 2;
          int64_t r = 4 * (nt + NT * mt) + i;
          uint8_t* cp = p.mem.base + p.off + r * ct.element_bytes();
          check_range(p.mem, p.off + r * ct.element_bytes(), ct.element_bytes(), "accumulator");
          Val cv = decode(ct, cp);
          double acc = ct.is_float() ? cv.f : static_cast<double>(cv.i);
          for (int64_t k = 0; k < K; ++k)
            acc += A[static_cast<size_t>(row * K + k)] * Bm[static_cast<size_t>(k * N + col)];
          Val out;
          if (ct.is_float()) out.f = round_to(ct, acc);
          else out.i = wrap_int(ct, static_cast<int64_t>(acc));
          encode(ct, out, cp);
        }
  }
}

// C += op(A) op(B) through the contract of include/tl/cuda/wgmma.h: warpgroup partition, the
// wgmma accumulator / register-A orders, and the gmma shared layouts (src/layout/swizzle.h),
// re-derived here. Also checks that every shared operand starts at a multiple of 8 swizzled rows
// of the block (the hardware swizzle works on absolute addresses).
void Emulator::wgmma_gemm(const CallNode* c, const Template& tp, const std::vector<char>& act) {
  auto I = [&](size_t i) { return std::stoll(tp.args[i]); };
  auto B_ = [&](size_t i) { return tp.args[i] == "true"; };
  const bool rs = tp.name == "tl::wgmma_gemm_rs";
  const int64_t M = I(0), N = I(1), K = I(2), WM = I(3), WN = I(4);
  bool ta = false, tb = false;
  int64_t swa = 0, swb = 0;
  size_t ti = 0;
  if (rs) {
    tb = B_(5), swb = I(6), ti = 7;
  } else {
    ta = B_(5), tb = B_(6), swa = I(7), swb = I(8), ti = 9;
  }
  // kPending (ss: after T; rs: after kProxyFence): 1, this call's operand reads stay in flight
  // until the next wgmma call (which waits for them) or tl::wgmma_drain; -1, issue only: they stay
  // in flight, with the accumulator (and register A) bytes, until a tl::wgmma_wait_regs retires them.
  const size_t pending_at = rs ? ti + 2 : ti + 1;
  const int64_t pending = tp.args.size() > pending_at ? I(pending_at) : 0;
  std::vector<std::pair<int64_t, int64_t>> reads;
  const DataType t = type_of_name(tp.args[ti]);
  // fp8 pairs name B's type after kPending (it may differ from A's; same size).
  const DataType tB = !rs && tp.args.size() > ti + 2 ? type_of_name(tp.args[ti + 2]) : t;
  const int64_t eb = t.element_bytes(), Mw = M / WM, Nw = N / WN, MI = Mw / 64, KS = K / 16;
  if (t.is_fp8() && (ta || !tb)) throw_error<RuntimeError>("emulator: fp8 wgmma with an MN-major operand");
  if (!whole_block(act)) throw_error<RuntimeError>("emulator: T.gemm (wgmma) executed by only some threads");
  wgmma_issuer_ = -1;
  for (int64_t th = 0; th < threads_ && wgmma_issuer_ < 0; ++th)
    if (act[static_cast<size_t>(th)]) wgmma_issuer_ = th;
  // Element (row, col) of a stored tile with `rows` rows in a gmma layout of width `sw` bytes.
  auto gmma_off = [&](int64_t row, int64_t col, int64_t rows, int64_t sw) {
    int64_t panel = sw / eb, chunk = 16 / eb;
    int64_t phase = (row / (128 / sw)) % (sw / 16);
    return (col / panel) * rows * panel + row * panel + ((col % panel) ^ (phase * chunk));
  };
  auto operand = [&](const Expr& ptr, int64_t sw, const char* what) {
    Val p = address(ptr, 0);
    if (p.mem.space != Space::kShared) throw_error<RuntimeError>("emulator: wgmma operand ", what, " not in shared memory");
    int64_t abs = (p.mem.base - smem_.data()) + p.off;
    if (abs % (8 * sw) != 0)
      throw_error<RuntimeError>("emulator: wgmma operand ", what, " ('", p.mem.name, "') starts at shared byte ", abs,
                                ", not a multiple of ", 8 * sw, " (its ", sw, "-byte swizzle)");
    return p;
  };
  // kProxyFence = false: no fence.proxy.async orders thread stores (the generic proxy) before this
  // wgmma, so every operand byte must come from TMA (the async proxy), or from thread stores that
  // an earlier wgmma with the fence read (warp_specialize's steady loop after the peeled iteration).
  const size_t fence_at = rs ? 8 : ti + 3;
  const bool no_fence = tp.args.size() > fence_at && tp.args[fence_at] == "false";
  auto read = [&](const Val& p, int64_t off, DataType et) {
    int64_t b = p.off + off * eb;
    check_range(p.mem, b, eb, "wgmma operand read");
    int64_t abs = (p.mem.base - smem_.data()) + b;
    if (no_fence) {
      const ByteState& s = bytes_[static_cast<size_t>(abs)];
      if (s.tma_bar < 0 && s.w_thread >= 0 && !s.proxy_fenced)
        race("a wgmma without fence.proxy.async reads '" + p.mem.name + "' (shared byte " + std::to_string(abs) +
             ") that thread " + std::to_string(s.w_thread) + " wrote with ordinary stores" +
             " (and no fenced wgmma read since)");
    } else {
      bytes_[static_cast<size_t>(abs)].proxy_fenced = true;
    }
    shared_read(p.mem, b, eb, -2);
    if (!reads.empty() && reads.back().second == abs) reads.back().second += eb;
    else reads.push_back({abs, abs + eb});
    return decode(et, p.mem.base + b).f;
  };
  std::vector<double> A(static_cast<size_t>(M * K), 0.0), Bm(static_cast<size_t>(K * N), 0.0);
  // Registers an in-flight wgmma owns may be used by the next wgmma (the hardware orders the
  // accumulations of one warpgroup), not by other instructions: loads and stores check them.
  WgmmaGroup group;
  if (rs) {
    for (int64_t th = 0; th < threads_; ++th) {
      int64_t wg = th / 128, w = (th % 128) / 32, lane = th % 32, g = lane / 4, tg = lane % 4;
      if (wg >= WM * WN) continue;
      Val p = address(c->args[1], th);
      group.regs.push_back({p.mem.base + p.off, p.mem.base + p.off + MI * KS * 8 * eb});
      for (int64_t ri = 0; ri < MI * KS * 8; ++ri) {
        int64_t tile = ri / 8, within = ri % 8, kt = tile % KS, mi = tile / KS;
        int64_t e = within % 2, rh = (within / 2) % 2, kh = within / 4;
        int64_t row = (wg / WN) * Mw + 64 * mi + 16 * w + g + 8 * rh, col = 16 * kt + 2 * tg + e + 8 * kh;
        check_range(p.mem, p.off + ri * eb, eb, "wgmma register operand");
        A[static_cast<size_t>(row * K + col)] = decode(t, p.mem.base + p.off + ri * eb).f;
      }
    }
  } else {
    Val p = operand(c->args[1], swa, "A");
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < K; ++k)
        A[static_cast<size_t>(m * K + k)] = ta ? read(p, gmma_off(k, m, K, swa), t) : read(p, gmma_off(m, k, M, swa), t);
  }
  Val pb = operand(c->args[2], swb, "B");
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      Bm[static_cast<size_t>(k * N + n)] = tb ? read(pb, gmma_off(n, k, N, swb), tB) : read(pb, gmma_off(k, n, K, swb), tB);
  // ss: an optional scale_d argument (0: C = A B, the accumulators' old values are not read), the
  // same in every thread of the warpgroups.
  bool scale_d = true;
  if (!rs && c->args.size() > 4) {
    for (int64_t th = 0; th < threads_; ++th) {
      if (th / 128 >= WM * WN) continue;
      const bool v = eval(c->args[4], th).i != 0;
      if (th == 0) scale_d = v;
      else if (v != scale_d) throw_error<RuntimeError>("emulator: wgmma scale_d differs between threads");
    }
  }
  for (int64_t th = 0; th < threads_; ++th) {
    int64_t wg = th / 128, w = (th % 128) / 32, lane = th % 32, g = lane / 4, tg = lane % 4;
    if (wg >= WM * WN) continue;
    Val p = address(c->args[3], th);
    group.regs.push_back({p.mem.base + p.off, p.mem.base + p.off + MI * Nw / 2 * 4});
    for (int64_t mi = 0; mi < MI; ++mi)
      for (int64_t nt = 0; nt < Nw / 8; ++nt)
        for (int64_t i = 0; i < 4; ++i) {
          int64_t row = (wg / WN) * Mw + 64 * mi + 16 * w + g + 8 * (i / 2);
          int64_t col = (wg % WN) * Nw + 8 * nt + 2 * tg + i % 2;
          int64_t r = mi * (Nw / 2) + 4 * nt + i;
          check_range(p.mem, p.off + r * 4, 4, "accumulator");
          uint8_t* cp = p.mem.base + p.off + r * 4;
          double acc = scale_d ? decode(DataType::Float32(), cp).f : 0.0;
          for (int64_t k = 0; k < K; ++k)
            acc += A[static_cast<size_t>(row * K + k)] * Bm[static_cast<size_t>(k * N + col)];
          Val out;
          out.f = round_to(DataType::Float32(), acc);
          encode(DataType::Float32(), out, cp);
        }
  }
  group.reads = std::move(reads);
  group.issue_only = pending < 0;
  wgmma_groups_.push_back(std::move(group));
  if (pending >= 0) wgmma_retire(static_cast<size_t>(pending));
  else wgmma_retire(wgmma_groups_.size());
}

void Emulator::wgmma_retire(size_t pending) {
  if (wgmma_groups_.size() > pending) {
    const auto end = wgmma_groups_.end() - static_cast<std::ptrdiff_t>(pending);
    for (auto g = wgmma_groups_.begin(); g != end; ++g) {
      if (!g->issue_only) continue;
      for (const auto& [lo, hi] : g->reads)
        for (int64_t b = lo; b < hi; ++b) {
          ByteState& s = bytes_[static_cast<size_t>(b)];
          s.r_epoch = epoch_;
          s.r_thread = -2;
          s.r_multi = true;
        }
    }
    wgmma_groups_.erase(wgmma_groups_.begin(), end);
  }
  wgmma_inflight_.clear();
  for (const WgmmaGroup& g : wgmma_groups_) wgmma_inflight_.insert(wgmma_inflight_.end(), g.reads.begin(), g.reads.end());
}

void Emulator::check_wgmma_registers(const Mem& m, int64_t off, int64_t n, int64_t t) {
  if (m.space != Space::kLocal) return;
  const uint8_t* lo = m.base + off;
  for (const WgmmaGroup& g : wgmma_groups_)
    for (const auto& [a, b] : g.regs)
      if (lo < b && a < lo + n)
        race("thread " + std::to_string(t) + " accesses register '" + m.name +
             "' that an in-flight wgmma owns (before the wgmma.wait_group that retires it)");
}

}  // namespace tl::cuda_emu
