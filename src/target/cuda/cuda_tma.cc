// TMA copies (see cuda_tma.h).
#include "target/cuda/cuda_tma.h"

#include "ir/error.h"
#include "ir/tile_op.h"
#include "target/cuda/cuda_ops.h"
#include "target/cuda/lower_context.h"

namespace tl {

int tma_data_type(DataType t) {
  if (t.lanes != 1) return -1;
  if (t == DataType::Float(16)) return 6;
  if (t == DataType::BFloat16()) return 9;
  if (t == DataType::Float32()) return 7;
  if (t == DataType::Float(64)) return 8;
  if (t.is_fp8() || t.is_bool() || (t.is_integer() && t.bits == 8)) return 0;  // UINT8: bytes
  if (t.is_integer() && t.bits == 16) return 1;
  if (t == DataType::UInt(32)) return 2;
  if (t == DataType::Int(32)) return 3;
  if (t == DataType::UInt(64)) return 4;
  if (t == DataType::Int(64)) return 5;
  return -1;
}

bool plan_tma_box(const BufferRegion& src, const std::vector<int64_t>& tile, int swizzle, TmaBoxPlan* plan,
                  std::string* why) {
  auto no = [&](const std::string& w) {
    *why = w;
    return false;
  };
  const Buffer& g = src.buffer;
  if (g.scope() != MemScope::kGlobal) return no("the source is not a global tensor");
  const size_t n = g.ndim();
  if (n < 1 || n > 5) return no("TMA takes tensors of 1 to 5 dimensions, '" + g.name() + "' has " + std::to_string(n));
  if (tma_data_type(g.dtype()) < 0) return no("no tensor-map type for " + g.dtype().str());
  const int64_t eb = g.dtype().element_bytes();
  // Strides: the innermost 1, the others (bytes) provably multiples of 16.
  std::vector<Expr> strides = g.effective_strides();
  if (!is_one(strides.back())) return no("'" + g.name() + "' is not contiguous in its last dimension");
  for (size_t d = 0; d + 1 < n; ++d)
    if (!provably_divisible(strides[d] * make_int(eb, strides[d].dtype()), 16))
      return no("a stride of '" + g.name() + "' is not provably a multiple of 16 bytes");
  std::vector<int64_t> ext;
  for (const Range& r : src.region) {
    int64_t e = 0;
    if (!is_const_int(r.extent, &e) || e <= 0) return no("the region of '" + g.name() + "' has a run-time extent");
    ext.push_back(e);
  }
  if (tile.empty() || ext.back() != tile.back())
    return no("the copy does not keep the last dimension of '" + g.name() + "' as the tile's rows");
  int64_t total = 1, tile_total = 1;
  for (int64_t e : ext) total *= e;
  for (int64_t e : tile) tile_total *= e;
  if (total != tile_total) return no("the tile and the region differ in size");
  const int64_t cols = tile.back();
  int64_t panel = cols;
  if (swizzle) {
    panel = swizzle / eb;
    if (cols % panel) return no("the tile's rows are not whole swizzle panels");
    if (tile.size() != 2) return no("a swizzled tile of more than two dimensions");
  }
  if ((panel * eb) % 16) return no("a row of " + std::to_string(panel * eb) + " bytes is not a multiple of 16");
  if (panel > 256) return no("a row of " + std::to_string(panel) + " elements (TMA boxes take at most 256)");
  TmaBoxPlan p;
  p.swizzle = swizzle;
  p.box.push_back(panel);
  for (int d = static_cast<int>(n) - 2; d >= 0; --d) {
    if (ext[static_cast<size_t>(d)] > 256)
      return no("an extent of " + std::to_string(ext[static_cast<size_t>(d)]) + " (TMA boxes take at most 256)");
    p.box.push_back(ext[static_cast<size_t>(d)]);
  }
  p.panels = cols / panel;
  p.panel_elems = (total / cols) * panel;
  p.bytes = total * eb;
  *plan = p;
  return true;
}

Stmt lower_cuda_tma_copy(const TileOpNode& op, CudaLowerCtx& ctx) {
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  TL_ICHECK(dst.buffer.scope() == MemScope::kShared, op_error_prefix(op), "TMA copy into a non-shared buffer");
  int swizzle = 0;
  if (auto it = ctx.layouts.shared.find(dst.buffer); it != ctx.layouts.shared.end()) {
    const std::string& name = it->second->name;
    TL_ICHECK(name.rfind("gmma", 0) == 0 || name == "row_major", op_error_prefix(op), "TMA copy into '",
              dst.buffer.name(), "' laid out as ", name);
    if (name.rfind("gmma", 0) == 0) swizzle = std::stoi(name.substr(4));
  }
  std::vector<int64_t> tile = const_extents(src, op_error_prefix(op) + "src");
  if (swizzle) {
    std::vector<int64_t> shape = const_shape(dst.buffer, "shared buffer");
    tile = {shape[shape.size() - 2], shape.back()};
  }
  TmaBoxPlan plan;
  std::string why;
  TL_ICHECK(plan_tma_box(src, tile, swizzle, &plan, &why), op_error_prefix(op), "TMA copy: ", why);
  auto mb = op.attrs.find("mbarrier");
  TL_ICHECK(mb != op.attrs.end(), op_error_prefix(op), "TMA copy without an mbarrier");
  Expr bar = lower_uniform_accesses(ctx, mb->second.as_expr());
  const Buffer& g = src.buffer;
  std::vector<Expr> zeros(g.ndim(), make_int(0));
  Expr tensor = make_load(g, zeros);
  const size_t n = g.ndim();
  // Multicast across a cluster of `mc` CTAs (warp_specialize decided it can): this CTA loads rows
  // [rank * share, (rank + 1) * share) of every box into all of them.
  const int64_t mc = attr_int(op.attrs, "multicast", 1);
  int64_t share = 0;
  Expr rank;
  if (mc > 1) {
    TL_ICHECK(n >= 2 && plan.box.size() >= 2 && plan.box[1] % mc == 0 && dst.region.size() >= 2, op_error_prefix(op),
              "TMA multicast of a box that does not split along its rows");
    share = plan.box[1] / mc;
    plan.box[1] = share;
    rank = make_call(DataType::Int32(), "cuda.cluster_rank", {});
  }
  std::vector<Stmt> out;
  for (int64_t p = 0; p < plan.panels; ++p) {
    std::vector<Expr> didx;
    for (const Range& r : dst.region) didx.push_back(r.min);
    didx.back() = didx.back() + make_int(p * plan.box[0], didx.back().dtype());
    if (mc > 1) {
      Expr& row = didx[didx.size() - 2];
      row = row + rank * make_int(share, DataType::Int32());
    }
    std::vector<Expr> args = {tensor, ctx.address_of(dst.buffer, didx, 2), bar, make_int(swizzle),
                              make_int(static_cast<int64_t>(n))};
    for (int64_t b : plan.box) args.push_back(make_int(b));
    for (size_t i = 0; i < n; ++i) {
      Expr c = src.region[n - 1 - i].min;
      if (i == 0 && p) c = c + make_int(p * plan.box[0], c.dtype());
      c = c.dtype() == DataType::Int32() ? c : make_cast(DataType::Int32(), c);
      if (i == 1 && mc > 1) c = c + rank * make_int(share, DataType::Int32());
      args.push_back(c);
    }
    if (mc > 1) args.push_back(make_int((int64_t(1) << mc) - 1));  // the multicast mask: every CTA
    out.push_back(builtin_stmt("cuda.tma_load", args));
  }
  return make_seq(out, op.span);
}

Stmt lower_cuda_tma_store(const TileOpNode& op, CudaLowerCtx& ctx) {
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  TL_ICHECK(src.buffer.scope() == MemScope::kShared, op_error_prefix(op), "TMA store from a non-shared buffer");
  int swizzle = 0;
  if (auto it = ctx.layouts.shared.find(src.buffer); it != ctx.layouts.shared.end()) {
    const std::string& name = it->second->name;
    TL_ICHECK(name.rfind("gmma", 0) == 0 || name == "row_major", op_error_prefix(op), "TMA store from '",
              src.buffer.name(), "' laid out as ", name);
    if (name.rfind("gmma", 0) == 0) swizzle = std::stoi(name.substr(4));
  }
  TL_ICHECK(swizzle == attr_int(op.attrs, "swizzle", swizzle), op_error_prefix(op), "TMA store from '",
            src.buffer.name(), "': planned with swizzle ", attr_int(op.attrs, "swizzle", 0), ", laid out with ", swizzle);
  std::vector<int64_t> tile = const_shape(src.buffer, "shared buffer");
  TmaBoxPlan plan;
  std::string why;
  TL_ICHECK(plan_tma_box(dst, tile, swizzle, &plan, &why), op_error_prefix(op), "TMA store: ", why);
  const Buffer& g = dst.buffer;
  const size_t n = g.ndim();
  std::vector<Expr> zeros(n, make_int(0));
  Expr tensor = make_load(g, zeros);
  std::vector<Stmt> issue;
  for (int64_t p = 0; p < plan.panels; ++p) {
    std::vector<Expr> sidx;
    for (size_t d = 0; d < tile.size(); ++d) sidx.push_back(make_int(0));
    sidx.back() = make_int(p * plan.box[0]);
    std::vector<Expr> args = {tensor, ctx.address_of(src.buffer, sidx, 1), make_int(swizzle),
                              make_int(static_cast<int64_t>(n))};
    for (int64_t b : plan.box) args.push_back(make_int(b));
    for (size_t i = 0; i < n; ++i) {
      Expr c = dst.region[n - 1 - i].min;
      if (i == 0 && p) c = c + make_int(p * plan.box[0], c.dtype());
      args.push_back(c.dtype() == DataType::Int32() ? c : make_cast(DataType::Int32(), c));
    }
    issue.push_back(builtin_stmt("cuda.tma_store", args));
  }
  issue.push_back(builtin_stmt("cuda.tma_store_commit", {}));
  return make_seq({builtin_stmt("cuda.fence_proxy_async", {}), builtin_stmt("tl.sync_threads", {}),
                   make_if(eq(ctx.tid, make_int(0, ctx.tid.dtype())), make_seq(issue))},
                  op.span);
}

}  // namespace tl
