#include "target/cpu/lower_tile_ops_cpu.h"

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

Stmt lower_tile_op_cpu(const TileOpNode& op, const LowerContext&) {
  if (op.op == "gemm" || op.op == "gemm_v0" || op.op == "mma") return lower_gemm_cpu_call(analyze_gemm(op), op.span);
  return Stmt();
}

namespace {
struct RegisterCpuLowering {
  RegisterCpuLowering() { register_target_tile_op_lowering(Target::kCPU, lower_tile_op_cpu); }
} register_cpu_lowering;
}  // namespace

}  // namespace tl
