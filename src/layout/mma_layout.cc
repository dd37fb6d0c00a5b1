#include "layout/mma_layout.h"

#include <cstdlib>

#include "ir/error.h"

namespace tl {

int mma_k(DataType t) {
  if (t == DataType::Float(16) || t == DataType::BFloat16()) return 16;
  if (t == DataType::Float32()) return 8;  // tf32
  if (t == DataType::Int(8) || t == DataType::UInt(8) || t.is_fp8()) return 32;
  throw_error<NotImplemented>("not implemented: mma.sync with operands of type ", t.str(), " on target cuda");
}


// The PTX tables, as digits:
//   A: row = g + 8 * rh, col = tg * kp + e + 4 * kp * kh, element e + kp * rh + 2 * kp * kh
//   B: row(k) = tg * kp + e + 4 * kp * kh, col(n) = g, element e + kp * kh
//   C: row = g + 8 * rh, col = 2 * tg + e, element e + 2 * rh
// with g = lane / 4 (thread stride 4), tg = lane % 4 (thread stride 1), kp = elements per 32-bit
// register. (For tf32, kp = 1 and the A element order is rh then kh: a0 (g, tg), a1 (g + 8, tg),
// a2 (g, tg + 4), a3 (g + 8, tg + 4), which is the same formula.)
Fragment mma_warp_fragment_a(DataType t) {
  int64_t kp = 32 / t.bits;
  int64_t k = mma_k(t);
  std::vector<FragmentMode> ms = {
      {0, 8, 1, 4, 0},            // g: rows 0..7
      {0, 2, 8, 0, kp},           // rh: row + 8
      {1, kp, 1, 0, 1},           // e: consecutive columns in one register
      {1, 4, kp, 1, 0},           // tg
      {1, 2, 4 * kp, 0, 2 * kp},  // kh: second half of K
  };
  return Fragment::make({16, k}, ms);
}

Fragment mma_warp_fragment_b(DataType t) {
  int64_t kp = 32 / t.bits;
  int64_t k = mma_k(t);
  std::vector<FragmentMode> ms = {
      {0, kp, 1, 0, 1},       // e
      {0, 4, kp, 1, 0},       // tg
      {0, 2, 4 * kp, 0, kp},  // kh
      {1, 8, 1, 4, 0},        // g: columns
  };
  return Fragment::make({k, 8}, ms);
}

Fragment mma_warp_fragment_c() {
  std::vector<FragmentMode> ms = {
      {0, 8, 1, 4, 0},  // g
      {0, 2, 8, 0, 2},  // rh
      {1, 2, 1, 0, 1},  // e
      {1, 4, 2, 1, 0},  // tg
  };
  return Fragment::make({16, 8}, ms);
}

GemmWarpPolicy parse_gemm_warp_policy(const std::string& name) {
  if (name == "Square" || name == "square" || name.empty()) return GemmWarpPolicy::kSquare;
  if (name == "FullRow" || name == "full_row") return GemmWarpPolicy::kFullRow;
  if (name == "FullCol" || name == "full_col") return GemmWarpPolicy::kFullCol;
  throw_error<ValueError>("unknown GemmWarpPolicy '", name, "'; expected Square, FullRow or FullCol");
}

WarpPartition compute_warp_partition(int64_t m, int64_t n, int num_warps, GemmWarpPolicy policy) {
  std::vector<WarpPartition> options;
  for (int wm = 1; wm <= num_warps; ++wm) {
    if (num_warps % wm) continue;
    int wn = num_warps / wm;
    if (m % (16 * wm) == 0 && n % (8 * wn) == 0) options.push_back({wm, wn});
  }
  if (options.empty())
    throw_error<LayoutError>("T.gemm: a [", m, ", ", n, "] accumulator cannot be split over ", num_warps,
                             " warps (each warp needs a multiple of 16 rows and 8 columns); make block_M a "
                             "multiple of 16 * warps and block_N a multiple of 8, or change the thread count");
  auto score = [&](const WarpPartition& w) -> double {
    switch (policy) {
      case GemmWarpPolicy::kFullRow: return -static_cast<double>(w.warps_m);
      case GemmWarpPolicy::kFullCol: return -static_cast<double>(w.warps_n);
      case GemmWarpPolicy::kSquare: {
        double tm = static_cast<double>(m) / w.warps_m, tn = static_cast<double>(n) / w.warps_n;
        return std::abs(tm - tn);
      }
    }
    return 0;
  };
  WarpPartition best = options[0];
  for (const WarpPartition& w : options)
    if (score(w) < score(best) || (score(w) == score(best) && w.warps_m > best.warps_m)) best = w;
  return best;
}

Fragment make_mma_c_fragment(int64_t m, int64_t n, WarpPartition w) {
  if (m % (16 * w.warps_m) || n % (8 * w.warps_n))
    throw_error<LayoutError>("mma accumulator [", m, ", ", n, "] does not split over ", w.warps_m, " x ", w.warps_n,
                             " warps");
  Fragment f = mma_warp_fragment_c();
  f = f.repeat(1, n / w.warps_n / 8, false);
  f = f.repeat(0, m / w.warps_m / 16, false);
  f = f.repeat(1, w.warps_n, true);
  f = f.repeat(0, w.warps_m, true);
  return f;
}

Fragment make_mma_a_fragment(int64_t m, int64_t k, WarpPartition w, DataType t) {
  int64_t kk = mma_k(t);
  if (m % (16 * w.warps_m) || k % kk)
    throw_error<LayoutError>("mma operand A [", m, ", ", k, "] does not split into ", w.warps_m, " warps of 16 x ",
                             kk, " tiles");
  Fragment f = mma_warp_fragment_a(t);
  f = f.repeat(1, k / kk, false);
  f = f.repeat(0, m / w.warps_m / 16, false);
  f = f.replicate_on_threads(w.warps_n);
  f = f.repeat(0, w.warps_m, true);
  return f;
}

Fragment make_mma_b_fragment(int64_t k, int64_t n, WarpPartition w, DataType t) {
  int64_t kk = mma_k(t);
  if (n % (8 * w.warps_n) || k % kk)
    throw_error<LayoutError>("mma operand B [", k, ", ", n, "] does not split into ", w.warps_n, " warps of ", kk,
                             " x 8 tiles");
  Fragment f = mma_warp_fragment_b(t);
  f = f.repeat(0, k / kk, false);
  f = f.repeat(1, n / w.warps_n / 8, false);
  f = f.repeat(1, w.warps_n, true);
  f = f.replicate_on_threads(w.warps_m);
  return f;
}

bool compute_warpgroup_partition(int64_t m, int64_t n, int num_warpgroups, GemmWarpPolicy policy,
                                 WarpgroupPartition* out) {
  bool found = false;
  for (int wm = 1; wm <= num_warpgroups; ++wm) {
    if (num_warpgroups % wm) continue;
    int wn = num_warpgroups / wm;
    if (m % (64 * wm) || n % (8 * wn) || n / wn > 256) continue;
    bool better = !found || (policy == GemmWarpPolicy::kFullCol ? wn > out->wg_n : wm > out->wg_m);
    if (better) *out = {wm, wn};
    found = true;
  }
  return found;
}

Fragment make_wgmma_c_fragment(int64_t m, int64_t n, WarpgroupPartition p) {
  if (m % (64 * p.wg_m) || n % (8 * p.wg_n))
    throw_error<LayoutError>("wgmma accumulator [", m, ", ", n, "] does not split over ", p.wg_m, " x ", p.wg_n,
                             " warpgroups");
  Fragment f = mma_warp_fragment_c();
  f = f.repeat(1, n / p.wg_n / 8, false);   // n-tiles of one instruction
  f = f.repeat(0, 4, true);                 // the warps of a warpgroup, 16 rows each
  f = f.repeat(0, m / p.wg_m / 64, false);  // instruction row tiles
  f = f.repeat(1, p.wg_n, true);
  f = f.repeat(0, p.wg_m, true);
  return f;
}

Fragment make_wgmma_a_fragment(int64_t m, int64_t k, WarpgroupPartition p, DataType t) {
  if (t.bits != 16) throw_error<NotImplemented>("not implemented: a wgmma register operand of type ", t.str());
  if (m % (64 * p.wg_m) || k % 16)
    throw_error<LayoutError>("wgmma operand A [", m, ", ", k, "] does not split into ", p.wg_m,
                             " warpgroups of 64 x 16 tiles");
  Fragment f = mma_warp_fragment_a(t);
  f = f.repeat(1, k / 16, false);
  f = f.repeat(0, 4, true);
  f = f.repeat(0, m / p.wg_m / 64, false);
  f = f.replicate_on_threads(p.wg_n);
  f = f.repeat(0, p.wg_m, true);
  return f;
}

}  // namespace tl
