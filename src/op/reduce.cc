// T.reduce_sum / reduce_max / reduce_min / reduce_abssum / reduce_absmax(src, dst, dim, clear):
// reduces the (squeezed) src tile along `dim` into dst, whose squeezed shape is src's without
// `dim`. With clear=false the result is combined with dst's old value.
//
// The loop form accumulates in float32 for 16/8-bit floats (and in the dst dtype otherwise).
// Reducing the innermost dimension keeps one scalar accumulator per output element; reducing
// an outer dimension sweeps whole rows so the innermost loop stays contiguous.
#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"
#include "layout/infer_layout.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

const std::vector<std::string> kReduceTypes = {"sum", "max", "min", "abssum", "absmax"};

struct ReduceInfo {
  BufferRegion src, dst;
  std::string type;
  int64_t dim = 0;
  bool clear = true;
  std::vector<Expr> src_extents;  // squeezed
  bool nan_propagate = false;     // max / min / absmax: a NaN element makes the result NaN
};

ReduceInfo analyze_reduce(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.reduce_<type>(src, dst, dim, clear)");
  ReduceInfo r;
  r.src = region_arg(op, 0, "src");
  r.dst = region_arg(op, 1, "dst");
  check_region_well_formed(op, r.src, "src");
  check_region_well_formed(op, r.dst, "dst");
  r.type = checked_str_attr(op, "type", kReduceTypes, "sum");
  r.clear = attr_bool(op.attrs, "clear", true);
  r.nan_propagate = attr_bool(op.attrs, "nan_propagate", false);
  r.src_extents = r.src.squeezed_extents();
  int64_t rank = static_cast<int64_t>(r.src_extents.size());
  r.dim = squeezed_dim_attr(op, r.src, r.src_extents, -1, "reduce");
  std::vector<Expr> want;
  for (int64_t d = 0; d < rank; ++d)
    if (d != r.dim) want.push_back(r.src_extents[d]);
  auto got = r.dst.squeezed_extents();
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) ok = extents_may_equal(got[i], want[i]);
  if (!ok) {
    std::ostringstream os;
    os << "dst " << describe_region(r.dst) << " must have src's shape " << describe_extents(r.src_extents)
       << " without dimension " << r.dim << ", i.e. " << describe_extents(want) << ", but has "
       << describe_extents(got) << " (unit dimensions dropped)";
    throw_op_error_value(op, os.str());
  }
  for (const BufferRegion* b : {&r.src, &r.dst})
    check_numeric_buffer(op, *b, false, "reductions need integer or floating-point buffers");
  return r;
}

void check_reduce(const TileOpNode& op) { analyze_reduce(op); }

AccessRegions access_reduce(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  if (!attr_bool(op.attrs, "clear", true)) a.read(op, 1);
  a.write(op, 1);
  return a;
}

Expr reduce_identity(const std::string& type, DataType t) {
  if (type == "max") return min_value_of(t);
  if (type == "min") return max_value_of(t);
  return make_const(t, 0);  // sum, abssum, absmax (|x| >= 0)
}

Expr reduce_element(const std::string& type, const Expr& x, DataType t) {
  Expr v = make_cast(t, x);
  if (type == "abssum" || type == "absmax") return make_call(t, "abs", {v});
  return v;
}

Expr reduce_combine(const std::string& type, const Expr& acc, const Expr& v, bool nan_propagate) {
  if (type == "max" || type == "absmax") return nan_propagate ? max_propagating_nan(acc, v) : max(acc, v);
  if (type == "min") return nan_propagate ? min_propagating_nan(acc, v) : min(acc, v);
  return acc + v;
}

Stmt lower_reduce(const TileOpNode& op, const LowerContext&) {
  ReduceInfo r = analyze_reduce(op);
  DataType dst_t = r.dst.buffer.dtype();
  DataType acc_t = compute_dtype(dst_t);
  size_t rank = r.src_extents.size();
  size_t dim = static_cast<size_t>(r.dim);
  Expr red_extent = r.src_extents[dim];
  Var rv("r", red_extent.dtype());

  // Output loops (src dims except `dim`).
  std::vector<Expr> out_ext;
  for (size_t d = 0; d < rank; ++d)
    if (d != dim) out_ext.push_back(r.src_extents[d]);
  LoopNest out = make_loop_nest(out_ext, "i");
  auto src_index = [&](const Expr& red) {
    std::vector<Expr> idx;
    size_t k = 0;
    for (size_t d = 0; d < rank; ++d) idx.push_back(d == dim ? red : Expr(out.vars[k++]));
    return idx;
  };
  std::vector<Expr> dst_idx = region_indices(r.dst, out.indices());
  Expr dst_val = make_load(r.dst.buffer, dst_idx);

  if (dim + 1 == rank) {
    // One accumulator per output element, a serial sweep along the contiguous dimension.
    Buffer acc("acc", acc_t, {make_int(1)}, MemScope::kLocalVar);
    Expr a = make_load(acc, {make_int(0)});
    Expr init = r.clear ? reduce_identity(r.type, acc_t) : make_cast(acc_t, dst_val);
    Expr x = reduce_element(r.type, region_load(r.src, src_index(rv)), acc_t);
    Stmt body = make_seq({
        make_store(acc, {make_int(0)}, init),
        make_for(rv, make_int(0, rv.dtype()), red_extent, ForKind::kSerial,
                 make_store(acc, {make_int(0)}, reduce_combine(r.type, a, x, r.nan_propagate))),
        make_store(r.dst.buffer, dst_idx, make_cast(dst_t, a), op.span),
    });
    return out.wrap(make_allocate(acc, body));
  }

  // Outer dimension: accumulate whole rows into dst (or a float32 copy of it for 16/8-bit dst).
  bool in_place = acc_t == dst_t;
  Buffer acc = in_place ? r.dst.buffer : Buffer("acc", acc_t, out_ext, MemScope::kLocal);
  auto acc_index = [&](const std::vector<Expr>& o) { return in_place ? region_indices(r.dst, o) : o; };
  std::vector<Stmt> seq;
  if (r.clear || !in_place) {
    LoopNest ini = make_loop_nest(out_ext, "i");
    Expr old = make_load(r.dst.buffer, region_indices(r.dst, ini.indices()));
    Expr init = r.clear ? reduce_identity(r.type, acc_t) : make_cast(acc_t, old);
    seq.push_back(ini.wrap(make_store(acc, acc_index(ini.indices()), init)));
  }
  // Loops in src order: outer output dims parallel, the reduction serial, inner output dims parallel.
  Expr x = reduce_element(r.type, region_load(r.src, src_index(rv)), acc_t);
  Expr cur = make_load(acc, acc_index(out.indices()));
  Stmt body = make_store(acc, acc_index(out.indices()), reduce_combine(r.type, cur, x, r.nan_propagate));
  for (size_t d = rank; d-- > 0;) {
    if (d == dim) {
      body = make_for(rv, make_int(0, rv.dtype()), red_extent, ForKind::kSerial, body);
    } else {
      size_t k = d < dim ? d : d - 1;
      body = make_for(out.vars[k], make_int(0, out.vars[k].dtype()), out.extents[k], ForKind::kParallel, body);
    }
  }
  seq.push_back(body);
  if (!in_place) {
    LoopNest wb = make_loop_nest(out_ext, "i");
    seq.push_back(wb.wrap(make_store(r.dst.buffer, region_indices(r.dst, wb.indices()),
                                     make_cast(dst_t, make_load(acc, wb.indices())), op.span)));
    return make_allocate(acc, make_seq(std::move(seq)));
  }
  return make_seq(std::move(seq));
}

}  // namespace

void ReduceOp::verify(const TileOpNode& op) const { check_reduce(op); }
AccessRegions ReduceOp::effects(const TileOpNode& op) const { return access_reduce(op); }
Stmt ReduceOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_reduce(op, ctx); }

namespace {
TileOpRegistration reg_reduce(std::make_unique<ReduceOp>());
}  // namespace

// Layout inference: the result of a reduction takes the reduced layout of its source (or, when the
// result's layout came first, the source is laid out around it); the source may take the default
// layout, the destination follows it.
bool ReduceOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  if (stage == LayoutStage::kFree) return ctx.set_default_fragment(op, /*except_arg=*/1);
  if (stage != LayoutStage::kPropagate) return false;
  if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region()) return false;
  LayoutRegion src = layout_region(op.args[0].region), dst = layout_region(op.args[1].region);
  if (!is_fragment_buffer(src.buffer) || !is_fragment_buffer(dst.buffer)) return false;
  const Fragment* s = ctx.fragment(src.buffer);
  if (!s) {
    // The result's layout came first (a T.Parallel loop using it): lay the source out so that
    // each thread holds the whole reduced dimension of its result elements (a reduction inside
    // each thread), instead of choosing a second, conflicting layout for the result.
    const Fragment* d = ctx.fragment(dst.buffer);
    int64_t dim = attr_int(op.attrs, "dim", -1);
    if (!d || !src.full || !dst.full || dim < 0 || dim >= static_cast<int64_t>(src.dims.size())) return false;
    std::vector<int64_t> sshape = const_shape(src.buffer, "fragment");
    int bdim = src.dims[static_cast<size_t>(dim)];
    std::vector<int64_t> rest = sshape;
    rest.erase(rest.begin() + bdim);
    if (rest != d->shape()) return false;
    ctx.set_fragment(src.buffer, d->insert_register_dim(bdim, sshape[static_cast<size_t>(bdim)]),
                     op_error_prefix(op) + "the source of a reduction whose result's layout is known");
    return true;
  }
  if (!src.full)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reducing part of fragment '",
                                src.buffer.name(), "' on target cuda; reduce the whole fragment or copy the part "
                                "to its own fragment");
  int64_t dim = attr_int(op.attrs, "dim", -1);
  if (dim < 0 || dim >= static_cast<int64_t>(src.dims.size()))
    throw_error<LayoutError>(op_error_prefix(op), "reduction dimension ", dim, " out of range");
  int bdim = src.dims[static_cast<size_t>(dim)];
  Fragment want = s->reduce(bdim);
  std::vector<int64_t> dshape = const_shape(dst.buffer, "fragment");
  if (want.shape() != dshape) {
    // [M] vs [M, 1] and the like: drop unit dimensions on both sides.
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reducing ", shape_str(s->shape()),
                                " over dimension ", dim, " into fragment '", dst.buffer.name(), "' of shape ",
                                shape_str(dshape), "; the destination must have the source's shape without ",
                                "that dimension");
  }
  ctx.set_fragment(dst.buffer, want, op_error_prefix(op) + "the result of the reduction");
  return true;
}

}  // namespace tl
