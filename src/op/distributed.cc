// Distributed tile operators (T.Scale("device"), docs/DISTRIBUTED.md):
//   dist.copy(src, dst, pe)            T.copy(src, dst, dst=pe) (attr direction="put": dst is on rank
//                                      pe) or T.copy(src, dst, src=pe) (direction="get": src is on pe)
//   dist.barrier(block)                T.barrier(): block `block` of every rank meets
//   dist.signal(flag, value, pe)       T.signal(flag[i], value, dst=pe, op="set"|"add")
//   dist.wait(flag, value)             T.wait(flag[i], value, cmp="eq"|"ne"|"ge"|"gt"|"le"|"lt")
// Remote memory is the symmetric heap (python/tilelang/distributed): both sides of a remote copy are
// global tensors, a flag is one element of a global integer tensor. Each op lowers to one builtin
// (tl.dist.copy / barrier / signal / wait) executed by the whole block; the cpu and cuda targets
// implement them in include/tl/{cpu,cuda}/dist.h. Other targets raise NotImplementedError.
#include <algorithm>

#include "ir/error.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

void require_global(const TileOpNode& op, const BufferRegion& r, const char* role) {
  if (r.buffer.scope() != MemScope::kGlobal)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: ", role, " '", r.buffer.name(), "' is a ",
                                scope_name(r.buffer.scope()),
                                " buffer; remote copies move data between global tensors in symmetric memory "
                                "(tilelang.distributed.empty): stage the tile through a global tensor");
}

void require_target(const TileOpNode& op, const LowerContext& ctx) {
  if (ctx.target.kind != Target::kCPU && ctx.target.kind != Target::kCUDA)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: distributed operators (T.Scale(\"device\"), ",
                                "remote T.copy, T.barrier, T.signal, T.wait) on target ", ctx.target.kind_name(),
                                "; they run on cpu and cuda");
}

Expr i64(const Expr& e) { return make_cast(DataType::Int64(), e); }

// "kernel.py:12:5: T.copy(..., dst=peer)": where a run-time failure of the op points the user.
Expr what_arg(const TileOpNode& op, const std::string& what) {
  std::string loc = op.span.str();
  return make_string((loc.empty() ? "" : loc + ": ") + what);
}

// ---- dist.copy --------------------------------------------------------------------------------

void check_dist_copy(const TileOpNode& op) {
  check_num_args(op, 3, 3, "dist.copy(src, dst, pe)");
  const BufferRegion& src = region_arg(op, 0, "src");
  const BufferRegion& dst = region_arg(op, 1, "dst");
  check_region_well_formed(op, src, "src");
  check_region_well_formed(op, dst, "dst");
  check_same_shape_tiles(op, 0, "src", 1, "dst");
  require_global(op, src, "src");
  require_global(op, dst, "dst");
  if (src.buffer.dtype() != dst.buffer.dtype())
    throw_op_error_type(op, "a remote copy moves bytes: src '" + src.buffer.name() + "' (" + src.buffer.dtype().str() +
                                ") and dst '" + dst.buffer.name() + "' (" + dst.buffer.dtype().str() +
                                ") must have the same dtype; cast on the local side first");
  const Expr& pe = expr_arg(op, 2, "peer");
  if (!pe.dtype().is_integer()) throw_op_error_type(op, "the peer must be an integer, got " + pe.dtype().str());
  checked_str_attr(op, "direction", {"put", "get"}, "put");
}

AccessRegions access_dist_copy(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  a.write(op, 1);
  return a;
}

Stmt lower_dist_copy(const TileOpNode& op, const LowerContext& ctx) {
  require_target(op, ctx);
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  const Expr& pe = op.args[2].expr;
  const bool put = checked_str_attr(op, "direction", {"put", "get"}, "put") == "put";
  std::vector<size_t> sd = squeezed_dims(src), dd = squeezed_dims(dst);
  std::vector<Expr> sstr = src.buffer.effective_strides(), dstr = dst.buffer.effective_strides();
  const size_t n = sd.size();
  TL_ICHECK(dd.size() == n, "dist.copy: squeezed ranks differ after check");
  // Valid extent of each squeezed dimension: inside both tensors (partial tiles at the edges).
  std::vector<Expr> ext(n);
  for (size_t k = 0; k < n; ++k) {
    Expr e = src.region[sd[k]].extent;
    if (ctx.guard_global_bounds) {
      e = min(e, src.buffer.shape()[sd[k]] - src.region[sd[k]].min);
      e = min(e, dst.buffer.shape()[dd[k]] - dst.region[dd[k]].min);
      e = max(e, make_int(0, e.dtype()));
    }
    ext[k] = e;
  }
  // Rows: the innermost squeezed dimension when both sides are contiguous in it; otherwise single
  // elements with the innermost dimension's strides as the row step.
  const int64_t esize = src.buffer.dtype().element_bytes();
  bool contiguous = n > 0 && is_one(sstr[sd[n - 1]]) && is_one(dstr[dd[n - 1]]);
  Expr rows = make_int(1, DataType::Int64()), row_elems = make_int(1, DataType::Int64());
  Expr sld = make_int(0, DataType::Int64()), dld = make_int(0, DataType::Int64());
  size_t loops = 0;  // leading squeezed dimensions walked by serial loops
  if (n > 0 && contiguous) {
    row_elems = i64(ext[n - 1]);
    if (n >= 2) {
      rows = i64(ext[n - 2]);
      sld = i64(sstr[sd[n - 2]]);
      dld = i64(dstr[dd[n - 2]]);
      loops = n - 2;
    }
  } else if (n > 0) {
    rows = i64(ext[n - 1]);
    sld = i64(sstr[sd[n - 1]]);
    dld = i64(dstr[dd[n - 1]]);
    loops = n - 1;
  }
  std::vector<Var> vars;
  for (size_t k = 0; k < loops; ++k) vars.push_back(Var("i" + std::to_string(k), ext[k].dtype()));
  auto start = [&](const BufferRegion& r, const std::vector<size_t>& dims) {
    std::vector<Expr> idx;
    for (const Range& rg : r.region) idx.push_back(rg.min);
    for (size_t k = 0; k < loops; ++k) idx[dims[k]] = idx[dims[k]] + make_cast(idx[dims[k]].dtype(), vars[k]);
    return make_call(DataType::Handle(), "tl.address_of", {make_load(r.buffer, idx)});
  };
  Expr bytes = make_int(esize, DataType::Int64());
  Expr none = make_int(-1, DataType::Int64());
  std::string what = put ? "T.copy(..., dst=peer)" : "T.copy(..., src=peer)";
  Stmt body = make_evaluate(make_call(DataType::Void(), "tl.dist.copy",
                                      {start(dst, dd), start(src, sd), rows, row_elems * bytes, dld * bytes,
                                       sld * bytes, put ? i64(pe) : none, put ? none : i64(pe), what_arg(op, what)}),
                            op.span);
  for (size_t k = loops; k-- > 0;)
    body = make_for(vars[k], make_int(0, ext[k].dtype()), ext[k], ForKind::kSerial, body, {}, op.span);
  return body;
}

// ---- dist.barrier -------------------------------------------------------------------------------

void check_dist_barrier(const TileOpNode& op) {
  check_num_args(op, 1, 1, "dist.barrier(block)");
  const Expr& b = expr_arg(op, 0, "block");
  if (!b.dtype().is_integer()) throw_op_error_type(op, "the block index must be an integer");
}

AccessRegions access_none(const TileOpNode&) { return {}; }

Stmt lower_dist_barrier(const TileOpNode& op, const LowerContext& ctx) {
  require_target(op, ctx);
  return make_evaluate(
      make_call(DataType::Void(), "tl.dist.barrier", {i64(op.args[0].expr), what_arg(op, "T.barrier()")}), op.span);
}

// ---- dist.signal / dist.wait ------------------------------------------------------------------

void check_flag(const TileOpNode& op, const char* usage) {
  const BufferRegion& f = region_arg(op, 0, "flag");
  check_region_well_formed(op, f, "flag");
  if (f.buffer.scope() != MemScope::kGlobal)
    throw_op_error_type(op, "the flag '" + f.buffer.name() + "' must be an element of a global tensor in symmetric "
                            "memory (tilelang.distributed.zeros)");
  for (const Range& r : f.region)
    if (!is_one(r.extent)) throw_op_error_value(op, std::string("the flag must be one element: ") + usage);
  DataType t = f.buffer.dtype();
  if (!t.is_integer() || (t.bits != 32 && t.bits != 64))
    throw_op_error_type(op, "the flag '" + f.buffer.name() + "' has dtype " + t.str() +
                            "; flags are int32, uint32, int64 or uint64");
  const Expr& v = expr_arg(op, 1, "value");
  if (!v.dtype().is_integer()) throw_op_error_type(op, "the value must be an integer, got " + v.dtype().str());
}

void check_dist_signal(const TileOpNode& op) {
  check_num_args(op, 3, 3, "T.signal(flag[i], value, dst=peer, op=\"set\")");
  check_flag(op, "T.signal(flag[i], value, dst=peer)");
  const Expr& pe = expr_arg(op, 2, "peer");
  if (!pe.dtype().is_integer()) throw_op_error_type(op, "the peer must be an integer, got " + pe.dtype().str());
  checked_str_attr(op, "op", {"set", "add"}, "set");
}

void check_dist_wait(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.wait(flag[i], value, cmp=\"ge\")");
  check_flag(op, "T.wait(flag[i], value)");
  checked_str_attr(op, "cmp", {"eq", "ne", "ge", "gt", "le", "lt"}, "ge");
}

AccessRegions access_flag_write(const TileOpNode& op) {
  AccessRegions a;
  a.write(op, 0);
  return a;
}

AccessRegions access_flag_read(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  return a;
}

Expr flag_address(const TileOpNode& op) {
  const BufferRegion& f = op.args[0].region;
  std::vector<Expr> idx;
  for (const Range& r : f.region) idx.push_back(r.min);
  return make_call(DataType::Handle(), "tl.address_of", {make_load(f.buffer, idx)});
}

Stmt lower_dist_signal(const TileOpNode& op, const LowerContext& ctx) {
  require_target(op, ctx);
  int64_t code = checked_str_attr(op, "op", {"set", "add"}, "set") == "set" ? 0 : 1;
  return make_evaluate(make_call(DataType::Void(), "tl.dist.signal",
                                 {flag_address(op), i64(op.args[1].expr), i64(op.args[2].expr),
                                  make_int(code), what_arg(op, "T.signal()")}),
                       op.span);
}

Stmt lower_dist_wait(const TileOpNode& op, const LowerContext& ctx) {
  require_target(op, ctx);
  static const std::vector<std::string> cmps = {"eq", "ne", "ge", "gt", "le", "lt"};
  std::string c = checked_str_attr(op, "cmp", cmps, "ge");
  int64_t code = std::find(cmps.begin(), cmps.end(), c) - cmps.begin();
  return make_evaluate(make_call(DataType::Void(), "tl.dist.wait",
                                 {flag_address(op), i64(op.args[1].expr), make_int(code), what_arg(op, "T.wait()")}),
                       op.span);
}

}  // namespace

void DistributedOp::verify(const TileOpNode& op) const {
  switch (form_) {
    case DistForm::kCopy: return check_dist_copy(op);
    case DistForm::kBarrier: return check_dist_barrier(op);
    case DistForm::kSignal: return check_dist_signal(op);
    case DistForm::kWait: return check_dist_wait(op);
  }
}
AccessRegions DistributedOp::effects(const TileOpNode& op) const {
  switch (form_) {
    case DistForm::kCopy: return access_dist_copy(op);
    case DistForm::kBarrier: return access_none(op);
    case DistForm::kSignal: return access_flag_write(op);
    case DistForm::kWait: return access_flag_read(op);
  }
  return {};
}
Stmt DistributedOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const {
  switch (form_) {
    case DistForm::kCopy: return lower_dist_copy(op, ctx);
    case DistForm::kBarrier: return lower_dist_barrier(op, ctx);
    case DistForm::kSignal: return lower_dist_signal(op, ctx);
    case DistForm::kWait: return lower_dist_wait(op, ctx);
  }
  return Stmt();
}

namespace {
TileOpRegistration reg_copy(std::make_unique<DistributedOp>("dist.copy", DistForm::kCopy));
TileOpRegistration reg_barrier(std::make_unique<DistributedOp>("dist.barrier", DistForm::kBarrier));
TileOpRegistration reg_signal(std::make_unique<DistributedOp>("dist.signal", DistForm::kSignal));
TileOpRegistration reg_wait(std::make_unique<DistributedOp>("dist.wait", DistForm::kWait));
}  // namespace

}  // namespace tl
