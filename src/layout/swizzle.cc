#include "layout/swizzle.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/error.h"

namespace tl {

bool swizzle_applicable(const std::vector<int64_t>& shape, int elem_bytes) {
  if (shape.empty() || elem_bytes <= 0 || elem_bytes > 16 || 16 % elem_bytes) return false;
  int64_t row_bytes = shape.back() * elem_bytes;
  int64_t total = elem_bytes;
  for (int64_t s : shape) total *= s;
  if (row_bytes < 16 || row_bytes % 16) return false;
  if (row_bytes % 128 != 0 && 128 % row_bytes != 0) return false;
  return total % 128 == 0;
}

Layout make_swizzled_layout(const std::vector<int64_t>& shape, int elem_bytes) {
  if (!swizzle_applicable(shape, elem_bytes))
    throw_error<LayoutError>("no bank-conflict-free swizzle for a shared tile of row length ", shape.back(), " x ",
                             elem_bytes, " bytes; rows must be 16/32/64 bytes or a multiple of 128 bytes");
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  const int64_t cols = shape.back();
  const int64_t row_bytes = cols * elem_bytes;
  const int64_t chunk_elems = 16 / elem_bytes;                  // elements per 16-byte chunk
  const int64_t phase_elems = std::max<int64_t>(row_bytes, 128) / elem_bytes;  // elements per phase step
  return make_layout(shape, {total}, [&](const std::vector<Var>& v) {
    std::vector<Expr> idx(v.begin(), v.end());
    Expr flat = flatten_index(idx, shape);
    Expr phase = floormod(floordiv(flat, make_int(phase_elems)), make_int(8));
    if (row_bytes % 128 == 0) {
      // The chunk bits lie inside the column: permute the column only.
      std::vector<Expr> rows(idx.begin(), idx.end() - 1);
      std::vector<int64_t> row_shape(shape.begin(), shape.end() - 1);
      Expr row = rows.empty() ? make_int(0) : flatten_index(rows, row_shape);
      Expr rphase = floormod(row, make_int(8));
      Expr col = make_binary(BinOp::kBitXor, idx.back(), rphase * make_int(chunk_elems));
      return std::vector<Expr>{row * make_int(cols) + col};
    }
    return std::vector<Expr>{make_binary(BinOp::kBitXor, flat, phase * make_int(chunk_elems))};
  }, "swizzled");
}

int gmma_swizzle_bytes(int64_t cols, int elem_bytes) {
  if (elem_bytes <= 0 || cols <= 0) return 0;
  int64_t bytes = cols * elem_bytes;
  if (bytes % 128 == 0) return 128;
  if (bytes == 64 || bytes == 32) return static_cast<int>(bytes);
  return 0;
}

Layout make_gmma_layout(const std::vector<int64_t>& shape, int elem_bytes, int swizzle_bytes) {
  if (shape.size() < 2 || shape[shape.size() - 2] % 8 != 0 || elem_bytes <= 0 || 16 % elem_bytes ||
      (swizzle_bytes != 128 && swizzle_bytes != 64 && swizzle_bytes != 32) ||
      (shape.back() * elem_bytes) % swizzle_bytes != 0)
    throw_error<LayoutError>("no ", swizzle_bytes, "-byte wgmma layout for a shared tile of shape [",
                             shape.size() >= 2 ? shape[shape.size() - 2] : 0, ", ", shape.back(), "] of ",
                             elem_bytes, "-byte elements; rows must be a multiple of 8 and a row a multiple of ",
                             swizzle_bytes, " bytes");
  const int64_t rows = shape[shape.size() - 2], cols = shape.back();
  const int64_t panel = swizzle_bytes / elem_bytes;       // elements per panel row
  const int64_t chunk = 16 / elem_bytes;                  // elements per 16-byte chunk
  const int64_t row_div = 128 / swizzle_bytes;            // rows per 128-byte line
  const int64_t phases = swizzle_bytes / 16;              // chunks per panel row
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  const std::string name = "gmma" + std::to_string(swizzle_bytes);
  return make_layout(shape, {total}, [&](const std::vector<Var>& v) {
    std::vector<Expr> lead(v.begin(), v.end() - 2);
    std::vector<int64_t> lead_shape(shape.begin(), shape.end() - 2);
    Expr r = v[v.size() - 2], c = v.back();
    Expr phase = floormod(floordiv(r, make_int(row_div)), make_int(phases)) * make_int(chunk);
    Expr in_panel = r * make_int(panel) + make_binary(BinOp::kBitXor, floormod(c, make_int(panel)), phase);
    Expr off = floordiv(c, make_int(panel)) * make_int(rows * panel) + in_panel;
    if (!lead.empty()) off = flatten_index(lead, lead_shape) * make_int(rows * cols) + off;
    return std::vector<Expr>{off};
  }, name);
}

bool chunk_preserving(const Layout& layout) {
  const std::string& n = layout->name;
  return n == "row_major" || n == "swizzled" || n.rfind("gmma", 0) == 0;
}

int shared_wavefronts(const std::vector<int64_t>& addrs, int access_bytes) {
  if (access_bytes != 4 && access_bytes != 8 && access_bytes != 16)
    throw_error<ValueError>("shared_wavefronts: access size must be 4, 8 or 16 bytes");
  const size_t per_phase = static_cast<size_t>(128 / access_bytes);
  int total = 0;
  for (size_t start = 0; start < addrs.size(); start += per_phase) {
    std::map<int64_t, std::set<int64_t>> words_per_bank;
    for (size_t i = start; i < std::min(addrs.size(), start + per_phase); ++i) {
      for (int64_t b = 0; b < access_bytes; b += 4) {
        int64_t word = (addrs[i] + b) / 4;
        words_per_bank[word % 32].insert(word);
      }
    }
    size_t worst = 0;
    for (auto& [bank, words] : words_per_bank) worst = std::max(worst, words.size());
    total += static_cast<int>(worst);
  }
  return total;
}

bool rows_vectorizable(const Layout& layout, int elem_bytes) {
  const std::vector<int64_t>& shape = layout.input_shape();
  if (shape.empty() || 16 % elem_bytes) return false;
  const int64_t vec = 16 / elem_bytes;
  if (shape.back() % vec) return false;
  bool ok = true;
  for_each_index(shape, [&](const std::vector<int64_t>& idx) {
    if (idx.back() % vec) return true;
    int64_t base = layout.apply_flat(idx);
    if (base % vec) {
      ok = false;
      return false;
    }
    std::vector<int64_t> j = idx;
    for (int64_t e = 1; e < vec; ++e) {
      j.back() = idx.back() + e;
      if (layout.apply_flat(j) != base + e) {
        ok = false;
        return false;
      }
    }
    return true;
  });
  return ok;
}

}  // namespace tl
