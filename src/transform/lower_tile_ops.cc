#include "transform/lower_tile_ops.h"

#include <map>
#include <optional>

#include "ir/error.h"
#include "ir/functor.h"
#include "op/op_util.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

class TileOpLowerer : public StmtMutator {
 public:
  TileOpLowerer(const PassContext& ctx, const TargetTileOpLowering& hook) : hook_(hook) {
    base_.target = ctx.target;
    base_.guard_global_bounds = !config_bool(ctx.configs, "tl.disable_safe_memory_legalize");
  }
  using StmtMutator::mutate;

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* n, const Stmt& s) override {
    ScopedRanges scope(this);
    for (size_t i = 0; i < n->block_vars.size(); ++i) bind(n->block_vars[i], make_int(0, n->grid[i].dtype()), n->grid[i]);
    for (size_t i = 0; i < n->thread_vars.size(); ++i)
      bind(n->thread_vars[i], make_int(0, n->threads[i].dtype()), n->threads[i]);
    int64_t saved_threads = base_.num_threads;
    int64_t threads = 1;
    for (auto& t : n->threads) {
      int64_t v;
      threads = (threads > 0 && is_const_int(t, &v)) ? threads * v : -1;
    }
    base_.num_threads = threads > 0 ? threads : 1;
    Stmt out = StmtMutator::mutate_kernel(n, s);
    base_.num_threads = saved_threads;
    return out;
  }

  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    ScopedRanges scope(this);
    bind(n->var, n->min, n->extent);
    return StmtMutator::mutate_for(n, s);
  }

  Stmt mutate_let(const LetStmtNode* n, const Stmt& s) override {
    ScopedRanges scope(this);
    int64_t lo, hi;
    if (n->var.dtype().is_integer() && const_bounds(n->value, base_.var_ranges, &lo, &hi))
      bind(n->var, make_int(lo, n->var.dtype()), make_int(hi - lo + 1, n->var.dtype()));
    return StmtMutator::mutate_let(n, s);
  }

  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    const TileOp* def = find_tile_op(*n);
    if (!def)
      throw_error<NotImplemented>(op_error_prefix(*n), "not implemented: tile op '", n->op, "' on target ",
                                  base_.target.kind_name(), " (no such operator is registered)");
    def->verify(*n);
    if (hook_) {
      Stmt lowered = hook_(*n, base_);
      if (lowered.defined()) return lowered;
    }
    if (!def->has_loop_form())
      throw_error<NotImplemented>(op_error_prefix(*n), "not implemented: T.", n->op, " on target ",
                                  base_.target.kind_name(), " (this op has no loop form; it exists only as an ",
                                  "Ascend vector instruction)");
    return def->lower_loops(*n, base_);
  }

 private:
  // Restores the variable ranges of the enclosing scope on exit.
  struct ScopedRanges {
    TileOpLowerer* self;
    std::vector<std::pair<Var, std::optional<Range>>> saved;
    explicit ScopedRanges(TileOpLowerer* s) : self(s) { s->scopes_.push_back(this); }
    ~ScopedRanges() {
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->second) self->base_.var_ranges[it->first] = *it->second;
        else self->base_.var_ranges.erase(it->first);
      }
      self->scopes_.pop_back();
    }
  };
  void bind(const Var& v, const Expr& min, const Expr& extent) {
    auto& ranges = base_.var_ranges;
    auto it = ranges.find(v);
    scopes_.back()->saved.emplace_back(v, it == ranges.end() ? std::nullopt : std::optional<Range>(it->second));
    ranges[v] = Range(min, extent);
  }

  LowerContext base_;
  const TargetTileOpLowering& hook_;
  std::vector<ScopedRanges*> scopes_;
};

std::map<std::pair<Target::Kind, TileOpKind>, TargetTileOpLowering>& lowering_table() {
  static std::map<std::pair<Target::Kind, TileOpKind>, TargetTileOpLowering> t;
  return t;
}
std::map<Target::Kind, TargetTileOpLowering>& hooks() {
  static std::map<Target::Kind, TargetTileOpLowering> h;
  return h;
}

}  // namespace

PrimFunc lower_tile_ops(const PrimFunc& f, const PassContext& ctx, const TargetTileOpLowering& target_lowering) {
  TileOpLowerer lowerer(ctx, target_lowering);
  Stmt body = lowerer.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

void register_tile_op_lowering(Target::Kind target, TileOpKind op_kind, TargetTileOpLowering lowering) {
  lowering_table()[{target, op_kind}] = std::move(lowering);
  hooks().try_emplace(target, [target](const TileOpNode& op, const LowerContext& ctx) -> Stmt {
    const TileOp* def = find_tile_op(op);
    if (!def) return Stmt();
    auto it = lowering_table().find({target, def->kind()});
    return it == lowering_table().end() ? Stmt() : it->second(op, ctx);
  });
}

const TargetTileOpLowering* find_target_tile_op_lowering(Target::Kind kind) {
  auto it = hooks().find(kind);
  return it == hooks().end() ? nullptr : &it->second;
}

TL_REGISTER_PASS("lower_tile_ops", [](const PrimFunc& f, const PassContext& ctx) {
  const TargetTileOpLowering* hook = find_target_tile_op_lowering(ctx.target.kind);
  return lower_tile_ops(f, ctx, hook ? *hook : TargetTileOpLowering());
});

}  // namespace tl
