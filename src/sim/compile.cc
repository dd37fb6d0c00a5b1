// Lowered ascend IR -> simulator Program (program.h).
#include <algorithm>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printf_format.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "sim/program.h"

namespace tl::sim {

int64_t buffer_footprint(const Buffer& b, Mem mem, const MachineModel& model) {
  int64_t eb = b.dtype().element_bytes();
  std::vector<int64_t> dims;
  for (auto& e : b.shape()) {
    int64_t v;
    if (!is_const_int(e, &v))
      throw_error<SyntaxError>(b->span.str(), b->span.defined() ? ": " : "", "on-chip buffer '", b.name(),
                               "' must have a constant shape on the ascend target, got ", to_string(e));
    dims.push_back(v);
  }
  if (dims.empty()) dims.push_back(1);
  auto round_up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  int64_t bytes;
  if (mem == Mem::kL1 || mem == Mem::kL0A || mem == Mem::kL0B || mem == Mem::kL0C) {
    // Cube memories hold 16 x C0 fractals (C0 = 32 B of elements; 16 elements for the fp32 L0C).
    int64_t c0 = mem == Mem::kL0C ? 16 : std::max<int64_t>(1, 32 / eb);
    int64_t cols = dims.back();
    int64_t rows = dims.size() >= 2 ? dims[dims.size() - 2] : 1;
    int64_t outer = 1;
    for (size_t i = 0; i + 2 < dims.size(); ++i) outer *= dims[i];
    if (dims.size() == 1) rows = 1;
    bytes = outer * round_up(rows, 16) * round_up(cols, c0) * eb;
  } else {
    bytes = eb;
    for (int64_t d : dims) bytes *= d;
  }
  return round_up(std::max<int64_t>(bytes, 1), model.alignment);
}

namespace {

struct LoopLabels {
  std::vector<int32_t> break_jumps;
  int32_t continue_target = -1;
};

class ProgramCompiler {
 public:
  ProgramCompiler(Program& p, const MachineModel& m) : p_(p), model_(m) {}

  void compile(const PrimFunc& f) {
    p_.func = f;
    p_.model = &model_;
    // Planned / pinned addresses (annotate_address) apply wherever the buffer is used.
    post_order_visit(f.body(), [&](const Stmt& st) {
      auto* op = st.as<TileOpNode>();
      if (!op || !is_tile_op(*op, TileOpKind::kAnnotateAddress)) return;
      if (op->args.size() < 2 || !op->args[0].is_region() || !op->args[1].is_expr())
        throw_error<SyntaxError>(op_error_prefix(*op), "expects (buffer, byte_offset)");
      addresses_[op->args[0].region.buffer.get()] = get_const_int(op->args[1].expr, "T.annotate_address offset");
    });
    for (auto& prm : f.params()) {
      Program::ParamInfo info;
      info.name = prm.name;
      if (prm.is_buffer()) {
        info.is_buffer = true;
        info.buffer = buffer_index(prm.buffer);
        info.dtype = prm.buffer.dtype();
        p_.buffers[info.buffer].param_index = static_cast<int>(p_.params.size());
      } else {
        info.slot = slot_of(prm.var);
        info.dtype = prm.var.dtype();
      }
      p_.params.push_back(info);
    }
    for (auto& v : f.dynamic_vars()) p_.dynamic_slots.push_back(slot_of(v));
    // Shapes of GM parameters may use dynamic variables: compile them now the slots exist.
    for (auto& prm : f.params())
      if (prm.is_buffer()) compile_shape(p_.buffers[buffer_index(prm.buffer)], prm.buffer);
    for (int k = 0; k < 2; ++k) {
      kind_ = static_cast<CoreKind>(k);
      code_ = &p_.code[k];
      scope_ = -1;
      compile_stmt(f.body());
      emit(BInstr{BOp::kEnd});
    }
    if (p_.grid_expr < 0)
      throw_error<SyntaxError>(f->span.str(), f->span.defined() ? ": " : "", "kernel '", f.name(),
                               "' has no T.Kernel(..., is_npu=True) launch");
    place_unaddressed_buffers();
    place_workspaces();
  }

  // GM buffers that are not parameters are workspaces of the runtime (ascend_cv_split's transfers):
  // static shapes, one arena per core group, 512 B aligned.
  void place_workspaces() {
    for (size_t i = 0; i < p_.buffers.size(); ++i) {
      if (p_.buffers[i].is_local || p_.buffers[i].mem != Mem::kGM || p_.buffers[i].param_index >= 0) continue;
      int64_t n = 1;
      for (auto& e : buffer_objs_[i].shape()) n *= get_const_int(e, "GM workspace extent");
      compile_shape(p_.buffers[i], buffer_objs_[i]);  // may grow p_.buffers: index again below
      SimBuffer& b = p_.buffers[i];
      b.workspace = true;
      b.workspace_offset = p_.workspace_bytes;
      p_.workspace_bytes += (n * b.dtype.element_bytes() + 511) / 512 * 512;
    }
  }

 private:
  // ---- variables and buffers ----
  int32_t slot_of(const Var& v) {
    auto it = slots_.find(v.get());
    if (it != slots_.end()) return it->second;
    int32_t s = p_.num_slots++;
    slots_[v.get()] = s;
    return s;
  }
  int32_t bound_slot(const VarNode* v) {
    auto it = slots_.find(v);
    if (it == slots_.end())
      throw_error<VerifyError>("variable '", v->name, "' is used before it is defined (ascend simulator)");
    return it->second;
  }

  int32_t buffer_index(const Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end()) return it->second;
    SimBuffer sb;
    sb.name = b.name();
    sb.dtype = b.dtype();
    sb.scope = b.scope();
    sb.span = b->span;
    if (b.scope() == MemScope::kLocal || b.scope() == MemScope::kLocalVar || b.scope() == MemScope::kFragment ||
        b.scope() == MemScope::kShared) {
      // Scalar storage of a core (T.alloc_var / T.alloc_local). Fragments and shared buffers that
      // reach the simulator unresolved are only valid when used by scalar code.
      sb.is_local = true;
      int64_t n = 1;
      for (auto& e : b.shape()) n *= get_const_int(e, "local buffer extent");
      sb.local_offset = p_.local_values;
      sb.local_size = n;
      p_.local_values += n;
    } else if (!mem_of_scope(b.scope(), &sb.mem)) {
      throw_error<SyntaxError>(b->span.str(), b->span.defined() ? ": " : "", "buffer '", b.name(), "' in scope '",
                               scope_name(b.scope()), "' cannot be placed on the Ascend NPU");
    } else if (sb.mem != Mem::kGM) {
      sb.footprint = buffer_footprint(b, sb.mem, model_);
      auto at = addresses_.find(b.get());
      if (at != addresses_.end()) sb.address = at->second;
    }
    int32_t idx = static_cast<int32_t>(p_.buffers.size());
    p_.buffers.push_back(sb);
    buffers_[b.get()] = idx;
    buffer_objs_.push_back(b);
    if (sb.mem != Mem::kGM || sb.is_local) compile_shape(p_.buffers[idx], b);
    return idx;
  }
  void compile_shape(SimBuffer& sb, const Buffer& b) {
    if (!sb.shape.empty()) return;
    std::vector<int32_t> shape, strides;
    for (auto& e : b.shape()) shape.push_back(expr(e));
    for (auto& e : b->strides) strides.push_back(expr(e));
    // `expr` may grow p_.buffers; re-find the entry.
    SimBuffer& dst = p_.buffers[buffers_.at(b.get())];
    dst.shape = std::move(shape);
    dst.strides = std::move(strides);
  }

  // ---- expressions ----
  int32_t add(XNode n) {
    p_.exprs.push_back(std::move(n));
    return static_cast<int32_t>(p_.exprs.size() - 1);
  }
  int32_t expr(const Expr& e) {
    XNode n;
    n.dtype = e.dtype();
    n.is_float = e.dtype().is_float();
    switch (e.kind()) {
      case ExprKind::kIntImm:
        n.op = XOp::kIntConst;
        n.ival = e.as<IntImmNode>()->value;
        return add(n);
      case ExprKind::kFloatImm:
        n.op = XOp::kFloatConst;
        n.fval = e.as<FloatImmNode>()->value;
        return add(n);
      case ExprKind::kVar:
        n.op = XOp::kSlot;
        n.a = bound_slot(e.as<VarNode>());
        return add(n);
      case ExprKind::kBinary: {
        auto* b = e.as<BinaryNode>();
        n.op = XOp::kBinary;
        n.bop = b->op;
        n.a = expr(b->a);
        n.b = expr(b->b);
        return add(n);
      }
      case ExprKind::kUnary: {
        auto* u = e.as<UnaryNode>();
        n.op = XOp::kUnary;
        n.uop = u->op;
        n.a = expr(u->a);
        return add(n);
      }
      case ExprKind::kSelect: {
        auto* s = e.as<SelectNode>();
        n.op = XOp::kSelect;
        n.a = expr(s->cond);
        n.b = expr(s->true_value);
        n.c = expr(s->false_value);
        return add(n);
      }
      case ExprKind::kCast:
        n.op = XOp::kCast;
        n.a = expr(e.as<CastNode>()->value);
        return add(n);
      case ExprKind::kBufferLoad: {
        auto* l = e.as<BufferLoadNode>();
        n.op = XOp::kLoad;
        n.buffer = buffer_index(l->buffer);
        for (auto& i : l->indices) n.args.push_back(expr(i));
        return add(n);
      }
      case ExprKind::kCall: {
        auto* c = e.as<CallNode>();
        if (c->op == "if_then_else" && c->args.size() == 3) {
          n.op = XOp::kSelect;
          n.a = expr(c->args[0]);
          n.b = expr(c->args[1]);
          n.c = expr(c->args[2]);
          return add(n);
        }
        n.op = XOp::kCall;
        n.call = c->op;
        for (auto& a : c->args)
          if (a.kind() != ExprKind::kStringImm) n.args.push_back(expr(a));
        return add(n);
      }
      case ExprKind::kStringImm:
        throw_error<SyntaxError>("a string cannot be used as a value (\"", e.as<StringImmNode>()->value, "\")");
      case ExprKind::kRamp:
      case ExprKind::kBroadcast:
        throw_error<NotImplemented>("not implemented: vector (ramp/broadcast) expressions on target ascend");
    }
    return -1;
  }
  bool reads_memory(const Expr& e) {
    bool found = false;
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) {
        MemScope s = l->buffer.scope();
        if (s != MemScope::kLocal && s != MemScope::kLocalVar && s != MemScope::kFragment && s != MemScope::kShared)
          found = true;
      }
    });
    return found;
  }

  // ---- statements ----
  void emit(BInstr b) { code_->push_back(std::move(b)); }
  int32_t pc() const { return static_cast<int32_t>(code_->size()); }

  bool runs_here(CoreKind k) const { return k == kind_; }

  void compile_stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (auto& c : s.as<SeqStmtNode>()->seq) compile_stmt(c);
        return;
      case StmtKind::kEvaluate: compile_evaluate(s.as<EvaluateNode>(), s); return;
      case StmtKind::kLet: {
        auto* l = s.as<LetStmtNode>();
        BInstr b{BOp::kLet};
        b.x0 = expr(l->value);
        b.slot = slot_of(l->var);
        b.visible = reads_memory(l->value);
        b.span = s.span();
        emit(b);
        compile_stmt(l->body);
        return;
      }
      case StmtKind::kStore: compile_store(s.as<BufferStoreNode>(), s); return;
      case StmtKind::kFor: compile_for(s.as<ForNode>()); return;
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        BInstr br{BOp::kBranchFalse};
        br.x0 = expr(n->cond);
        br.visible = reads_memory(n->cond);
        br.span = s.span();
        int32_t at = pc();
        emit(br);
        compile_stmt(n->then_case);
        if (n->else_case.defined()) {
          int32_t jmp = pc();
          emit(BInstr{BOp::kJump});
          (*code_)[at].target = pc();
          compile_stmt(n->else_case);
          (*code_)[jmp].target = pc();
        } else {
          (*code_)[at].target = pc();
        }
        return;
      }
      case StmtKind::kAllocate: {
        auto* a = s.as<AllocateNode>();
        buffer_index(a->buffer);
        compile_stmt(a->body);
        return;
      }
      case StmtKind::kAttr: {
        auto* a = s.as<AttrStmtNode>();
        if (a->key == "scope") {
          std::string v = a->value.kind() == Attr::kStr ? a->value.as_str() : "";
          int want = v == "C" ? 0 : v == "V" ? 1 : -2;
          if (want == -2)
            throw_error<SyntaxError>(s.span().str(), ": T.Scope expects \"C\" or \"V\", got \"", v, "\"");
          if (want != static_cast<int>(kind_)) return;
          int saved = scope_;
          scope_ = want;
          compile_stmt(a->body);
          scope_ = saved;
          return;
        }
        compile_stmt(a->body);
        return;
      }
      case StmtKind::kKernel: compile_kernel(s.as<KernelLaunchNode>(), s); return;
      case StmtKind::kTileOp: compile_tile_op(s.as<TileOpNode>(), s); return;
      case StmtKind::kLoopControl: {
        if (loops_.empty()) throw_error<SyntaxError>(s.span().str(), ": break/continue outside a loop");
        auto* lc = s.as<LoopControlNode>();
        BInstr j{BOp::kJump};
        if (lc->is_break) {
          loops_.back().break_jumps.push_back(pc());
        } else {
          j.target = -2;  // patched to the loop's increment
          loops_.back().break_jumps.push_back(-1 - pc());
        }
        emit(j);
        return;
      }
    }
  }

  void compile_kernel(const KernelLaunchNode* k, const Stmt& s) {
    if (!attr_bool(k->attrs, "is_npu", false))
      throw_error<NotImplemented>(s.span().str(), s.span().defined() ? ": " : "",
                                  "not implemented: a T.Kernel without is_npu=True on target ascend; write "
                                  "`with T.Kernel(n, is_npu=True) as (cid, vid):`");
    if (k->block_vars.empty()) throw_error<SyntaxError>(s.span().str(), ": T.Kernel needs a block count");
    if (p_.grid_expr < 0) {
      p_.grid_expr = expr(k->grid[0]);
      p_.cid_slot = slot_of(k->block_vars[0]);
      if (attr_bool(k->attrs, "npu_vid", false) && k->block_vars.size() >= 2) {
        p_.vid_slot = slot_of(k->block_vars[1]);
        p_.vector_cores = 2;
      } else {
        int64_t t = attr_int(k->attrs, "npu_threads", 2);
        if (t != 1 && t != 2)
          throw_error<SyntaxError>(s.span().str(), ": T.Kernel(..., threads=", t, ", is_npu=True): threads must be 1 or 2");
        p_.vector_cores = static_cast<int>(t);
      }
    }
    compile_stmt(k->body);
  }

  void compile_for(const ForNode* f) {
    if (f->for_kind == ForKind::kParallel || f->for_kind == ForKind::kVectorized) {
      // A parallel loop that reaches the simulator runs on the scalar unit (documented limitation).
    }
    BInstr init{BOp::kForInit};
    init.slot = slot_of(f->var);
    init.slot2 = p_.num_slots++;
    init.x0 = expr(f->min);
    init.x1 = expr(f->extent);
    init.span = f->span;
    init.visible = reads_memory(f->min) || reads_memory(f->extent);
    emit(init);
    int32_t head = pc();
    BInstr test{BOp::kForTest};
    test.slot = init.slot;
    test.slot2 = init.slot2;
    emit(test);
    loops_.push_back({});
    compile_stmt(f->body);
    int32_t next_pc = pc();
    BInstr next{BOp::kForNext};
    next.slot = init.slot;
    next.target = head;
    emit(next);
    int32_t exit_pc = pc();
    (*code_)[head].target = exit_pc;
    for (int32_t j : loops_.back().break_jumps) {
      if (j >= 0) (*code_)[j].target = exit_pc;
      else (*code_)[-1 - j].target = next_pc;
    }
    loops_.pop_back();
  }

  void compile_store(const BufferStoreNode* st, const Stmt& s) {
    int32_t bi = buffer_index(st->buffer);
    const SimBuffer& sb = p_.buffers[bi];
    if (!sb.is_local && sb.mem != Mem::kGM && mem_owner(sb.mem) != kind_) {
      if (scope_ == static_cast<int>(kind_))
        throw_error<SyntaxError>(s.span().str(), ": buffer '", sb.name, "' is in ", mem_name(sb.mem),
                                 ", which the ", core_kind_name(kind_), " core of this T.Scope cannot access");
      return;  // runs on the other core kind
    }
    BInstr b{sb.is_local ? BOp::kStoreLocal : BOp::kStoreMem};
    b.buffer = bi;
    for (auto& i : st->indices) b.indices.push_back(expr(i));
    b.x0 = expr(st->value);
    b.visible = !sb.is_local || reads_memory(st->value);
    b.span = s.span();
    emit(b);
  }

  Pipe pipe_arg(const CallNode* c, size_t i, const Stmt& s) {
    if (i >= c->args.size() || !c->args[i].as<StringImmNode>())
      throw_error<SyntaxError>(s.span().str(), ": T.", c->op.substr(7), " expects pipe names as strings");
    Pipe p;
    const std::string& name = c->args[i].as<StringImmNode>()->value;
    if (!parse_pipe(name, &p))
      throw_error<SyntaxError>(s.span().str(), ": unknown pipe \"", name,
                               "\"; pipes are \"mte1\", \"mte2\", \"mte3\", \"m\", \"v\", \"fix\", \"s\"");
    return p;
  }

  // The core kind that owns a pipe; -1 for pipes every core has (S, MTE2).
  static int pipe_core(Pipe p) {
    switch (p) {
      case Pipe::kMTE1: case Pipe::kM: case Pipe::kFIX: return 0;
      case Pipe::kMTE3: case Pipe::kV: return 1;
      default: return -1;
    }
  }
  // Whether a sync op on these pipes runs on this core kind; errors when a scope contradicts it.
  bool sync_runs_here(std::initializer_list<Pipe> pipes, const Stmt& s, const std::string& what) {
    int owner = -1;
    for (Pipe p : pipes) {
      int c = pipe_core(p);
      if (c < 0) continue;
      if (owner >= 0 && owner != c)
        throw_error<SyntaxError>(s.span().str(), ": ", what, " names pipes of both the cube core (mte1/m/fix) and "
                                 "the vector core (v/mte3); flags only order pipes of one core, use "
                                 "T.set_cross_flag / T.wait_cross_flag between cores");
      owner = c;
    }
    if (scope_ >= 0) {
      if (owner >= 0 && owner != scope_)
        throw_error<SyntaxError>(s.span().str(), ": ", what, " uses a pipe the ", scope_ == 0 ? "cube" : "vector",
                                 " core of this T.Scope does not have");
      return true;
    }
    return owner < 0 || owner == static_cast<int>(kind_);
  }

  void compile_evaluate(const EvaluateNode* ev, const Stmt& s) {
    auto* c = ev->value.as<CallNode>();
    BInstr b;
    b.span = s.span();
    b.visible = true;
    if (c && c->op.rfind("ascend.", 0) == 0) {
      const std::string& op = c->op;
      if (op == "ascend.set_flag" || op == "ascend.wait_flag") {
        b.op = op == "ascend.set_flag" ? BOp::kSetFlag : BOp::kWaitFlag;
        b.p0 = pipe_arg(c, 0, s);
        b.p1 = pipe_arg(c, 1, s);
        if (c->args.size() < 3) throw_error<SyntaxError>(s.span().str(), ": ", op, " expects (src, dst, event_id)");
        if (!sync_runs_here({b.p0, b.p1}, s, "T." + op.substr(7))) return;
        b.x0 = expr(c->args[2]);
      } else if (op == "ascend.pipe_barrier") {
        b.op = BOp::kPipeBarrier;
        b.p0 = pipe_arg(c, 0, s);
        if (!sync_runs_here({b.p0}, s, "T.pipe_barrier")) return;
      } else if (op == "ascend.barrier_all") {
        b.op = BOp::kBarrierAll;
      } else if (op == "ascend.sync_all") {
        b.op = BOp::kSyncAll;
        b.sync_participants = scope_ == 0 ? 1 : scope_ == 1 ? 2 : 3;
      } else if (op == "ascend.set_cross_flag") {
        b.op = BOp::kSetCross;
        b.p0 = pipe_arg(c, 0, s);
        if (!sync_runs_here({b.p0}, s, "T.set_cross_flag")) return;
        if (c->args.size() < 2) throw_error<SyntaxError>(s.span().str(), ": T.set_cross_flag expects (pipe, flag_id, mode=2)");
        b.x0 = expr(c->args[1]);
        b.x1 = c->args.size() >= 3 ? expr(c->args[2]) : expr(make_int(2));
      } else if (op == "ascend.wait_cross_flag") {
        b.op = BOp::kWaitCross;
        if (c->args.empty()) throw_error<SyntaxError>(s.span().str(), ": T.wait_cross_flag expects (flag_id)");
        size_t idx = c->args[0].as<StringImmNode>() && c->args.size() > 1 ? 1 : 0;
        b.x0 = expr(c->args[idx]);
      } else if (op == "ascend.use_swizzle") {
        b.op = BOp::kEval;
        b.x0 = expr(ev->value);
        b.visible = false;
      } else {
        throw_error<NotImplemented>(s.span().str(), ": not implemented: builtin '", op, "' on target ascend");
      }
      emit(b);
      return;
    }
    if (c && c->op == "tl.printf") {
      b.op = BOp::kPrintf;
      const auto* fmt = c->args.empty() ? nullptr : c->args[0].as<StringImmNode>();
      if (!fmt) throw_error<TypeError>(s.span().prefix(), "T.printf: the format must be a string constant");
      std::vector<DataType> types;
      for (size_t i = 1; i < c->args.size(); ++i) types.push_back(c->args[i].dtype());
      try {
        b.text = check_printf_format(fmt->value, types).format;
      } catch (const TypeError& e) {
        throw TypeError(s.span().prefix() + e.what());
      } catch (const ValueError& e) {
        throw ValueError(s.span().prefix() + e.what());
      }
      for (size_t i = 1; i < c->args.size(); ++i) b.indices.push_back(expr(c->args[i]));
      emit(b);
      return;
    }
    if (c && c->op == "tl.print_scalar") {
      b.op = BOp::kPrintf;
      if (c->args.size() != 2 || !c->args[0].as<StringImmNode>())
        throw_error<TypeError>(s.span().prefix(), "tl.print_scalar expects (msg, value)");
      DataType t = c->args[1].dtype();
      b.text = "msg='" + escape_printf_percent(c->args[0].as<StringImmNode>()->value) + "' dtype=" + t.str() +
               " value=" + (t.is_float() ? "%.9g" : t.is_uint() ? "%llu" : "%lld") + "\n";
      b.indices.push_back(expr(c->args[1]));
      emit(b);
      return;
    }
    if (c && c->op == "tl.device_assert") {
      b.op = BOp::kAssert;
      b.x0 = expr(c->args.at(0));
      if (c->args.size() > 1 && c->args[1].as<StringImmNode>()) b.text = c->args[1].as<StringImmNode>()->value;
      emit(b);
      return;
    }
    if (c && (c->op == "tl.sync_threads" || c->op == "cuda.cp_async_commit" || c->op == "cuda.cp_async_wait"))
      return;  // no-ops on the NPU (T.async_copy is a plain copy there)
    b.op = BOp::kEval;
    b.x0 = expr(ev->value);
    b.visible = reads_memory(ev->value);
    emit(b);
  }

  void compile_tile_op(const TileOpNode* op, const Stmt& s) {
    OpClass cls = classify_tile_op(*op);
    if (cls.cls == InstrClass::kMeta) return;
    if (!cls.core_neutral && cls.core != kind_) {
      if (scope_ == static_cast<int>(kind_))
        throw_error<SyntaxError>(op_error_prefix(*op), "runs on the ", cls.core == CoreKind::kAIC ? "cube" : "vector",
                                 " core (it uses ", cls.core == CoreKind::kAIC ? "L1/L0A/L0B/L0C" : "UB",
                                 ") but is inside T.Scope(\"", scope_ == 0 ? "C" : "V", "\")");
      return;
    }
    if (cls.core_neutral && scope_ < 0 && kind_ == CoreKind::kAIV && cls.cls == InstrClass::kDebug) return;
    InstrTemplate t;
    t.node = op;
    const TileOp& def = get_tile_op(op->op);  // classify_tile_op accepted it: registered
    t.kind = def.kind();
    if (const auto* e = dynamic_cast<const ElementwiseOp*>(&def)) t.fn = e->fn();
    if (const auto* p = dynamic_cast<const PrintOp*>(&def)) t.dumps_tensor = p->dumps_tensor();
    t.cls = cls;
    t.span = s.span();
    t.text = describe_tile_op(*op);
    t.name = cls.cls == InstrClass::kVector ? vector_op_name(*op) : op->op;
    const AccessRegions effects = def.effects(*op);  // the operand roles (OperandTemplate::read / write)
    for (size_t k = 0; k < op->args.size(); ++k) {
      const TileArg& a = op->args[k];
      InstrTemplate::Arg arg;
      if (a.is_region()) {
        arg.is_region = true;
        OperandTemplate ot;
        ot.buffer = buffer_index(a.region.buffer);
        ot.read = effects.reads_arg(k);
        ot.write = effects.writes_arg(k);
        for (auto& r : a.region.region) {
          ot.min.push_back(expr(r.min));
          ot.extent.push_back(expr(r.extent));
        }
        arg.index = static_cast<int32_t>(t.regions.size());
        t.regions.push_back(std::move(ot));
      } else {
        arg.index = expr(a.expr);
      }
      t.args.push_back(arg);
    }
    t.relu = attr_bool(op->attrs, "enable_relu", false) || attr_bool(op->attrs, "relu", false);
    t.transpose = attr_bool(op->attrs, "transpose", false);
    t.transpose_a = attr_bool(op->attrs, "transpose_A", false);
    t.transpose_b = attr_bool(op->attrs, "transpose_B", false);
    auto it = op->attrs.find("init");
    if (it != op->attrs.end() && !it->second.is_none()) t.init = expr(it->second.as_expr());
    it = op->attrs.find("pad_value");
    if (it != op->attrs.end() && !it->second.is_none()) t.pad_value = expr(it->second.as_expr());
    t.mode = attr_str(op->attrs, "mode", "");
    if (t.kind == TileOpKind::kReduce) t.mode = attr_str(op->attrs, "type", "sum");
    t.dim = attr_int(op->attrs, "dim", -1);
    t.clear = attr_bool(op->attrs, "clear", true);
    t.reverse = attr_bool(op->attrs, "reverse", false);
    int32_t ti = static_cast<int32_t>(p_.templates.size());
    p_.templates.push_back(std::move(t));
    BInstr b{BOp::kIssue};
    b.tmpl = ti;
    b.span = s.span();
    b.visible = true;
    emit(b);
  }

  // Buffers that memory planning did not address get consecutive addresses (sequential allocation).
  void place_unaddressed_buffers() {
    int64_t next[kNumMems] = {0, 0, 0, 0, 0, 0};
    for (auto& b : p_.buffers)
      if (!b.is_local && b.mem != Mem::kGM && b.address >= 0)
        next[int(b.mem)] = std::max(next[int(b.mem)], b.address + b.footprint);
    for (auto& b : p_.buffers) {
      if (b.is_local || b.mem == Mem::kGM) continue;
      if (b.address < 0) {
        int64_t a = (next[int(b.mem)] + model_.alignment - 1) / model_.alignment * model_.alignment;
        b.address = a;
        next[int(b.mem)] = a + b.footprint;
      }
      if (b.address % model_.alignment != 0)
        throw_error<ValueError>("buffer '", b.name, "' is placed at byte ", b.address, " of ", mem_name(b.mem),
                                ", which is not ", model_.alignment, "-byte aligned");
      int64_t cap = model_.mem_bytes[int(b.mem)];
      if (b.address + b.footprint > cap)
        throw_error<ResourceError>("buffer '", b.name, "' (", b.footprint, " bytes at ", b.address, ") exceeds ",
                                   mem_name(b.mem), " (", cap, " bytes)");
      p_.peak_bytes[int(b.mem)] = std::max(p_.peak_bytes[int(b.mem)], b.address + b.footprint);
    }
  }

  Program& p_;
  const MachineModel& model_;
  CoreKind kind_ = CoreKind::kAIC;
  std::vector<BInstr>* code_ = nullptr;
  int scope_ = -1;  // -1 none, 0 = "C", 1 = "V"
  std::map<const VarNode*, int32_t> slots_;
  std::map<const BufferNode*, int32_t> buffers_;
  std::map<const BufferNode*, int64_t> addresses_;
  std::vector<Buffer> buffer_objs_;
  std::vector<LoopLabels> loops_;
};

}  // namespace

std::shared_ptr<const Program> compile_program(const PrimFunc& lowered, const MachineModel& model) {
  auto p = std::make_shared<Program>();
  ProgramCompiler(*p, model).compile(lowered);
  return p;
}

}  // namespace tl::sim
