#include "arith/analyzer.h"

#include "arith/analyzer_impl.h"
#include "ir/error.h"
#include "ir/functor.h"

#include <functional>

namespace tl {

// ---------------------------------------------------------------------------------------------
// State changes with undo records.

void AnalyzerImpl::set_var(const Var& v, VarInfo info, bool scoped) {
  auto it = vars_.find(v.get());
  if (scoped) {
    Undo u{Undo::Kind::kVar, v};
    u.had_var = it != vars_.end();
    if (u.had_var) u.prev = it->second;
    u.state = state_;
    u.unscoped = unscoped_changes_;
    undo_.push_back(std::move(u));
  } else {
    ++unscoped_changes_;
  }
  vars_[v.get()] = std::move(info);
  state_ = next_state_++;
}

void AnalyzerImpl::erase_var(const Var& v, bool scoped) {
  auto it = vars_.find(v.get());
  if (it == vars_.end()) return;
  if (scoped) {
    Undo u{Undo::Kind::kVar, v};
    u.had_var = true;
    u.prev = it->second;
    u.state = state_;
    u.unscoped = unscoped_changes_;
    undo_.push_back(std::move(u));
  } else {
    ++unscoped_changes_;
  }
  vars_.erase(it);
  state_ = next_state_++;
}

void AnalyzerImpl::rollback(size_t depth) {
  while (undo_.size() > depth) {
    Undo& u = undo_.back();
    if (u.kind == Undo::Kind::kVar) {
      if (u.had_var) vars_[u.var.get()] = std::move(u.prev);
      else vars_.erase(u.var.get());
    } else {
      facts_.resize(u.facts);
      true_facts_.resize(u.true_facts);
      false_facts_.resize(u.false_facts);
    }
    // The state is what it was before this change, unless an unscoped change happened since.
    state_ = u.unscoped == unscoped_changes_ ? u.state : next_state_++;
    undo_.pop_back();
  }
}

VarInfo AnalyzerImpl::make_range_info(const Var& v, const Range& r) {
  VarInfo info;
  info.var = v;
  info.kind = VarInfo::Kind::kRange;
  info.range = Range(simplify(r.min), simplify(r.extent));
  info.symbolic = !info.range.min.as<IntImmNode>() || !info.range.extent.as<IntImmNode>();
  if (v.dtype().is_integer() && info.range.min.dtype().is_integer() && info.range.extent.dtype().is_integer()) {
    Expr last = simplify(make_binary(BinOp::kSub, make_binary(BinOp::kAdd, info.range.min, info.range.extent), make_int(1, info.range.min.dtype())));
    int64_t lo = bound(info.range.min).min_value;
    int64_t hi = bound(last).max_value;
    // An empty range (the loop never runs) makes the binding vacuous; keep a valid interval.
    if (hi < lo) hi = lo;
    info.bound = bound_intersect({lo, hi}, ConstIntBound::of_dtype(v.dtype()));
  }
  return info;
}

VarInfo AnalyzerImpl::make_value_info(const Var& v, const Expr& value) {
  VarInfo info;
  info.var = v;
  info.kind = VarInfo::Kind::kValue;
  info.value = simplify(value);
  info.symbolic = !info.value.as<IntImmNode>();
  if (v.dtype().is_integer() || v.dtype().is_bool()) info.bound = bound_intersect(bound(info.value), ConstIntBound::of_dtype(v.dtype()));
  return info;
}

// ---------------------------------------------------------------------------------------------
// Assumptions. A condition is split into conjuncts; comparisons of index expressions become
// linear facts `d <= 0`, anything else a known-true (or known-false) expression.

namespace {

struct FactAdder {
  AnalyzerImpl& an;

  void add_true(const Expr& c) {
    int64_t v;
    if (is_const_int(c, &v)) return;  // true adds nothing; false makes the scope unreachable
    if (auto* b = c.as<BinaryNode>()) {
      if (b->op == BinOp::kAnd) {
        add_true(b->a);
        add_true(b->b);
        return;
      }
      if (binop_is_compare(b->op) && is_index_type(b->a.dtype()) && b->op != BinOp::kNE) {
        add_compare(b->op, b->a, b->b);
        return;
      }
    }
    if (auto* u = c.as<UnaryNode>(); u && u->op == UnOp::kNot) {
      add_false(u->a);
      return;
    }
    an.true_facts_.push_back(c);
  }

  void add_false(const Expr& c) {
    int64_t v;
    if (is_const_int(c, &v)) return;
    if (auto* b = c.as<BinaryNode>()) {
      if (b->op == BinOp::kOr) {
        add_false(b->a);
        add_false(b->b);
        return;
      }
      if (binop_is_compare(b->op) && is_index_type(b->a.dtype())) {
        add_true(an.negate(c));
        return;
      }
    }
    if (auto* u = c.as<UnaryNode>(); u && u->op == UnOp::kNot) {
      add_true(u->a);
      return;
    }
    an.false_facts_.push_back(c);
  }

  // a OP b as `d <= 0` facts.
  void add_compare(BinOp op, const Expr& a, const Expr& b) {
    LinearForm la = an.linear(a), lb = an.linear(b);
    LinearForm a_minus_b = an.lin_.add(la, lb, -1);
    LinearForm b_minus_a = an.lin_.add(lb, la, -1);
    LinearForm one = an.lin_.constant(1, la.dtype);
    switch (op) {
      case BinOp::kLT: an.facts_.push_back(an.lin_.add(a_minus_b, one)); break;
      case BinOp::kLE: an.facts_.push_back(a_minus_b); break;
      case BinOp::kGT: an.facts_.push_back(an.lin_.add(b_minus_a, one)); break;
      case BinOp::kGE: an.facts_.push_back(b_minus_a); break;
      case BinOp::kEQ:
        an.facts_.push_back(a_minus_b);
        an.facts_.push_back(b_minus_a);
        break;
      default: break;
    }
  }
};

}  // namespace

void AnalyzerImpl::add_assumption(const Expr& cond, bool simplified) {
  Expr c = simplified ? cond : simplify(cond);
  Undo u{Undo::Kind::kFacts};
  u.facts = facts_.size();
  u.true_facts = true_facts_.size();
  u.false_facts = false_facts_.size();
  u.state = state_;
  u.unscoped = unscoped_changes_;
  undo_.push_back(std::move(u));
  FactAdder{*this}.add_true(c);
  state_ = next_state_++;
}

// ---------------------------------------------------------------------------------------------
// Public API.

Analyzer::Analyzer() : impl_(std::make_unique<AnalyzerImpl>()) {}
Analyzer::~Analyzer() = default;

static void check_var(const Var& v, const char* what) {
  if (!v.defined()) throw_error<ValueError>("Analyzer::", what, ": undefined variable");
}

void Analyzer::bind(const Var& v, const Range& r) {
  check_var(v, "bind");
  impl_->set_var(v, impl_->make_range_info(v, r), false);
}
void Analyzer::bind(const Var& v, const Expr& value) {
  check_var(v, "bind");
  impl_->set_var(v, impl_->make_value_info(v, value), false);
}
void Analyzer::bind(const Var& v, const ConstIntBound& b) {
  check_var(v, "bind");
  VarInfo info;
  info.var = v;
  info.bound = bound_intersect(b, ConstIntBound::of_dtype(v.dtype()));
  impl_->set_var(v, std::move(info), false);
}
void Analyzer::unbind(const Var& v) { impl_->erase_var(v, false); }

Analyzer::Scope::Scope(Scope&& o) noexcept : impl_(o.impl_), undo_depth_(o.undo_depth_) { o.impl_ = nullptr; }
Analyzer::Scope::~Scope() {
  if (impl_) impl_->rollback(undo_depth_);
}

Analyzer::Scope Analyzer::bind_scoped(const Var& v, const Range& r) {
  check_var(v, "bind_scoped");
  size_t depth = impl_->undo_depth();
  impl_->set_var(v, impl_->make_range_info(v, r), true);
  return Scope(impl_.get(), depth);
}
Analyzer::Scope Analyzer::bind_scoped(const Var& v, const Expr& value) {
  check_var(v, "bind_scoped");
  size_t depth = impl_->undo_depth();
  impl_->set_var(v, impl_->make_value_info(v, value), true);
  return Scope(impl_.get(), depth);
}
Analyzer::Scope Analyzer::bind_scoped(const Var& v, const ConstIntBound& b) {
  check_var(v, "bind_scoped");
  size_t depth = impl_->undo_depth();
  VarInfo info;
  info.var = v;
  info.bound = bound_intersect(b, ConstIntBound::of_dtype(v.dtype()));
  impl_->set_var(v, std::move(info), true);
  return Scope(impl_.get(), depth);
}
Analyzer::Scope Analyzer::bind_kernel_scoped(const KernelLaunchNode& k) {
  return bind_kernel_scoped(k, k.grid, k.threads);
}
Analyzer::Scope Analyzer::bind_kernel_scoped(const KernelLaunchNode& k, const std::vector<Expr>& grid,
                                             const std::vector<Expr>& threads) {
  Scope scope(impl_.get(), impl_->undo_depth());  // first, so that a throw undoes what was bound
  for (auto& [v, r] : kernel_index_ranges(k, grid, threads)) {
    check_var(v, "bind_kernel_scoped");
    impl_->set_var(v, impl_->make_range_info(v, r), true);
  }
  return scope;
}
void Analyzer::bind_dynamic_dims(const PrimFunc& f) {
  for (const Var& v : f.dynamic_vars()) bind(v, ConstIntBound(0, ConstIntBound::kPosInf));
}
Analyzer::Scope Analyzer::assume(const Expr& cond) {
  if (!cond.defined()) throw_error<ValueError>("Analyzer::assume: undefined condition");
  size_t depth = impl_->undo_depth();
  impl_->add_assumption(cond);
  return Scope(impl_.get(), depth);
}

Expr Analyzer::simplify(const Expr& e) { return impl_->simplify(e); }

bool Analyzer::can_prove(const Expr& cond) {
  if (!cond.defined()) return false;
  Expr c = impl_->simplify(cond);
  int64_t v;
  return c.dtype().is_bool() && is_const_int(c, &v) && v != 0;
}

bool Analyzer::can_prove_equal(const Expr& a, const Expr& b) {
  if (expr_equal(a, b)) return true;
  if (a.dtype() != b.dtype() || a.dtype().is_float()) return false;
  return can_prove(make_binary(BinOp::kEQ, a, b));
}

ConstIntBound Analyzer::const_int_bound(const Expr& e) {
  if (!e.defined()) return ConstIntBound::everything();
  return impl_->bound(e);
}

IntervalSet Analyzer::interval_of(const Expr& e, const RelaxMap& relax) { return impl_->relax(e, relax); }

std::string IntervalSet::str() const {
  return "[" + (min.defined() ? to_string(min) : std::string("-inf")) + ", " +
         (max.defined() ? to_string(max) : std::string("+inf")) + "]";
}

std::vector<std::pair<Var, Range>> kernel_index_ranges(const KernelLaunchNode& k) {
  return kernel_index_ranges(k, k.grid, k.threads);
}
std::vector<std::pair<Var, Range>> kernel_index_ranges(const KernelLaunchNode& k, const std::vector<Expr>& grid,
                                                       const std::vector<Expr>& threads) {
  std::vector<std::pair<Var, Range>> out;
  out.reserve(grid.size() + threads.size());
  for (size_t i = 0; i < grid.size(); ++i) out.emplace_back(k.block_vars[i], Range(make_int(0, grid[i].dtype()), grid[i]));
  for (size_t i = 0; i < threads.size(); ++i)
    out.emplace_back(k.thread_vars[i], Range(make_int(0, threads[i].dtype()), threads[i]));
  return out;
}

}  // namespace tl

namespace tl {

ConstIntBound const_int_bound_over(const Expr& e, const std::map<Var, Range, VarLess>& ranges) {
  Analyzer an;
  // Bind each variable after the variables of the map its range uses (0: not yet, 1: in progress,
  // 2: bound; a cycle binds what it can).
  std::map<const VarNode*, int> state;
  std::function<void(const Var&, const Range&)> bind = [&](const Var& v, const Range& r) {
    int& s = state[v.get()];
    if (s) return;
    s = 1;
    for (const Expr* x : {&r.min, &r.extent})
      for_each_subexpr(*x, [&](const Expr& y) {
        if (!y.as<VarNode>()) return;
        auto it = ranges.find(Var(std::static_pointer_cast<const VarNode>(y.node())));
        if (it != ranges.end()) bind(it->first, it->second);
      });
    // [lower bound of min, upper bound of min + upper bound of extent - 1]: constant bounds only (no
    // simplification of the range: this runs per query on the lowering's hot path).
    if (v.dtype().is_integer()) {
      ConstIntBound mn = an.const_int_bound(r.min), ext = an.const_int_bound(r.extent);
      ConstIntBound b(mn.min_value, bound_add(ConstIntBound::point(mn.max_value),
                                              bound_add(ConstIntBound::point(ext.max_value), ConstIntBound::point(-1)))
                                        .max_value);
      if (!mn.has_upper() || !ext.has_upper()) b.max_value = ConstIntBound::kPosInf;
      if (b.max_value < b.min_value) b.max_value = b.min_value;  // an empty range: keep a valid interval
      an.bind(v, b);
    }
    state[v.get()] = 2;
  };
  // Only the variables `e` reaches (directly or through ranges) matter.
  for_each_subexpr(e, [&](const Expr& y) {
    if (!y.as<VarNode>()) return;
    auto it = ranges.find(Var(std::static_pointer_cast<const VarNode>(y.node())));
    if (it != ranges.end()) bind(it->first, it->second);
  });
  return an.const_int_bound(e);
}

}  // namespace tl
