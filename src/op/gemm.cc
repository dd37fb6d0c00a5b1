// T.gemm(A, B, C, transpose_A, transpose_B, policy, clear_accum, k_pack) and the Ascend Expert
// ops gemm_v0(A, B, C, transpose_A, transpose_B, init) and mma(A, B, C, init).
// Numerics: fp16/bf16/fp8 inputs accumulate in C's dtype (float32 in practice), int8 in int32.
#include "op/gemm.h"

#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {

namespace {

// Index list addressing (row, col) of the matrix formed by the last two dims of r.
std::vector<Expr> matrix_index(const BufferRegion& r, const Expr& row, const Expr& col) {
  std::vector<Expr> idx;
  size_t n = r.region.size();
  for (size_t d = 0; d + 2 < n; ++d) idx.push_back(r.region[d].min);
  idx.push_back(r.region[n - 2].min + row);
  idx.push_back(r.region[n - 1].min + col);
  return idx;
}

void check_matrix_region(const TileOpNode& op, const BufferRegion& r, const char* role) {
  check_region_well_formed(op, r, role);
  if (r.region.size() < 2)
    throw_op_error_type(op, std::string("operand ") + role + " " + describe_region(r) +
                                " must be a 2-D tile (rows, columns)");
  for (size_t d = 0; d + 2 < r.region.size(); ++d) {
    if (!is_one(r.region[d].extent)) {
      std::ostringstream os;
      os << "operand " << role << " " << describe_region(r) << " has extent " << print_expr(r.region[d].extent)
         << " in dimension " << d << "; only the last two dimensions of a gemm operand may be larger than 1";
      throw_op_error_value(op, os.str());
    }
  }
}

void check_extent_pair(const TileOpNode& op, const char* what, const Expr& a, const char* role_a, const Expr& b,
                       const char* role_b, const GemmOperands& g) {
  if (extents_may_equal(a, b)) return;
  std::ostringstream os;
  os << "the " << what << " of " << role_a << " (" << print_expr(a) << ") and " << role_b << " (" << print_expr(b)
     << ") differ: A " << describe_region(g.A) << (g.trans_A ? " (transposed)" : "") << ", B "
     << describe_region(g.B) << (g.trans_B ? " (transposed)" : "") << ", C " << describe_region(g.C);
  throw_op_error_value(op, os.str());
}

bool is_gemm_float(DataType t) { return t.is_float(); }
bool is_gemm_int(DataType t) { return t.is_integer(); }

}  // namespace

std::vector<Expr> GemmOperands::a_index(const Expr& m, const Expr& k) const {
  return trans_A ? matrix_index(A, k, m) : matrix_index(A, m, k);
}
std::vector<Expr> GemmOperands::b_index(const Expr& k, const Expr& n) const {
  return trans_B ? matrix_index(B, n, k) : matrix_index(B, k, n);
}
std::vector<Expr> GemmOperands::c_index(const Expr& m, const Expr& n) const { return matrix_index(C, m, n); }

GemmOperands analyze_gemm(const TileOpNode& op) {
  const GemmOp* def = tile_op_as<GemmOp>(op);
  TL_ICHECK(def != nullptr, "analyze_gemm on a tile op that is not a GEMM");
  check_num_args(op, 3, 3, def->form() == GemmForm::kMma ? "T.mma(A, B, C)" : "T.gemm(A, B, C)");
  GemmOperands g;
  g.A = region_arg(op, 0, "A");
  g.B = region_arg(op, 1, "B");
  g.C = region_arg(op, 2, "C");
  check_matrix_region(op, g.A, "A");
  check_matrix_region(op, g.B, "B");
  check_matrix_region(op, g.C, "C");
  g.trans_A = attr_bool(op.attrs, "transpose_A", false);
  g.trans_B = attr_bool(op.attrs, "transpose_B", false);
  if (def->form() == GemmForm::kGemm) {
    checked_str_attr(op, "policy", {"Square", "FullRow", "FullCol"}, "Square");
    if (attr_int(op.attrs, "k_pack", 1) < 1) throw_op_error_value(op, "k_pack must be a positive integer");
  }
  const char* clear_key = def->clear_attr();
  auto it = op.attrs.find(clear_key);
  Expr clear = (it == op.attrs.end() || it->second.is_none()) ? make_bool(false) : it->second.as_expr();
  if (clear.dtype().is_float() || clear.dtype().is_handle())
    throw_op_error_type(op, std::string(clear_key) + " must be a bool, got " + print_expr(clear));
  g.clear_accum = clear.dtype().is_bool() ? clear : ne(clear, make_int(0, clear.dtype()));

  auto dims = [](const BufferRegion& r) {
    size_t n = r.region.size();
    return std::make_pair(r.region[n - 2].extent, r.region[n - 1].extent);
  };
  auto [a0, a1] = dims(g.A);
  auto [b0, b1] = dims(g.B);
  auto [c0, c1] = dims(g.C);
  Expr a_m = g.trans_A ? a1 : a0, a_k = g.trans_A ? a0 : a1;
  Expr b_k = g.trans_B ? b1 : b0, b_n = g.trans_B ? b0 : b1;
  if (!extents_may_equal(a_k, b_k) && extents_may_equal(a_k, b_n) && extents_may_equal(b_k, c1) &&
      extents_may_equal(a_m, c0)) {
    std::ostringstream os;
    os << "the K extent (reduction) of A (" << print_expr(a_k) << ") and B (" << print_expr(b_k) << ") differ; B "
       << describe_region(g.B) << " looks " << (g.trans_B ? "not transposed: drop transpose_B=True"
                                                          : "transposed ([N, K]): pass transpose_B=True");
    throw_op_error_value(op, os.str());
  }
  check_extent_pair(op, "K extent (reduction)", a_k, "A", b_k, "B", g);
  check_extent_pair(op, "M extent (rows)", a_m, "A", c0, "C", g);
  check_extent_pair(op, "N extent (columns)", b_n, "B", c1, "C", g);
  auto pick = [](const Expr& x, const Expr& y) { return is_const_int(x) ? x : y; };
  g.M = pick(c0, a_m);
  g.N = pick(c1, b_n);
  g.K = pick(a_k, b_k);

  DataType ta = g.A.buffer.dtype(), tb = g.B.buffer.dtype(), tc = g.C.buffer.dtype();
  if (ta.is_fp4() || tb.is_fp4() || tc.is_fp4())
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.gemm on float4_e2m1fn operands (block-scaled "
                                "FP4 MMA); dequantize the tiles to float16/bfloat16 first (T.cast in a T.Parallel loop "
                                "into a shared or fragment tile) and multiply those");
  bool floats = is_gemm_float(ta) && is_gemm_float(tb) && is_gemm_float(tc);
  bool ints = is_gemm_int(ta) && is_gemm_int(tb) && is_gemm_int(tc);
  if (!floats && !ints) {
    std::ostringstream os;
    os << "unsupported dtypes A " << ta.str() << ", B " << tb.str() << ", C " << tc.str()
       << "; use floating-point A/B with a float C (float16/bfloat16/float8 accumulate in a float32 C), or integer "
          "A/B with an int32 C";
    throw_op_error_type(op, os.str());
  }
  if (ints && tc.bits < 32)
    throw_op_error_type(op, "integer gemm accumulates in C, which must be int32 or int64, got " + tc.str());
  return g;
}

Stmt lower_gemm_loops(const GemmOperands& g, const Span& span) {
  DataType acc = g.C.buffer.dtype();
  Var i("i", g.M.dtype()), j("j", g.N.dtype()), k("k", g.K.dtype());
  Buffer C = g.C.buffer;
  std::vector<Stmt> out;
  if (!is_const_value(g.clear_accum, 0)) {
    Stmt zero = make_store(C, g.c_index(i, j), make_const(acc, 0), span);
    Stmt loops = make_for(i, make_int(0, i.dtype()), g.M, ForKind::kParallel,
                          make_for(j, make_int(0, j.dtype()), g.N, ForKind::kParallel, zero));
    out.push_back(is_const_value(g.clear_accum, 1) ? loops : make_if(g.clear_accum, loops));
  }
  Var i2("i", g.M.dtype()), j2("j", g.N.dtype());
  Expr a = make_cast(acc, make_load(g.A.buffer, g.a_index(i2, k)));
  Expr b = make_cast(acc, make_load(g.B.buffer, g.b_index(k, j2)));
  Expr c = make_load(C, g.c_index(i2, j2));
  Stmt update = make_store(C, g.c_index(i2, j2), c + a * b, span);
  Stmt j_loop = make_for(j2, make_int(0, j2.dtype()), g.N, ForKind::kParallel, update);
  Stmt k_loop = make_for(k, make_int(0, k.dtype()), g.K, ForKind::kSerial, j_loop);
  out.push_back(make_for(i2, make_int(0, i2.dtype()), g.M, ForKind::kParallel, k_loop));
  return make_seq(std::move(out), span);
}

namespace {

void check_gemm(const TileOpNode& op) { analyze_gemm(op); }

AccessRegions access_gemm(const TileOpNode& op, const char* clear_key) {
  AccessRegions a;
  a.read(op, 0);
  a.read(op, 1);
  // C is read unless it is always overwritten.
  auto it = op.attrs.find(clear_key);
  int64_t v = 0;
  bool always_clear = it != op.attrs.end() && !it->second.is_none() && is_const_int(it->second.as_expr(), &v) && v != 0;
  if (!always_clear) a.read(op, 2);
  a.write(op, 2);
  return a;
}

Stmt lower_gemm(const TileOpNode& op, const LowerContext&) { return lower_gemm_loops(analyze_gemm(op), op.span); }

}  // namespace

void GemmOp::verify(const TileOpNode& op) const { check_gemm(op); }
AccessRegions GemmOp::effects(const TileOpNode& op) const { return access_gemm(op, clear_attr()); }
Stmt GemmOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_gemm(op, ctx); }

namespace {
TileOpRegistration reg_gemm(std::make_unique<GemmOp>("gemm", GemmForm::kGemm));
TileOpRegistration reg_gemm_v0(std::make_unique<GemmOp>("gemm_v0", GemmForm::kGemmV0));
TileOpRegistration reg_mma(std::make_unique<GemmOp>("mma", GemmForm::kMma));
}  // namespace

}  // namespace tl
