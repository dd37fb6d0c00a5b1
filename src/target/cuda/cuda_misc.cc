// T.fill, T.atomic_add, T.cumsum, T.print and the element-wise tile.* ops on target cuda.
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "target/cuda/cuda_ops.h"

namespace tl {

namespace {

bool is_frag(const Buffer& b) { return b.scope() == MemScope::kFragment; }
bool is_local(const Buffer& b) { return b.scope() == MemScope::kLocal || b.scope() == MemScope::kLocalVar; }

bool full_region(const BufferRegion& r) {
  for (size_t d = 0; d < r.region.size(); ++d)
    if (!is_zero(r.region[d].min) || !r.region[d].extent.same_as(r.buffer.shape()[d])) {
      int64_t e = 0, s = 0;
      if (!(is_zero(r.region[d].min) && is_const_int(r.region[d].extent, &e) && is_const_int(r.buffer.shape()[d], &s) &&
            e == s))
        return false;
    }
  return true;
}

// Runs `body_at(pos)` for every squeezed position of a tile of shape `ext`, spread over the threads
// by `layout` (replicas skipped when `once`).
Stmt for_each_position(CudaLowerCtx& ctx, const Fragment& layout, bool once,
                       const std::function<Stmt(const std::vector<Expr>&)>& body_at) {
  std::vector<Stmt> out;
  Expr writer = make_bool(true);
  if (once && layout.replicate() > 1) writer = eq(layout.replica_of(ctx.tid), make_int(0));
  for (int64_t r = 0; r < layout.num_regs(); ++r) {
    std::vector<Expr> pos = layout.index_of(ctx.tid, make_int(r));
    Expr valid = ctx.simplify_cond(layout.is_valid(ctx.tid, make_int(r), ctx.num_threads) && writer);
    out.push_back(guarded(valid, body_at(pos)));
  }
  return make_seq(out);
}

// Serial loops over a tile (per-thread buffers).
Stmt serial_positions(CudaLowerCtx& ctx, const std::vector<int64_t>& ext,
                      const std::function<Stmt(const std::vector<Expr>&)>& body_at) {
  std::vector<Var> vars;
  std::vector<Expr> pos;
  for (size_t k = 0; k < ext.size(); ++k) {
    vars.push_back(Var(ctx.fresh("e")));
    pos.push_back(vars.back());
  }
  Stmt body = body_at(pos);
  for (int k = static_cast<int>(ext.size()) - 1; k >= 0; --k)
    body = make_for(vars[static_cast<size_t>(k)], make_int(0), make_int(ext[static_cast<size_t>(k)]), ForKind::kSerial,
                    body);
  return body;
}

}  // namespace

Stmt lower_cuda_fill(const TileOpNode& op, CudaLowerCtx& ctx) {
  if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_expr())
    throw_error<TypeError>(op_error_prefix(op), "expects T.fill(buffer, value)");
  const BufferRegion& dst = op.args[0].region;
  const Buffer& b = dst.buffer;
  Expr value = make_cast(b.dtype(), lower_uniform_accesses(ctx, op.args[1].expr));
  std::vector<int64_t> ext = const_extents(dst, op_error_prefix(op) + "dst");
  if (is_frag(b)) {
    const Fragment& f = ctx.layout_of(b);
    const Buffer& regs = ctx.regs_of(b);
    std::vector<Stmt> out;
    bool full = full_region(dst);
    for (int64_t r = 0; r < f.num_regs(); ++r) {
      Stmt s = make_store(regs, {make_int(r)}, value);
      if (!full) {
        std::vector<Expr> idx = f.index_of(ctx.tid, make_int(r));
        Expr in = make_bool(true);
        for (size_t d = 0; d < idx.size(); ++d)
          in = in && idx[d] >= dst.region[d].min && idx[d] < dst.region[d].min + dst.region[d].extent;
        s = guarded(ctx.simplify_cond(in), s);
      }
      out.push_back(s);
    }
    return make_seq(out, op.span);
  }
  auto store_at = [&](const std::vector<Expr>& pos) {
    std::vector<Expr> idx = region_point(dst, pos);
    return guarded(all_of(ctx.bounds_guards(b, idx)), ctx.store(b, idx, value));
  };
  if (is_local(b)) return serial_positions(ctx, ext, store_at);
  return for_each_position(ctx, default_fragment(ext, ctx.num_threads, 1), true, store_at);
}

Stmt lower_cuda_atomic(const TileOpNode& op, CudaLowerCtx& ctx) {
  if (op.args.size() < 2 || !op.args[0].is_region())
    throw_error<TypeError>(op_error_prefix(op), "expects T.", op.op, "(dst, value)");
  const std::string fn = "tl::" + op.op;  // tl::atomic_add / atomic_max / atomic_min (include/tl/cuda/atomic.h)
  const BufferRegion& dst = op.args[0].region;
  if (dst.buffer.scope() != MemScope::kGlobal && dst.buffer.scope() != MemScope::kShared)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: atomics on ", scope_name(dst.buffer.scope()),
                                " memory on target cuda");
  DataType t = dst.buffer.dtype();
  std::vector<int64_t> ext = const_extents(dst, op_error_prefix(op) + "dst");
  auto add_at = [&](const std::vector<Expr>& pos, const Expr& v) {
    std::vector<Expr> idx = region_point(dst, pos);
    Stmt s = call_stmt(fn, {ctx.address_of(dst.buffer, idx, 3), make_cast(t, v)});
    return guarded(all_of(ctx.bounds_guards(dst.buffer, idx)), s);
  };
  if (op.args[1].is_region()) {
    const BufferRegion& src = op.args[1].region;
    if (const_extents(src, op_error_prefix(op) + "src") != ext)
      throw_error<ValueError>(op_error_prefix(op), "source and destination tiles differ in shape");
    if (is_frag(src.buffer)) {
      if (!full_region(src))
        throw_error<NotImplemented>(op_error_prefix(op), "not implemented: atomically adding part of a fragment");
      const Fragment& f = ctx.layout_of(src.buffer);
      const Buffer& regs = ctx.regs_of(src.buffer);
      std::vector<Stmt> out;
      Expr writer = f.replicate() > 1 ? eq(f.replica_of(ctx.tid), make_int(0)) : make_bool(true);
      for (int64_t r = 0; r < f.num_regs(); ++r) {
        std::vector<Expr> idx = f.index_of(ctx.tid, make_int(r));
        std::vector<Expr> pos;
        for (size_t d = 0; d < idx.size(); ++d)
          if (!is_one(src.region[d].extent)) pos.push_back(idx[d]);
        if (pos.empty()) pos.push_back(make_int(0));
        Expr valid = ctx.simplify_cond(f.is_valid(ctx.tid, make_int(r), ctx.num_threads) && writer);
        out.push_back(guarded(valid, add_at(pos, make_load(regs, {make_int(r)}))));
      }
      return make_seq(out, op.span);
    }
    return for_each_position(ctx, default_fragment(ext, ctx.num_threads, 1), true, [&](const std::vector<Expr>& pos) {
      std::vector<Expr> sidx = region_point(src, pos);
      Expr v = ctx.load(src.buffer, sidx);
      Stmt s = add_at(pos, v);
      return guarded(all_of(ctx.bounds_guards(src.buffer, sidx)), s);
    });
  }
  Expr value = lower_uniform_accesses(ctx, op.args[1].expr);
  return for_each_position(ctx, default_fragment(ext, ctx.num_threads, 1), true,
                           [&](const std::vector<Expr>& pos) { return add_at(pos, value); });
}

Stmt lower_cuda_cumsum(const TileOpNode& op, CudaLowerCtx& ctx) {
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args.size() > 1 && op.args[1].is_region() ? op.args[1].region : src;
  if (is_frag(src.buffer) || is_frag(dst.buffer))
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.cumsum of a fragment on target cuda; copy it "
                                "to a shared-memory buffer (T.alloc_shared) and scan that");
  std::vector<int64_t> ext = const_extents(src, op_error_prefix(op) + "src");
  if (const_extents(dst, op_error_prefix(op) + "dst") != ext)
    throw_error<ValueError>(op_error_prefix(op), "source and destination tiles differ in shape");
  int dim = static_cast<int>(attr_int(op.attrs, "dim", 0));
  bool reverse = attr_bool(op.attrs, "reverse", false);
  if (dim < 0 || dim >= static_cast<int>(ext.size()))
    throw_error<ValueError>(op_error_prefix(op), "scan dimension ", dim, " out of range");
  std::vector<int64_t> lines = ext;
  lines.erase(lines.begin() + dim);
  if (lines.empty()) lines.push_back(1);
  DataType t = dst.buffer.dtype();
  auto scan_line = [&](const std::vector<Expr>& lpos) {
    Var kv(ctx.fresh("k"));
    Expr k = reverse ? make_int(ext[static_cast<size_t>(dim)] - 1) - kv : Expr(kv);
    std::vector<Expr> pos = lpos;
    if (ext.size() == 1) pos = {k};
    else pos.insert(pos.begin() + dim, k);
    Buffer acc(ctx.fresh("scan"), t, {make_int(1)}, MemScope::kLocal);
    std::vector<Expr> sidx = region_point(src, pos), didx = region_point(dst, pos);
    Expr v = make_cast(t, ctx.load(src.buffer, sidx));
    std::vector<Expr> sg = ctx.bounds_guards(src.buffer, sidx);
    if (!sg.empty()) v = make_select(all_of(sg), v, make_const(t, 0));
    Stmt step = make_seq({make_store(acc, {make_int(0)}, make_load(acc, {make_int(0)}) + v),
                          guarded(all_of(ctx.bounds_guards(dst.buffer, didx)),
                                  ctx.store(dst.buffer, didx, make_load(acc, {make_int(0)})))});
    Stmt body = make_seq({make_store(acc, {make_int(0)}, make_const(t, 0)),
                          make_for(kv, make_int(0), make_int(ext[static_cast<size_t>(dim)]), ForKind::kSerial, step)});
    return make_allocate(acc, body);
  };
  if (is_local(dst.buffer)) return serial_positions(ctx, lines, scan_line);
  return for_each_position(ctx, default_fragment(lines, ctx.num_threads, 1), true, scan_line);
}

Stmt lower_cuda_print(const TileOpNode& op, CudaLowerCtx& ctx) {
  if (op.args.empty() || !op.args[0].is_region())
    throw_error<TypeError>(op_error_prefix(op), "expects T.print(buffer, msg)");
  const BufferRegion& r = op.args[0].region;
  std::string msg = attr_str(op.attrs, "msg", "");
  if (msg.empty()) msg = r.buffer.name();
  std::vector<int64_t> ext = const_extents(r, op_error_prefix(op));
  auto flat = [&](const std::vector<Expr>& pos) {
    Expr f = make_int(0);
    for (size_t k = 0; k < pos.size() && k < ext.size(); ++k) f = f * make_int(ext[k]) + pos[k];
    return f;
  };
  if (is_frag(r.buffer)) {
    // Every thread prints the elements it holds (replica 0 only), with their logical index.
    const Fragment& f = ctx.layout_of(r.buffer);
    const Buffer& regs = ctx.regs_of(r.buffer);
    std::vector<Stmt> out;
    Expr writer = f.replicate() > 1 ? eq(f.replica_of(ctx.tid), make_int(0)) : make_bool(true);
    for (int64_t k = 0; k < f.num_regs(); ++k) {
      std::vector<Expr> idx = f.index_of(ctx.tid, make_int(k));
      Expr valid = ctx.simplify_cond(f.is_valid(ctx.tid, make_int(k), ctx.num_threads) && writer);
      Expr fl = flatten_index(idx, f.shape());
      out.push_back(guarded(valid, call_stmt("tl::print_element", {make_string(msg), make_cast(DataType::Int32(), fl),
                                                                    make_load(regs, {make_int(k)})})));
    }
    return make_seq(out, op.span);
  }
  Stmt all = serial_positions(ctx, ext, [&](const std::vector<Expr>& pos) {
    std::vector<Expr> idx = region_point(r, pos);
    return call_stmt("tl::print_element", {make_string(msg), make_cast(DataType::Int32(), flat(pos)),
                                           ctx.load(r.buffer, idx)});
  });
  if (is_local(r.buffer)) return all;
  return guarded(eq(ctx.tid, make_int(0, ctx.tid.dtype())), all);
}

bool cuda_lowers_elementwise(const std::string& fn) {
  static const std::set<std::string> own = {"exp",  "ln",   "log", "abs", "reciprocal", "sqrt", "rsqrt", "relu",
                                            "sigmoid", "silu", "sin", "cos", "neg",     "exp2", "tanh",  "add",
                                            "sub",  "mul",  "div", "max", "min",        "pow",  "axpy",  "cast",
                                            "compare", "select"};
  return own.count(fn) != 0;
}

Stmt lower_cuda_elementwise(const TileOpNode& op, CudaLowerCtx& ctx) {
  const ElementwiseOp* def = tile_op_as<ElementwiseOp>(op);
  TL_ICHECK(def != nullptr, "lower_cuda_elementwise on a tile op that is not element-wise");
  const std::string& name = def->fn();
  if (op.args.empty() || !op.args[0].is_region())
    throw_error<TypeError>(op_error_prefix(op), "expects a destination buffer first");
  const BufferRegion& dst = op.args[0].region;
  std::vector<int64_t> ext = const_extents(dst, op_error_prefix(op) + "dst");
  DataType t = dst.buffer.dtype();
  std::vector<Var> vars;
  std::vector<Expr> pos;
  for (size_t k = 0; k < ext.size(); ++k) {
    vars.push_back(Var(ctx.fresh("i")));
    pos.push_back(vars.back());
  }
  auto arg = [&](size_t i) -> Expr {
    if (i >= op.args.size()) throw_error<TypeError>(op_error_prefix(op), "missing argument ", i);
    if (op.args[i].is_expr()) return op.args[i].expr;
    const BufferRegion& r = op.args[i].region;
    if (const_extents(r, op_error_prefix(op)) != ext)
      throw_error<ValueError>(op_error_prefix(op), "operand '", r.buffer.name(), "' differs in shape from the destination");
    return make_load(r.buffer, region_point(r, pos));
  };
  static const std::map<std::string, std::string> unary = {
      {"exp", "exp"}, {"ln", "log"}, {"log", "log"}, {"sqrt", "sqrt"}, {"rsqrt", "rsqrt"}, {"sigmoid", "sigmoid"},
      {"sin", "sin"}, {"cos", "cos"}, {"exp2", "exp2"}, {"tanh", "tanh"}, {"abs", "abs"}};
  Expr value;
  if (auto it = unary.find(name); it != unary.end()) {
    Expr x = make_cast(t, arg(1));
    value = make_call(t, it->second, {x});
  } else if (name == "relu") {
    Expr x = make_cast(t, arg(1));
    value = max(x, make_const(t, 0));
  } else if (name == "reciprocal") {
    value = make_binary(BinOp::kDiv, make_const(t, 1), make_cast(t, arg(1)));
  } else if (name == "neg") {
    value = -make_cast(t, arg(1));
  } else if (name == "silu") {
    Expr x = make_cast(t, arg(1));
    value = x * make_call(t, "sigmoid", {x});
  } else if (name == "add" || name == "sub" || name == "mul" || name == "div" || name == "max" || name == "min" ||
             name == "pow") {
    Expr a = make_cast(t, arg(1)), b = make_cast(t, arg(2));
    if (name == "add") value = a + b;
    else if (name == "sub") value = a - b;
    else if (name == "mul") value = a * b;
    else if (name == "div") value = make_binary(BinOp::kDiv, a, b);
    else if (name == "max") value = max(a, b);
    else if (name == "min") value = min(a, b);
    else value = make_call(t, "pow", {a, b});
  } else if (name == "axpy") {
    value = make_load(dst.buffer, region_point(dst, pos)) + make_cast(t, arg(2)) * make_cast(t, arg(1));
  } else if (name == "cast") {
    std::string mode = attr_str(op.attrs, "mode", "CAST_NONE");
    Expr x = arg(1);
    if (t.is_integer() && x.dtype().is_float()) {
      if (mode == "CAST_FLOOR") x = make_call(x.dtype(), "floor", {x});
      else if (mode == "CAST_CEIL") x = make_call(x.dtype(), "ceil", {x});
      else if (mode == "CAST_RINT" || mode == "CAST_ROUND") x = make_call(x.dtype(), "round", {x});
    }
    value = make_cast(t, x);
  } else if (name == "compare") {
    std::string mode = attr_str(op.attrs, "mode", "EQ");
    Expr a = arg(1), b = arg(2);
    static const std::map<std::string, BinOp> cmp = {{"EQ", BinOp::kEQ}, {"NE", BinOp::kNE}, {"GT", BinOp::kGT},
                                                     {"GE", BinOp::kGE}, {"LT", BinOp::kLT}, {"LE", BinOp::kLE}};
    auto it = cmp.find(mode);
    if (it == cmp.end()) throw_error<ValueError>(op_error_prefix(op), "unknown compare mode '", mode, "'");
    value = make_cast(t, make_binary(it->second, a, make_cast(a.dtype(), b)));
  } else if (name == "select") {
    Expr m = arg(1), a = make_cast(t, arg(2)), b = make_cast(t, arg(3));
    value = make_select(make_cast(DataType::Bool(), m), a, b);
  } else {
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.tile.", name, " on target cuda");
  }
  Stmt body = make_store(dst.buffer, region_point(dst, pos), value);
  if (is_local(dst.buffer)) {
    std::map<Var, Expr, VarLess> sub;
    return serial_positions(ctx, ext, [&](const std::vector<Expr>& p) {
      for (size_t k = 0; k < vars.size(); ++k) sub[vars[k]] = p[k];
      return lower_uniform_accesses(ctx, substitute(body, sub));
    });
  }
  Fragment layout = is_frag(dst.buffer) && full_region(dst) && ext == ctx.layout_of(dst.buffer).shape()
                        ? ctx.layout_of(dst.buffer)
                        : default_fragment(ext, ctx.num_threads, 1);
  return lower_parallel_nest(ctx, vars, ext, body, layout, op.span);
}

}  // namespace tl
