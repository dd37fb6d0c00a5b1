// The cuda emulator's interpreter: the grid and block loops (threads of a block in lockstep), variables,
// expressions and statements. See emulator_impl.h for where the rest of the Emulator lives.
#include "target/cuda/emulator_impl.h"

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/int_arith.h"

namespace tl::cuda_emu {

EmulatorReport Emulator::run() {
  // Scalars and dynamic dimensions.
  const auto& params = f_.params();
  std::vector<Var> dyn = f_.dynamic_vars();
  if (args_.size() < params.size() + dyn.size())
    throw_error<ArgumentError>("emulator: expected ", params.size() + dyn.size(), " argument slots");
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].is_buffer()) {
      Val v;
      if (params[i].var.dtype().is_float()) v.f = args_[i].f64;
      else v.i = args_[i].i64;
      uniform_[params[i].var.get()] = v;
    }
  for (size_t i = 0; i < dyn.size(); ++i) {
    Val v;
    v.i = args_[params.size() + i].i64;
    uniform_[dyn[i].get()] = v;
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].is_buffer()) {
      const Buffer& b = params[i].buffer;
      int64_t n = 1;
      for (const Expr& e : b.shape()) n *= eval(e, 0).i;
      Mem m;
      m.base = static_cast<uint8_t*>(args_[i].ptr);
      m.size = n * b.dtype().element_bytes();
      m.space = Space::kGlobal;
      m.name = b.name();
      global_[b.get()] = m;
    }
  // The function's kernels run one after the other (lets around them are bound on the way).
  exec_top(f_.body());
  return report_;
}

void Emulator::exec_top(const Stmt& s) {
  if (const auto* k = s.as<KernelLaunchNode>()) return run_kernel(*k);
  if (const auto* l = s.as<LetStmtNode>()) {
    uniform_[l->var.get()] = eval(l->value, 0);
    return exec_top(l->body);
  }
  if (const auto* seq = s.as<SeqStmtNode>()) {
    for (const Stmt& x : seq->seq) exec_top(x);
    return;
  }
  if (is_nop(s)) return;
  throw_error<NotImplemented>("emulator: a statement outside T.Kernel");
}

void Emulator::run_kernel(const KernelLaunchNode& kernel) {
  const KernelLaunchNode* k = &kernel;
  threads_ = 1;
  std::vector<int64_t> tdims;
  for (const Expr& t : k->threads) {
    tdims.push_back(eval(t, 0).i);
    threads_ *= tdims.back();
  }
  // Warp-specialized kernels launch a producer warpgroup after the (one-dimensional) consumers.
  producer_threads_ = attr_int(k->attrs, "cuda.producer_threads", 0);
  ws_ = producer_threads_ > 0;
  if (ws_) {
    if (tdims.size() != 1) throw_error<NotImplemented>("emulator: warp specialization of a multi-dimensional block");
    tdims[0] += producer_threads_;
    threads_ += producer_threads_;
  }
  // The emulator runs one block at a time; a cluster's CTAs run together and reach into each
  // other's shared memory (multicast TMA, remote mbarrier arrivals, cluster barriers).
  if (attr_int(k->attrs, "cluster_dims", 1) > 1 && ws_)
    throw_error<NotImplemented>("emulator: a warp-specialized kernel in thread-block clusters (its CTAs share "
                                "operand tiles); run it on a GPU");
  std::vector<int64_t> grid;
  for (const Expr& g : k->grid) grid.push_back(eval(g, 0).i);
  while (grid.size() < 3) grid.push_back(1);
  // Persistent kernels: a few CTAs, each looping over several tiles (the launcher uses the SM count).
  if (attr_bool(k->attrs, "cuda.persistent", false)) grid[0] = std::min<int64_t>(grid[0], kPersistentCtas);
  num_ctas_ = grid[0];
  smem_bytes_ = attr_int(k->attrs, "dyn_smem_bytes", 0);
  int64_t panel = attr_int(k->attrs, "use_swizzle_panel", 0);
  bool row_order = attr_str(k->attrs, "use_swizzle_order", "row") == "row";
  for (int64_t z = 0; z < grid[2]; ++z)
    for (int64_t y = 0; y < grid[1]; ++y)
      for (int64_t x = 0; x < grid[0]; ++x) {
        int64_t bx = x, by = y;
        if (panel > 0 && k->block_vars.size() >= 2) rasterize(panel, row_order, grid, x, y, &bx, &by);
        int64_t ids[3] = {bx, by, z};
        for (size_t i = 0; i < k->block_vars.size(); ++i) {
          Val v;
          v.i = ids[i];
          uniform_[k->block_vars[i].get()] = v;
        }
        run_block(*k, tdims);
        ++report_.blocks_run;
      }
}

void Emulator::rasterize(int64_t panel, bool row, const std::vector<int64_t>& g, int64_t x, int64_t y,
                         int64_t* bx, int64_t* by) {
  int64_t gx = g[0], gy = g[1], pid = y * gx + x;
  if (row) {
    int64_t group = panel * gx, first = (pid / group) * panel, rows = std::min(gy - first, panel);
    *by = first + (pid % group) % rows;
    *bx = (pid % group) / rows;
  } else {
    int64_t group = panel * gy, first = (pid / group) * panel, cols = std::min(gx - first, panel);
    *bx = first + (pid % group) % cols;
    *by = (pid % group) / cols;
  }
}

void Emulator::run_block(const KernelLaunchNode& k, const std::vector<int64_t>& tdims) {
  smem_.assign(static_cast<size_t>(smem_bytes_ + 1), 0xcd);
  bytes_.assign(static_cast<size_t>(smem_bytes_ + 1), ByteState());
  epoch_ = 0;
  groups_.assign(static_cast<size_t>(threads_), {});
  open_.assign(static_cast<size_t>(threads_), {});
  vars_.clear();
  for (size_t i = 0; i < k.thread_vars.size(); ++i) {
    std::vector<Val> vals(static_cast<size_t>(threads_));
    int64_t stride = 1;
    for (size_t j = 0; j < i; ++j) stride *= tdims[j];
    for (int64_t t = 0; t < threads_; ++t) vals[static_cast<size_t>(t)].i = (t / stride) % tdims[i];
    vars_[k.thread_vars[i].get()] = vals;
  }
  if (ws_) {
    mbars_.clear();
    clock_.assign(static_cast<size_t>(threads_), 0);
    known_.assign(static_cast<size_t>(threads_), std::vector<int32_t>(static_cast<size_t>(threads_), -1));
    seen_.assign(static_cast<size_t>(threads_), {});
  }
  named_bars_.clear();
  std::vector<char> all(static_cast<size_t>(threads_), 1);
  exec(k.body, all);
  for (const auto& [id, n] : named_bars_)
    if (n) throw_error<RuntimeError>("emulator: named barrier ", id, " ends the block with ", n,
                                     " arrivals of an incomplete generation (a hang on the GPU)");
}

// ---- variables --------------------------------------------------------------------------
Val Emulator::var_value(const VarNode* v, int64_t t) {
  auto it = vars_.find(v);
  if (it != vars_.end()) return it->second[static_cast<size_t>(t)];
  auto u = uniform_.find(v);
  if (u != uniform_.end()) return u->second;
  throw_error<Error>("emulator: unbound variable '", v->name, "'");
}

// ---- expressions ------------------------------------------------------------------------
Val Emulator::eval(const Expr& e, int64_t t) {
  DataType dt = e.dtype();
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      Val v;
      v.i = e.as<IntImmNode>()->value;
      return v;
    }
    case ExprKind::kFloatImm: {
      Val v;
      v.f = round_to(dt, e.as<FloatImmNode>()->value);
      return v;
    }
    case ExprKind::kVar: return var_value(e.as<VarNode>(), t);
    case ExprKind::kBufferLoad: {
      const auto* l = e.as<BufferLoadNode>();
      return load(l->buffer, l->indices, t);
    }
    case ExprKind::kCast: {
      const auto* c = e.as<CastNode>();
      Val x = eval(c->value, t);
      DataType from = c->value.dtype();
      Val v;
      if (dt.is_float()) v.f = round_to(dt, from.is_float() ? x.f : static_cast<double>(x.i));
      else if (dt.is_bool()) v.i = from.is_float() ? (x.f != 0) : (x.i != 0);
      else v.i = wrap_int(dt, from.is_float() ? static_cast<int64_t>(std::trunc(x.f)) : x.i);
      return v;
    }
    case ExprKind::kSelect: {
      const auto* s = e.as<SelectNode>();
      return eval(s->cond, t).i ? eval(s->true_value, t) : eval(s->false_value, t);
    }
    case ExprKind::kUnary: {
      const auto* u = e.as<UnaryNode>();
      Val a = eval(u->a, t), v;
      if (u->op == UnOp::kNeg) {
        if (dt.is_float()) v.f = -a.f;
        else v.i = wrap_int(dt, -a.i);
      } else if (u->op == UnOp::kNot) {
        v.i = !a.i;
      } else {
        v.i = wrap_int(dt, ~a.i);
      }
      return v;
    }
    case ExprKind::kBinary: return binary(e.as<BinaryNode>(), t);
    case ExprKind::kCall: return call(e.as<CallNode>(), t);
    default: throw_error<NotImplemented>("emulator: expression ", to_string(e));
  }
}

Val Emulator::binary(const BinaryNode* b, int64_t t) {
  DataType at = b->a.dtype();
  Val x = eval(b->a, t), y = eval(b->b, t), v;
  if (binop_is_logical(b->op)) {
    v.i = b->op == BinOp::kAnd ? (x.i && y.i) : (x.i || y.i);
    return v;
  }
  if (at.is_float()) {
    double a = x.f, c = y.f, r = 0;
    switch (b->op) {
      case BinOp::kAdd: r = a + c; break;
      case BinOp::kSub: r = a - c; break;
      case BinOp::kMul: r = a * c; break;
      case BinOp::kDiv: r = a / c; break;
      case BinOp::kMod: r = std::fmod(a, c); break;
      case BinOp::kFloorDiv: r = std::floor(a / c); break;
      case BinOp::kFloorMod: r = a - std::floor(a / c) * c; break;
      case BinOp::kMin: r = std::isnan(a) ? c : std::isnan(c) ? a : std::min(a, c); break;
      case BinOp::kMax: r = std::isnan(a) ? c : std::isnan(c) ? a : std::max(a, c); break;
      case BinOp::kEQ: v.i = a == c; return v;
      case BinOp::kNE: v.i = a != c; return v;
      case BinOp::kLT: v.i = a < c; return v;
      case BinOp::kLE: v.i = a <= c; return v;
      case BinOp::kGT: v.i = a > c; return v;
      case BinOp::kGE: v.i = a >= c; return v;
      default: throw_error<NotImplemented>("emulator: float ", binop_name(b->op));
    }
    v.f = round_to(at, r);
    return v;
  }
  int64_t a = x.i, c = y.i, r = 0;
  switch (b->op) {
    case BinOp::kAdd: r = a + c; break;
    case BinOp::kSub: r = a - c; break;
    case BinOp::kMul: r = a * c; break;
    case BinOp::kDiv:
      if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
      r = a / c;
      break;
    case BinOp::kMod:
      if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
      r = a % c;
      break;
    case BinOp::kFloorDiv:
      if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
      r = floordiv_int(a, c);
      break;
    case BinOp::kFloorMod:
      if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
      r = floormod_int(a, c);
      break;
    case BinOp::kMin: r = std::min(a, c); break;
    case BinOp::kMax: r = std::max(a, c); break;
    case BinOp::kEQ: v.i = a == c; return v;
    case BinOp::kNE: v.i = a != c; return v;
    case BinOp::kLT: v.i = a < c; return v;
    case BinOp::kLE: v.i = a <= c; return v;
    case BinOp::kGT: v.i = a > c; return v;
    case BinOp::kGE: v.i = a >= c; return v;
    case BinOp::kBitAnd: r = a & c; break;
    case BinOp::kBitOr: r = a | c; break;
    case BinOp::kBitXor: r = a ^ c; break;
    case BinOp::kShl: r = a << c; break;
    case BinOp::kShr: r = a >> c; break;
    default: throw_error<NotImplemented>("emulator: integer ", binop_name(b->op));
  }
  v.i = wrap_int(b->dtype, r);
  return v;
}

Val Emulator::call(const CallNode* c, int64_t t) {
  DataType dt = c->dtype;
  const std::string& op = c->op;
  auto f1 = [&](double (*fn)(double)) {
    Val v;
    Val a = eval(c->args[0], t);
    v.f = round_to(dt, fn(c->args[0].dtype().is_float() ? a.f : static_cast<double>(a.i)));
    return v;
  };
  if (op == "exp" || op == "__exp") return f1([](double x) { return std::exp(x); });
  if (op == "exp2") return f1([](double x) { return std::exp2(x); });
  if (op == "log" || op == "__log") return f1([](double x) { return std::log(x); });
  if (op == "log2") return f1([](double x) { return std::log2(x); });
  if (op == "sqrt") return f1([](double x) { return std::sqrt(x); });
  if (op == "rsqrt") return f1([](double x) { return 1.0 / std::sqrt(x); });
  if (op == "tanh") return f1([](double x) { return std::tanh(x); });
  if (op == "sigmoid") return f1([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  if (op == "sin" || op == "__sin") return f1([](double x) { return std::sin(x); });
  if (op == "cos" || op == "__cos") return f1([](double x) { return std::cos(x); });
  if (op == "floor") return f1([](double x) { return std::floor(x); });
  if (op == "ceil") return f1([](double x) { return std::ceil(x); });
  if (op == "round") return f1([](double x) { return std::nearbyint(x); });
  if (op == "trunc") return f1([](double x) { return std::trunc(x); });
  if (op == "abs") {
    Val a = eval(c->args[0], t), v;
    if (dt.is_float()) v.f = std::fabs(a.f);
    else v.i = wrap_int(dt, a.i < 0 ? -a.i : a.i);  // abs(INT8_MIN) wraps, as on the device
    return v;
  }
  if (op == "pow") {
    Val v;
    v.f = round_to(dt, std::pow(eval(c->args[0], t).f, eval(c->args[1], t).f));
    return v;
  }
  if (op == "cuda.address_of") return address(make_call(dt, op, c->args), t);
  if (op == "tl.atomic_add_scalar" || op == "tl.atomic_max_scalar" || op == "tl.atomic_min_scalar")
    return atomic_update(op.substr(10, 3), c->args[0], eval(c->args[1], t), t);
  if (op == "tl.atomic_load") return atomic_update("load", c->args[0], Val(), t);
  if (op == "cuda.num_ctas") {
    Val v;
    v.i = num_ctas_;
    return v;
  }
  throw_error<NotImplemented>("emulator: call '", op, "'");
}

// ---- statements -------------------------------------------------------------------------
void Emulator::exec(const Stmt& s, const std::vector<char>& act) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kSeq:
      for (const Stmt& x : s.as<SeqStmtNode>()->seq) exec(x, act);
      return;
    case StmtKind::kAttr: {
      const auto* a = s.as<AttrStmtNode>();
      if (a->key == "smem_offset") smem_offset_[a->body.as<AllocateNode>()->buffer.get()] = a->value.as_int();
      if (a->key == "cuda.warp_specialize") {
        const auto* roles = a->body.as<IfThenElseNode>();
        TL_ICHECK(roles, "cuda.warp_specialize without its role branches");
        run_roles(*roles, act);
        return;
      }
      exec(a->body, act);
      return;
    }
    case StmtKind::kAllocate: {
      const auto* a = s.as<AllocateNode>();
      const Buffer& b = a->buffer;
      int64_t n = b.dtype().element_bytes();
      for (const Expr& e : b.shape()) n *= get_const_int(e, "buffer size");
      if (b.scope() == MemScope::kShared) {
        int64_t off = smem_offset_.at(b.get());
        if (off + n > smem_bytes_)
          throw_error<RuntimeError>("emulator: shared buffer '", b.name(), "' exceeds the planned block");
        Mem m;
        m.base = smem_.data() + off;
        m.size = n;
        m.space = Space::kShared;
        m.name = b.name();
        shared_[b.get()] = m;
        exec(a->body, act);
        shared_.erase(b.get());
      } else {
        local_[b.get()] = std::vector<std::vector<uint8_t>>(static_cast<size_t>(threads_),
                                                            std::vector<uint8_t>(static_cast<size_t>(n), 0xcd));
        exec(a->body, act);
        local_.erase(b.get());
      }
      return;
    }
    case StmtKind::kLet: {
      const auto* l = s.as<LetStmtNode>();
      std::vector<Val> vals(static_cast<size_t>(threads_));
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)]) vals[static_cast<size_t>(t)] = eval(l->value, t);
      auto saved = vars_.find(l->var.get()) != vars_.end() ? vars_[l->var.get()] : std::vector<Val>();
      vars_[l->var.get()] = vals;
      exec(l->body, act);
      if (saved.empty()) vars_.erase(l->var.get());
      else vars_[l->var.get()] = saved;
      return;
    }
    case StmtKind::kFor: {
      const auto* f = s.as<ForNode>();
      int64_t first = -1;
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)]) {
          first = t;
          break;
        }
      if (first < 0) return;
      int64_t mn = eval(f->min, first).i, ext = eval(f->extent, first).i;
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)] && (eval(f->min, t).i != mn || eval(f->extent, t).i != ext))
          throw_error<NotImplemented>("emulator: a loop whose bounds differ between threads");
      std::vector<Val> vals(static_cast<size_t>(threads_));
      for (int64_t i = mn; i < mn + ext; ++i) {
        for (Val& v : vals) v.i = i;
        vars_[f->var.get()] = vals;
        exec(f->body, act);
      }
      vars_.erase(f->var.get());
      return;
    }
    case StmtKind::kIf: {
      const auto* i = s.as<IfThenElseNode>();
      std::vector<char> yes(act.size(), 0), no(act.size(), 0);
      bool any_yes = false, any_no = false;
      for (int64_t t = 0; t < threads_; ++t) {
        if (!act[static_cast<size_t>(t)]) continue;
        bool c = eval(i->cond, t).i != 0;
        (c ? yes : no)[static_cast<size_t>(t)] = 1;
        (c ? any_yes : any_no) = true;
      }
      if (any_yes) exec(i->then_case, yes);
      if (any_no && i->else_case.defined()) exec(i->else_case, no);
      return;
    }
    case StmtKind::kStore: {
      const auto* st = s.as<BufferStoreNode>();
      if (const auto* c = st->value.as<CallNode>(); c && (c->op == "cuda.call" || c->op == "cuda.call_sync")) {
        collective_store(st, c, act);
        return;
      }
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)]) store(st->buffer, st->indices, eval(st->value, t), t);
      return;
    }
    case StmtKind::kEvaluate: {
      const auto* c = s.as<EvaluateNode>()->value.as<CallNode>();
      if (!c) return;
      evaluate(c, act, s->span);
      return;
    }
    case StmtKind::kLoopControl: throw_error<NotImplemented>("emulator: break / continue");
    default: throw_error<NotImplemented>("emulator: statement ", to_string(s));
  }
}

}  // namespace tl::cuda_emu
