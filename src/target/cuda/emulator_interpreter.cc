// The cuda emulator's interpreter: the grid and block loops (threads of a block in lockstep), variables,
// expressions and statements. See emulator_impl.h for where the rest of the Emulator lives.
#include "target/cuda/emulator_impl.h"

#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/eval.h"
#include "ir/scalar_ops.h"

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
  bulk_open_.assign(static_cast<size_t>(threads_), {});
  bulk_groups_.assign(static_cast<size_t>(threads_), {});
  bulk_pending_.clear();
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
  for (int64_t t = 0; t < threads_; ++t)
    if (!bulk_open_[static_cast<size_t>(t)].empty() || !bulk_groups_[static_cast<size_t>(t)].empty())
      throw_error<RuntimeError>("emulator: thread ", t, " ends the block with TMA stores that may still read shared "
                                "memory (", bulk_open_[static_cast<size_t>(t)].empty() ? "" : "uncommitted; ",
                                "no cp.async.bulk.wait_group.read 0 after them)");
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
// The emulator evaluates with the compiler's one tree walker (ir/eval.h, eval_tree) over its own
// values (Val: a number or a memory handle), and the one operator table (ir/scalar_ops.h).
struct EmuDomain {
  using V = Val;
  Emulator& em;
  int64_t t;

  bool imm(const Expr& e, V* out) {
    if (auto* i = e.as<IntImmNode>()) out->i = i->value;
    else out->f = round_to(e.dtype(), e.as<FloatImmNode>()->value);
    return true;
  }
  bool var(const Expr& e, V* out) { return (*out = em.var_value(e.as<VarNode>(), t), true); }
  bool truth(const V& v, bool* out) { return (*out = v.i != 0, true); }
  bool boolean(bool b, V* out) { return (out->i = b, true); }
  bool binary(const BinaryNode* n, const V& a, const V& b, V* out) { return (*out = em.binary(n, a, b), true); }
  bool unary(const UnaryNode* n, const V& a, V* out) { return (*out = em.unary(n, a), true); }
  bool cast(const CastNode* n, const V& a, V* out) { return (*out = em.cast(n, a), true); }
  bool load(const BufferLoadNode* n, V* out) { return (*out = em.load(n->buffer, n->indices, t), true); }
  bool call(const CallNode* n, V* out) { return (*out = em.call(n, t), true); }
  bool other(const Expr& e, V*) { throw_error<NotImplemented>("emulator: expression ", to_string(e)); }
};

Val Emulator::eval(const Expr& e, int64_t t) {
  EmuDomain d{*this, t};
  Val v;
  eval_tree(e, d, &v);
  return v;
}

Val Emulator::convert(DataType dt, DataType from, const Val& x) {
  Val v;
  if (dt.is_float()) v.f = round_to(dt, from.is_float() ? x.f : scalar::int_to_double(x.i, from));
  else if (from.is_float()) scalar::float_to_int(x.f, dt, &v.i);  // out of range saturates, as cvt does
  else v.i = scalar::int_to_int(x.i, dt);
  return v;
}

Val Emulator::unary(const UnaryNode* u, const Val& a) {
  DataType dt = u->dtype;
  Val v;
  scalar::Status s;
  if (u->a.dtype().is_float()) {
    double r = 0;
    s = scalar::float_unary(u->op, a.f, &r);
    if (u->op == UnOp::kNot) v.i = r != 0;
    else v.f = r;
  } else {
    s = scalar::int_unary(u->op, a.i, u->op == UnOp::kNot ? u->a.dtype() : dt, &v.i);
  }
  if (s != scalar::Status::kOk) throw_error<NotImplemented>("emulator: ", unop_name(u->op), " on ", dt.str());
  return v;
}

Val Emulator::binary(const BinaryNode* b, const Val& x, const Val& y) {
  DataType at = b->a.dtype();
  Val v;
  if (at.is_float()) {
    double r = 0;
    if (scalar::float_binary(b->op, x.f, y.f, &r) != scalar::Status::kOk)
      throw_error<NotImplemented>("emulator: float ", binop_name(b->op));
    if (scalar::gives_bool(b->op)) v.i = r != 0;
    else v.f = round_to(at, r);
    return v;
  }
  scalar::Status s = scalar::int_binary(b->op, x.i, y.i, scalar::gives_bool(b->op) ? at : b->dtype, &v.i);
  if (s == scalar::Status::kDivByZero) throw_error<RuntimeError>("emulator: integer division by zero");
  if (s != scalar::Status::kOk)
    throw_error<RuntimeError>("emulator: ", scalar::status_message(s), " in integer ", binop_name(b->op));
  return v;
}

Val Emulator::call(const CallNode* c, int64_t t) {
  DataType dt = c->dtype;
  const std::string& op = c->op;
  if (op == "abs") {
    Val a = eval(c->args[0], t), v;
    if (dt.is_float()) v.f = std::fabs(a.f);
    else if (a.i < 0) scalar::int_unary(UnOp::kNeg, a.i, dt, &v.i);  // abs(INT8_MIN) wraps, as on the device
    else v.i = a.i;
    return v;
  }
  if (op == "cuda.address_of") return address(make_call(dt, op, c->args), t);
  if (is_atomic_write_builtin(op) && op != "tl.atomic_store")  // tl.atomic_<kind>_scalar, its old value
    return atomic_update(op.substr(10, op.size() - 10 - 7), c->args[0], eval(c->args[1], t), t);
  if (op == "tl.atomic_load") return atomic_update("load", c->args[0], Val(), t);
  if (op == "tl.dist.rank" || op == "tl.dist.world") {
    Val v;
    v.i = op == "tl.dist.rank" ? dev_.rank : dev_.world;
    return v;
  }
  if (op == "cuda.num_ctas") {
    Val v;
    v.i = num_ctas_;
    return v;
  }
  if (c->args.size() <= 3) {  // the math builtins (ir/scalar_ops.h)
    double xs[3] = {0, 0, 0}, r = 0;
    for (size_t k = 0; k < c->args.size(); ++k) {
      Val a = eval(c->args[k], t);
      xs[k] = c->args[k].dtype().is_float() ? a.f : static_cast<double>(a.i);
    }
    if (scalar::math_call(op, xs, c->args.size(), &r)) {
      Val v;
      v.f = round_to(dt, r);
      return v;
    }
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
