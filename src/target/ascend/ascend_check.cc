#include "target/ascend/ascend_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "sim/isa.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

using sim::CoreKind;
using sim::Mem;
using sim::Pipe;

std::string loc(const Span& s) { return s.prefix(); }

class Checker : public IRVisitor {
 public:
  explicit Checker(const sim::MachineModel& m, bool inferred) : model_(m), inferred_(inferred) {}
  int scope = -1;  // -1 none, 0 cube, 1 vector
  bool developer_two_vector = false;
  bool has_vector_work = false;
  bool has_kernel = false;

 protected:
  void visit_kernel(const KernelLaunchNode* k) override {
    has_kernel = true;
    if (!attr_bool(k->attrs, "is_npu", false))
      throw_error<NotImplemented>(loc(k->span), "not implemented: a T.Kernel without is_npu=True on target ascend; "
                                  "write `with T.Kernel(n, is_npu=True) as (cid, vid):`");
    developer_two_vector = !attr_bool(k->attrs, "npu_vid", false) && attr_int(k->attrs, "npu_threads", 2) == 2;
    IRVisitor::visit_kernel(k);
  }
  void visit_attr(const AttrStmtNode* a) override {
    if (a->key != "scope") return IRVisitor::visit_attr(a);
    std::string v = a->value.kind() == Attr::kStr ? a->value.as_str() : "";
    if (v != "C" && v != "V")
      throw_error<SyntaxError>(loc(a->span), "T.Scope expects \"C\" (cube core) or \"V\" (vector core), got \"", v,
                               "\"");
    if (scope >= 0)
      throw_error<SyntaxError>(loc(a->span), "T.Scope(\"", v, "\") is nested inside another T.Scope");
    scope = v == "C" ? 0 : 1;
    IRVisitor::visit_attr(a);
    scope = -1;
  }
  void visit_store(const BufferStoreNode* s) override {
    Mem m;
    if (sim::mem_of_scope(s->buffer.scope(), &m) && m != Mem::kGM) {
      int owner = static_cast<int>(sim::mem_owner(m));
      if (scope >= 0 && owner != scope) wrong_core(s->span, "a store to '" + s->buffer.name() + "'", m);
      if (owner == 1) has_vector_work = true;
    }
    IRVisitor::visit_store(s);
  }
  void visit_tile_op(const TileOpNode* op) override {
    check_op(*op);
    IRVisitor::visit_tile_op(op);
  }
  void visit_evaluate(const EvaluateNode* e) override {
    if (auto* c = e->value.as<CallNode>(); c && c->op.rfind("ascend.", 0) == 0) check_sync(*c, e->span);
    IRVisitor::visit_evaluate(e);
  }

 private:
  void wrong_core(const Span& sp, const std::string& what, Mem m) {
    throw_error<SyntaxError>(loc(sp), what, " uses ", sim::mem_name(m), ", which belongs to the ",
                             sim::mem_owner(m) == CoreKind::kAIC ? "cube core (T.Scope(\"C\"))"
                                                                 : "vector core (T.Scope(\"V\"))",
                             ", but it is inside T.Scope(\"", scope == 0 ? "C" : "V", "\")");
  }

  Mem mem(const TileOpNode& op, size_t i) {
    if (i >= op.args.size() || !op.args[i].is_region())
      throw_error<SyntaxError>(op_error_prefix(op), "argument ", i, " must be a buffer");
    return sim::region_mem(op, op.args[i].region);
  }

  // An Ascend vector instruction (vadd, vexp, ...) reads and writes one element type: the tile
  // operands of an element-wise T.tile op must all have dst's dtype (T.tile.cast converts).
  void check_same_dtype(const TileOpNode& op) {
    const ElementwiseOp* e = tile_op_as<ElementwiseOp>(op);
    if (!e || e->arity() == ElementwiseArity::kOther || op.args.empty() || !op.args[0].is_region()) return;
    const BufferRegion& dst = op.args[0].region;
    static const char* roles[] = {"dst", "a", "b"};
    bool unary = op.args.size() == 2;
    for (size_t i = 1; i < op.args.size(); ++i) {
      if (!op.args[i].is_region() || op.args[i].region.buffer.dtype() == dst.buffer.dtype()) continue;
      const Buffer& b = op.args[i].region.buffer;
      throw_error<TypeError>(op_error_prefix(op), "operand ", unary ? "src" : roles[std::min<size_t>(i, 2)], " '",
                             b.name(), "' is ", b.dtype().str(), " but dst '", dst.buffer.name(), "' is ",
                             dst.buffer.dtype().str(), ": an Ascend vector instruction takes one element type, so the "
                             "tile operands must share one dtype; convert with T.tile.cast(dst, src, mode) first");
    }
    check_scalar_operand(op);
  }

  // The vector-scalar forms (vadds, vmuls, vmaxs, ...) take the scalar as the tile's element type.
  // A float scalar that is not a whole number would be rounded to an integer tile's type: silently
  // another computation than the program says (x + 2.5 on int8). Refused; whole floats (2.0) are exact.
  void check_scalar_operand(const TileOpNode& op) {
    const ElementwiseOp* e = tile_op_as<ElementwiseOp>(op);  // the binary ones: add, sub, mul, div, max, min, pow
    if (!e || e->arity() != ElementwiseArity::kBinary) return;
    const DataType t = op.args[0].region.buffer.dtype();
    if (!t.is_int() && !t.is_uint()) return;
    for (size_t i = 1; i < op.args.size(); ++i) {
      const TileArg& a = op.args[i];
      if (!a.is_expr() || !a.expr.dtype().is_float()) continue;
      double v = 0;
      if (is_const_float(a.expr, &v) && std::isfinite(v) && v == std::trunc(v)) continue;
      std::ostringstream value;
      if (is_const_float(a.expr, &v)) value << v;
      else value << "a " << a.expr.dtype().str() << " expression";
      throw_error<TypeError>(op_error_prefix(op), "the scalar operand ", value.str(), " is not a whole number but dst '",
                             op.args[0].region.buffer.name(), "' is ", t.str(), ": an Ascend vector-scalar "
                             "instruction takes the scalar as the tile's element type, so it would be rounded; "
                             "pass an integer scalar, or T.tile.cast the tiles to a float dtype first");
    }
  }

  void check_op(const TileOpNode& op) {
    check_same_dtype(op);
    if (!inferred_)
      for (auto& a : op.args)
        if (a.is_region()) {
          MemScope sc = a.region.buffer.scope();
          // T.alloc_shared / T.alloc_fragment / T.alloc_L0 get their memory from scope inference.
          if (sc == MemScope::kShared || sc == MemScope::kFragment || sc == MemScope::kL0) return;
        }
    const GemmOp* gemm = tile_op_as<GemmOp>(op);
    if (gemm && gemm->form() != GemmForm::kMma) {  // gemm / gemm_v0; mma is classified below
      const bool tl_gemm = gemm->form() == GemmForm::kGemm;
      Mem a = mem(op, 0), b = mem(op, 1), c = mem(op, 2);
      bool l1 = a == Mem::kL1 && b == Mem::kL1 && c == Mem::kL0C;
      bool l0 = tl_gemm && a == Mem::kL0A && b == Mem::kL0B && c == Mem::kL0C;
      if (!l1 && !l0)
        throw_error<SyntaxError>(op_error_prefix(op), "operands must be A and B in L1 and C in L0C",
                                 tl_gemm ? " (or A in L0A, B in L0B, C in L0C)" : "", "; got A '",
                                 op.args[0].region.buffer.name(), "' in ", sim::mem_name(a), ", B '",
                                 op.args[1].region.buffer.name(), "' in ", sim::mem_name(b), ", C '",
                                 op.args[2].region.buffer.name(), "' in ", sim::mem_name(c));
      if (scope == 1) wrong_core(op.span, "T." + op.op, Mem::kL0C);
      return;
    }
    sim::OpClass cls = sim::classify_tile_op(op);  // throws on illegal pairs / memories
    if (cls.core_neutral) return;
    if (cls.core == CoreKind::kAIV) has_vector_work = true;
    if (scope >= 0 && static_cast<int>(cls.core) != scope)
      throw_error<SyntaxError>(op_error_prefix(op), "runs on the ",
                               cls.core == CoreKind::kAIC ? "cube core (it uses L1/L0A/L0B/L0C)"
                                                          : "vector core (it uses UB)",
                               " but is inside T.Scope(\"", scope == 0 ? "C" : "V", "\")");
    if (is_tile_op(op, TileOpKind::kCopy) && !attr_bool(op.attrs, "transpose", false)) {
      auto s = op.args[0].region.squeezed_extents(), d = op.args[1].region.squeezed_extents();
      bool ok = s.size() == d.size();
      for (size_t i = 0; ok && i < s.size(); ++i) {
        int64_t x, y;
        if (is_const_int(s[i], &x) && is_const_int(d[i], &y) && x != y) ok = false;
      }
      if (!ok)
        throw_error<SyntaxError>(op_error_prefix(op), "source '", op.args[0].region.buffer.name(), "' and destination '",
                                 op.args[1].region.buffer.name(), "' regions have different shapes");
    }
  }

  void check_sync(const CallNode& c, const Span& sp) {
    auto pipe = [&](size_t i) {
      auto* s = i < c.args.size() ? c.args[i].as<StringImmNode>() : nullptr;
      Pipe p;
      if (!s || !sim::parse_pipe(s->value, &p))
        throw_error<SyntaxError>(loc(sp), "T.", c.op.substr(7), ": unknown pipe ", s ? "\"" + s->value + "\"" : "argument",
                                 "; pipes are \"mte1\", \"mte2\", \"mte3\", \"m\", \"v\", \"fix\", \"s\"");
      return p;
    };
    auto core_of = [](Pipe p) {
      return p == Pipe::kMTE1 || p == Pipe::kM || p == Pipe::kFIX ? 0 : p == Pipe::kV || p == Pipe::kMTE3 ? 1 : -1;
    };
    auto check_pipes = [&](std::initializer_list<Pipe> ps) {
      int owner = -1;
      for (Pipe p : ps) {
        int k = core_of(p);
        if (k < 0) continue;
        if (owner >= 0 && owner != k)
          throw_error<SyntaxError>(loc(sp), "T.", c.op.substr(7), " pairs a cube-core pipe with a vector-core pipe; "
                                   "intra-core flags order pipes of one core, use T.set_cross_flag / "
                                   "T.wait_cross_flag between cores");
        owner = k;
        if (scope >= 0 && k != scope)
          throw_error<SyntaxError>(loc(sp), "T.", c.op.substr(7), ": pipe \"", sim::pipe_user_name(p),
                                   "\" does not exist on the ", scope == 0 ? "cube" : "vector",
                                   " core of this T.Scope");
      }
    };
    auto id_in_range = [&](size_t i, int64_t n, const char* what) {
      int64_t v;
      if (i < c.args.size() && is_const_int(c.args[i], &v) && (v < 0 || v >= n))
        throw_error<SyntaxError>(loc(sp), "T.", c.op.substr(7), ": ", what, " ", v, " is out of range [0, ", n, ")");
    };
    const sim::MachineModel& m = model_;
    if (c.op == "ascend.set_flag" || c.op == "ascend.wait_flag") {
      check_pipes({pipe(0), pipe(1)});
      id_in_range(2, m.flag_ids, "event id");
    } else if (c.op == "ascend.pipe_barrier") {
      check_pipes({pipe(0)});
    } else if (c.op == "ascend.set_cross_flag") {
      check_pipes({pipe(0)});
      id_in_range(1, m.cross_flag_ids, "cross-core flag id");
      int64_t mode;
      if (c.args.size() > 2 && is_const_int(c.args[2], &mode) && (mode < 0 || mode > 2))
        throw_error<SyntaxError>(loc(sp), "T.set_cross_flag: mode must be 0, 1 or 2, got ", mode);
    } else if (c.op == "ascend.wait_cross_flag") {
      id_in_range(c.args.size() > 1 && c.args[0].as<StringImmNode>() ? 1 : 0, m.cross_flag_ids, "cross-core flag id");
    }
  }

  const sim::MachineModel& model_;
  bool inferred_;
};

}  // namespace

PrimFunc ascend_check(const PrimFunc& f, const PassContext& ctx) {
  const sim::MachineModel& model = sim::machine_model(ctx.target.model);
  for (const Param& p : f.params())
    if ((p.is_buffer() ? p.buffer.dtype() : p.var.dtype()).is_fp4())
      throw_error<NotImplemented>(loc(f->span), "not implemented: float4_e2m1fn parameter '", p.name,
                                  "' on target ascend (docs/FLOAT4.md); pass the packed bytes as uint8 and unpack them "
                                  "with integer operations, or run the kernel on cpu or cuda");
  Checker c(model, attr_bool(f.attrs(), "ascend.scopes_inferred", false));
  c.visit(f.body());
  if (!c.has_kernel)
    throw_error<SyntaxError>(loc(f->span), "kernel '", f.name(), "' has no `with T.Kernel(n, is_npu=True)` launch");
  if (c.developer_two_vector && c.has_vector_work)
    throw_error<NotImplemented>(loc(f->span), "not implemented: vector work in a Developer-form kernel with threads=2 "
                                "(splitting full-tile UB buffers across the two vector cores) on target ascend; use "
                                "threads=1, or the Expert form `T.Kernel(n, is_npu=True) as (cid, vid)` and split by vid");
  return f;
}

TL_REGISTER_PASS("ascend_check", ascend_check);

}  // namespace tl
