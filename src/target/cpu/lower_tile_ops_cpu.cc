#include "target/cpu/lower_tile_ops_cpu.h"

#include "ir/structural.h"
#include "op/op_util.h"
#include "transform/lower_tile_ops.h"

namespace tl {

namespace {

// Stride (elements) of the row dimension of the matrix formed by r's last two dimensions, or an
// undefined Expr when the last dimension is not contiguous.
Expr leading_dimension(const BufferRegion& r) {
  std::vector<Expr> strides = r.buffer.effective_strides();
  size_t n = strides.size();
  if (!is_one(strides[n - 1])) return Expr();
  return make_cast(DataType::Int64(), strides[n - 2]);
}

Expr address_of(const Buffer& b, const std::vector<Expr>& indices) {
  return make_call(DataType::Handle(), "tl.address_of", {make_load(b, indices)});
}

// True when the innermost non-unit dimension of r is its buffer's last dimension and has unit
// stride, so that a row of the region is a contiguous run of elements.
bool rows_contiguous(const BufferRegion& r) {
  std::vector<size_t> dims = squeezed_dims(r);
  if (dims.empty() || dims.back() + 1 != r.buffer.ndim()) return false;
  return is_one(r.buffer.effective_strides().back());
}

// The float types the row routines of include/tl/cpu/reduce.h load (and, for cumsum, store).
bool row_float(DataType t) {
  return t == DataType::Float32() || t == DataType::Float(16) || t == DataType::BFloat16() || t == DataType::Float(64);
}

// index of every squeezed dimension of r: the outer loop variables, then `inner` for the last.
std::vector<Expr> row_index(const LoopNest& outer, const Expr& inner) {
  std::vector<Expr> idx(outer.vars.begin(), outer.vars.end());
  idx.push_back(inner);
  return idx;
}

}  // namespace

Stmt lower_gemm_cpu_call(const GemmOperands& g, const Span& span) {
  if (!is_const_int(g.M) || !is_const_int(g.N) || !is_const_int(g.K)) return Stmt();
  Expr lda = leading_dimension(g.A), ldb = leading_dimension(g.B), ldc = leading_dimension(g.C);
  if (!lda.defined() || !ldb.defined() || !ldc.defined()) return Stmt();
  Expr zero = make_int(0);
  std::vector<Expr> args = {
      make_int(get_const_int(g.M, "M")),
      make_int(get_const_int(g.N, "N")),
      make_int(get_const_int(g.K, "K")),
      make_bool(g.trans_A),
      make_bool(g.trans_B),
      address_of(g.A.buffer, g.a_index(zero, zero)),
      lda,
      address_of(g.B.buffer, g.b_index(zero, zero)),
      ldb,
      address_of(g.C.buffer, g.c_index(zero, zero)),
      ldc,
      g.clear_accum,
  };
  return make_evaluate(make_call(DataType::Void(), "tl.cpu.gemm", std::move(args)), span);
}

Stmt lower_reduce_cpu_call(const TileOpNode& op) {
  if (op.args.size() != 2 || !op.args[0].is_region() || !op.args[1].is_region()) return Stmt();
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  static const std::map<std::string, std::string> kinds = {{"sum", "sum"}, {"max", "max"}, {"min", "min"},
                                                           {"abssum", "abssum"}, {"absmax", "absmax"}};
  auto kind = kinds.find(attr_str(op.attrs, "type", "sum"));
  if (kind == kinds.end()) return Stmt();
  if (attr_bool(op.attrs, "nan_propagate", false)) return Stmt();  // the loop form propagates NaNs
  std::vector<Expr> ext = src.squeezed_extents();
  int64_t rank = static_cast<int64_t>(ext.size());
  int64_t dim = attr_int(op.attrs, "dim", -1);
  if (dim < 0) dim += rank;
  DataType acc_t = compute_dtype(dst.buffer.dtype());
  if (rank == 0 || dim != rank - 1 || !rows_contiguous(src) || !row_float(src.buffer.dtype()) ||
      !(acc_t == DataType::Float32() || acc_t == DataType::Float(64)) ||
      static_cast<int64_t>(dst.squeezed_extents().size()) != rank - 1)
    return Stmt();
  bool clear = attr_bool(op.attrs, "clear", true);
  if (rank == 2 && dst.buffer.dtype() == acc_t) {
    // rows of a 2-D region into a contiguous accumulator-typed run: one reduce_rows call, which
    // folds 16 (AVX-512) rows' totals together (include/tl/cpu/reduce.h); the same results
    std::vector<size_t> sd = squeezed_dims(src), dd = squeezed_dims(dst);
    if (sd.size() == 2 && dd.size() == 1 && is_one(dst.buffer.effective_strides()[dd[0]])) {
      Expr zero = make_int(0, ext.back().dtype());
      Expr ld = make_cast(DataType::Int64(), src.buffer.effective_strides()[sd[0]]);
      return make_evaluate(
          make_call(DataType::Void(), "tl.cpu.reduce_rows",
                    {make_string(kind->second), address_of(src.buffer, region_indices(src, {zero, zero})), ld,
                     make_cast(DataType::Int64(), ext.back()), make_cast(DataType::Int64(), ext[0]),
                     address_of(dst.buffer, region_indices(dst, {zero})), make_bool(clear)}),
          op.span);
    }
  }
  LoopNest out = make_loop_nest(std::vector<Expr>(ext.begin(), ext.end() - 1), "i");
  std::vector<Expr> dst_idx = region_indices(dst, out.indices());
  Expr init = !clear ? make_cast(acc_t, make_load(dst.buffer, dst_idx))
              : kind->first == "max" ? min_value_of(acc_t)
              : kind->first == "min" ? max_value_of(acc_t)
                                     : make_const(acc_t, 0);
  Expr row = address_of(src.buffer, region_indices(src, row_index(out, make_int(0, ext.back().dtype()))));
  Expr value = make_call(acc_t, "tl.cpu.reduce_row",
                         {make_string(kind->second), row, make_cast(DataType::Int64(), ext.back()), init});
  return out.wrap(make_store(dst.buffer, dst_idx, make_cast(dst.buffer.dtype(), value), op.span), ForKind::kSerial);
}

Stmt lower_cumsum_cpu_call(const TileOpNode& op) {
  if (op.args.size() != 2 || !op.args[0].is_region() || !op.args[1].is_region()) return Stmt();
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  std::vector<Expr> ext = common_extents(dst, src);
  if (ext.empty() || ext.size() != src.squeezed_extents().size()) return Stmt();
  int64_t rank = static_cast<int64_t>(ext.size());
  int64_t dim = attr_int(op.attrs, "dim", 0);
  if (dim < 0) dim += rank;
  auto float_acc = [](DataType t) { return row_float(t) && t != DataType::Float(64); };
  if (dim != rank - 1 || !rows_contiguous(src) || !rows_contiguous(dst) || !float_acc(src.buffer.dtype()) ||
      !float_acc(dst.buffer.dtype()))
    return Stmt();
  if (src.buffer.same_as(dst.buffer)) {  // in place: only over the very same elements
    for (size_t d = 0; d < src.region.size(); ++d)
      if (!structural_equal(src.region[d].min, dst.region[d].min) ||
          !structural_equal(src.region[d].extent, dst.region[d].extent))
        return Stmt();
  }
  LoopNest out = make_loop_nest(std::vector<Expr>(ext.begin(), ext.end() - 1), "i");
  Expr zero = make_int(0, ext.back().dtype());
  Expr call = make_call(DataType::Void(), "tl.cpu.cumsum_row",
                        {address_of(src.buffer, region_indices(src, row_index(out, zero))),
                         address_of(dst.buffer, region_indices(dst, row_index(out, zero))),
                         make_cast(DataType::Int64(), ext.back()), make_bool(attr_bool(op.attrs, "reverse", false))});
  return out.wrap(make_evaluate(call, op.span), ForKind::kSerial);
}

Stmt lower_tile_op_cpu(const TileOpNode& op, const LowerContext& ctx) {
  const TargetTileOpLowering* hook = find_target_tile_op_lowering(Target::kCPU);
  return hook ? (*hook)(op, ctx) : Stmt();
}

namespace {
struct RegisterCpuLowering {
  RegisterCpuLowering() {
    // Every GEMM spelling (gemm, gemm_v0, mma) runs the header GEMM for static shapes.
    register_tile_op_lowering(Target::kCPU, TileOpKind::kGemm, [](const TileOpNode& op, const LowerContext&) {
      return lower_gemm_cpu_call(analyze_gemm(op), op.span);
    });
    register_tile_op_lowering(Target::kCPU, TileOpKind::kReduce,
                              [](const TileOpNode& op, const LowerContext&) { return lower_reduce_cpu_call(op); });
    register_tile_op_lowering(Target::kCPU, TileOpKind::kCumsum,
                              [](const TileOpNode& op, const LowerContext&) { return lower_cumsum_cpu_call(op); });
  }
} register_cpu_lowering;
}  // namespace

}  // namespace tl
