// T.cumsum(src, dst, dim, reverse): inclusive prefix sum of the (squeezed) src tile along `dim`
// into dst of the same shape; reverse=true sums from the end. dst may be src.
//
// Along the innermost dimension a float32 (for 16/8-bit floats) scalar carries the running sum;
// along an outer dimension each row adds the previous row of dst, so the innermost loop stays
// contiguous (the running sum is then held in dst's own dtype).
#include "ir/error.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

struct CumsumInfo {
  BufferRegion src, dst;
  int64_t dim = 0;
  bool reverse = false;
  std::vector<Expr> extents;  // squeezed
};

CumsumInfo analyze_cumsum(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.cumsum(src, dst, dim, reverse)");
  check_same_shape_tiles(op, 0, "src", 1, "dst");
  CumsumInfo c;
  c.src = op.args[0].region;
  c.dst = op.args[1].region;
  c.extents = common_extents(c.dst, c.src);
  c.dim = squeezed_dim_attr(op, c.src, c.extents, 0, "scan");
  c.reverse = attr_bool(op.attrs, "reverse", false);
  for (const BufferRegion* b : {&c.src, &c.dst})
    check_numeric_buffer(op, *b, false, "cumsum needs integer or floating-point buffers");
  return c;
}

void check_cumsum(const TileOpNode& op) { analyze_cumsum(op); }

AccessRegions access_cumsum(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  a.write(op, 1);
  return a;
}

Stmt lower_cumsum(const TileOpNode& op, const LowerContext&) {
  CumsumInfo c = analyze_cumsum(op);
  DataType dst_t = c.dst.buffer.dtype();
  size_t rank = c.extents.size();
  size_t dim = static_cast<size_t>(c.dim);
  Expr n = c.extents[dim];
  // Position along `dim` of scan step s (0 = first element summed).
  auto position = [&](const Expr& s) { return c.reverse ? n - 1 - s : s; };

  std::vector<Expr> other_ext;
  for (size_t d = 0; d < rank; ++d)
    if (d != dim) other_ext.push_back(c.extents[d]);
  auto full_index = [&](const LoopNest& nest, const Expr& pos) {
    std::vector<Expr> idx;
    size_t k = 0;
    for (size_t d = 0; d < rank; ++d) idx.push_back(d == dim ? pos : Expr(nest.vars[k++]));
    return idx;
  };

  if (dim + 1 == rank) {
    DataType acc_t = compute_dtype(dst_t);
    LoopNest outer = make_loop_nest(other_ext, "i");
    Var s("s", n.dtype());
    Buffer acc("acc", acc_t, {make_int(1)}, MemScope::kLocalVar);
    Expr a = make_load(acc, {make_int(0)});
    std::vector<Expr> idx = full_index(outer, position(s));
    Stmt step = make_seq({
        make_store(acc, {make_int(0)}, a + make_cast(acc_t, region_load(c.src, idx))),
        make_store(c.dst.buffer, region_indices(c.dst, idx), make_cast(dst_t, a), op.span),
    });
    Stmt body = make_seq({make_store(acc, {make_int(0)}, make_const(acc_t, 0)),
                          make_for(s, make_int(0, s.dtype()), n, ForKind::kSerial, step)});
    return outer.wrap(make_allocate(acc, body));
  }

  // Outer dimension: row by row; loops in dst order with the scan serial at `dim`.
  auto nest_at = [&](const LoopNest& nest, const Expr& scan_var, const Expr& scan_extent, Stmt body) {
    for (size_t d = rank; d-- > 0;) {
      if (d == dim) {
        if (scan_var.defined()) {
          Var v(std::static_pointer_cast<const VarNode>(scan_var.node()));
          body = make_for(v, make_int(1, v.dtype()), scan_extent - 1, ForKind::kSerial, body);
        }
      } else {
        size_t k = d < dim ? d : d - 1;
        body = make_for(nest.vars[k], make_int(0, nest.vars[k].dtype()), nest.extents[k], ForKind::kParallel, body);
      }
    }
    return body;
  };
  // First element along the scan: a plain copy.
  LoopNest first = make_loop_nest(other_ext, "i");
  std::vector<Expr> fidx = full_index(first, position(make_int(0, n.dtype())));
  Stmt init = nest_at(first, Expr(), Expr(),
                      make_store(c.dst.buffer, region_indices(c.dst, fidx),
                                 make_cast(dst_t, region_load(c.src, fidx)), op.span));
  // Then dst[s] = dst[s - 1] + src[s] for s = 1 .. n-1 (in scan order).
  LoopNest rest = make_loop_nest(other_ext, "i");
  Var s("s", n.dtype());
  std::vector<Expr> cur = full_index(rest, position(s));
  std::vector<Expr> prev = full_index(rest, c.reverse ? n - s : s - 1);
  DataType acc_t = compute_dtype(dst_t);
  Expr sum = make_cast(acc_t, make_load(c.dst.buffer, region_indices(c.dst, prev))) +
             make_cast(acc_t, region_load(c.src, cur));
  Stmt step = make_store(c.dst.buffer, region_indices(c.dst, cur), make_cast(dst_t, sum), op.span);
  return make_seq({init, nest_at(rest, s, n, step)});
}

}  // namespace

void CumsumOp::verify(const TileOpNode& op) const { check_cumsum(op); }
AccessRegions CumsumOp::effects(const TileOpNode& op) const { return access_cumsum(op); }
Stmt CumsumOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_cumsum(op, ctx); }

namespace {
TileOpRegistration reg_cumsum(std::make_unique<CumsumOp>());
}  // namespace

}  // namespace tl
