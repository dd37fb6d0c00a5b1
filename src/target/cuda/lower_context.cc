#include "target/cuda/lower_context.h"

#include <algorithm>
#include <numeric>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/int_arith.h"
#include "op/op_util.h"

namespace tl {

bool cuda_const_bounds(const Expr& e, const std::map<Var, Range, VarLess>& ranges, int64_t* lo, int64_t* hi) {
  // The one bounds analysis (arith/analyzer.h) through op_util's view of it.
  return const_bounds(e, ranges, lo, hi);
}

// ---------------------------------------------------------------------------------------------

const Buffer& CudaLowerCtx::regs_of(const Buffer& fragment) const {
  auto it = regs.find(fragment);
  if (it == regs.end())
    throw_error<LayoutError>("fragment '", fragment.name(), "' is used outside the scope of its allocation");
  return it->second;
}

const Fragment& CudaLowerCtx::layout_of(const Buffer& fragment) const {
  auto it = layouts.fragments.find(fragment);
  TL_ICHECK(it != layouts.fragments.end(), "no layout for fragment ", fragment.name());
  return it->second;
}

Expr CudaLowerCtx::shared_offset(const Buffer& shared, const std::vector<Expr>& indices) const {
  auto it = layouts.shared.find(shared);
  if (it != layouts.shared.end()) return it->second.map(indices)[0];
  std::vector<int64_t> shape = const_shape(shared, "shared buffer");
  if (indices.size() == 1 && shape.size() > 1) return indices[0];  // already flat
  return flatten_index(indices, shape);
}

std::pair<Buffer, std::vector<Expr>> CudaLowerCtx::remap(const Buffer& b, const std::vector<Expr>& indices) const {
  if (b.scope() == MemScope::kShared) {
    auto it = flat_shared.find(b);
    if (it != flat_shared.end()) return {it->second, {shared_offset(b, indices)}};
  }
  if (b.scope() == MemScope::kFragment)
    throw_error<Error>("internal error: fragment '", b.name(), "' accessed without its register mapping");
  return {b, indices};
}

Expr CudaLowerCtx::load(const Buffer& b, const std::vector<Expr>& indices) const {
  auto [nb, idx] = remap(b, indices);
  return make_load(nb, idx);
}

Stmt CudaLowerCtx::store(const Buffer& b, const std::vector<Expr>& indices, const Expr& value) const {
  auto [nb, idx] = remap(b, indices);
  return make_store(nb, idx, make_cast(nb.dtype(), value));
}

Expr CudaLowerCtx::lowered_load(const Buffer& b, const std::vector<Expr>& indices, Expr reg) const {
  if (b.scope() != MemScope::kFragment) return load(b, indices);
  if (!reg.defined()) reg = layout_of(b).reg_of(indices);
  return make_load(regs_of(b), {reg});
}

Stmt CudaLowerCtx::lowered_store(const Buffer& b, const std::vector<Expr>& indices, const Expr& value,
                                 const Span& span, Expr reg) const {
  if (b.scope() == MemScope::kFragment) {
    if (!reg.defined()) reg = layout_of(b).reg_of(indices);
    const Buffer& regs = regs_of(b);
    return make_store(regs, {reg}, make_cast(regs.dtype(), value), span);
  }
  auto [nb, idx] = remap(b, indices);
  return make_store(nb, idx, make_cast(nb.dtype(), value), span);
}

Expr CudaLowerCtx::address_of(const Buffer& b, const std::vector<Expr>& indices, int mode) const {
  auto [nb, idx] = remap(b, indices);
  return make_call(DataType::Handle(), "cuda.address_of", {make_load(nb, idx), make_int(mode)});
}

Expr CudaLowerCtx::reg_address(const Buffer& fragment, const Expr& reg, int mode) const {
  return make_call(DataType::Handle(), "cuda.address_of", {make_load(regs_of(fragment), {reg}), make_int(mode)});
}

std::vector<Expr> CudaLowerCtx::bounds_guards(const Buffer& b, const std::vector<Expr>& indices) const {
  std::vector<Expr> out;
  if (!guard_global || b.scope() != MemScope::kGlobal) return out;
  for (size_t d = 0; d < indices.size() && d < b.shape().size(); ++d) {
    Expr c = simplify_cond(indices[d] < b.shape()[d]);
    if (!is_one(c)) out.push_back(c);
  }
  return out;
}

Expr CudaLowerCtx::simplify_cond(const Expr& c) const {
  if (is_const_int(c)) return c;
  const auto* b = c.as<BinaryNode>();
  if (!b) return c;
  if (b->op == BinOp::kAnd) {
    Expr x = simplify_cond(b->a), y = simplify_cond(b->b);
    return x && y;
  }
  int64_t lo, hi;
  if (b->a.dtype().is_integer() && b->b.dtype().is_integer() &&
      cuda_const_bounds(make_binary(BinOp::kSub, b->a, b->b), ranges, &lo, &hi)) {
    switch (b->op) {
      case BinOp::kLT: return hi < 0 ? make_bool(true) : lo >= 0 ? make_bool(false) : c;
      case BinOp::kLE: return hi <= 0 ? make_bool(true) : lo > 0 ? make_bool(false) : c;
      case BinOp::kGT: return lo > 0 ? make_bool(true) : hi <= 0 ? make_bool(false) : c;
      case BinOp::kGE: return lo >= 0 ? make_bool(true) : hi < 0 ? make_bool(false) : c;
      default: break;
    }
  }
  return c;
}

// ---------------------------------------------------------------------------------------------

Expr all_of(const std::vector<Expr>& conds) {
  Expr out = make_bool(true);
  for (const Expr& c : conds) out = is_one(out) ? c : (out && c);
  return out;
}

Stmt guarded(const Expr& cond, const Stmt& body, const Stmt& else_body) {
  int64_t v = 0;
  if (is_const_int(cond, &v)) return v ? body : (else_body.defined() ? else_body : make_nop());
  return make_if(cond, body, else_body);
}

Stmt call_stmt(const std::string& callee, std::vector<Expr> args, bool syncs) {
  args.insert(args.begin(), make_string(callee));
  return make_evaluate(make_call(DataType::Void(), syncs ? "cuda.call_sync" : "cuda.call", std::move(args)));
}

Expr call_expr(DataType t, const std::string& callee, std::vector<Expr> args) {
  args.insert(args.begin(), make_string(callee));
  return make_call(t, "cuda.call", std::move(args));
}

Stmt builtin_stmt(const std::string& op, std::vector<Expr> args) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
}

std::string cuda_type_name(DataType t) {
  if (t.lanes != 1) throw_error<NotImplemented>("not implemented: vector type ", t.str(), " in generated cuda code");
  switch (t.code) {
    case DataType::kBool: return "bool";
    case DataType::kInt:
      switch (t.bits) {
        case 8: return "tl::int8_t";
        case 16: return "short";
        case 32: return "int";
        case 64: return "long long";
      }
      break;
    case DataType::kUInt:
      switch (t.bits) {
        case 8: return "tl::uint8_t";
        case 16: return "unsigned short";
        case 32: return "unsigned int";
        case 64: return "unsigned long long";
      }
      break;
    case DataType::kFloat:
      switch (t.bits) {
        case 16: return "tl::half_t";
        case 32: return "float";
        case 64: return "double";
      }
      break;
    case DataType::kBFloat: return "tl::bfloat16_t";
    case DataType::kFloat8E4M3: return "tl::fp8_e4m3_t";
    case DataType::kFloat8E5M2: return "tl::fp8_e5m2_t";
    case DataType::kFloat8E8M0: return "tl::fp8_e8_t";
    case DataType::kFloat4E2M1: return "tl::fp4_e2_t";
    case DataType::kHandle: return "void*";
    case DataType::kVoid: return "void";
  }
  throw_error<NotImplemented>("not implemented: type ", t.str(), " on target cuda");
}

std::vector<Expr> region_point(const BufferRegion& r, const std::vector<Expr>& pos) {
  std::vector<Expr> idx;
  size_t k = 0;
  for (const Range& rg : r.region) {
    if (is_one(rg.extent)) {
      idx.push_back(rg.min);
    } else {
      TL_ICHECK(k < pos.size(), "region position has too few entries");
      idx.push_back(is_zero(rg.min) ? pos[k] : rg.min + pos[k]);
      ++k;
    }
  }
  return idx;
}

std::vector<int64_t> const_extents(const BufferRegion& r, const std::string& what) {
  std::vector<int64_t> out;
  for (const Expr& e : r.squeezed_extents()) {
    int64_t v = 0;
    if (!is_const_int(e, &v) || v <= 0)
      throw_error<LayoutError>(what, ": the tile of '", r.buffer.name(), "' needs constant extents on target cuda, "
                               "found ", to_string(e));
    out.push_back(v);
  }
  if (out.empty()) out.push_back(1);
  return out;
}

}  // namespace tl
