// The arithmetic analyzer: what is known about integer variables (loop ranges, let values,
// assumed conditions), and the questions passes ask with it: simplify this expression, can this
// condition be proven, what are the constant / symbolic bounds of this expression.
//
//   Analyzer an;
//   auto s = an.bind_scoped(i, Range(0, 128));          // for i in [0, 128)
//   an.can_prove(i < 128);                              // true
//   an.simplify(floordiv(bx * 128 + i, 128));           // bx
//   an.const_int_bound(i * 4 + 3);                      // [3, 511]
//   an.interval_of(k * 32 + j, {{k, Range(0, n)}});     // [j, (n - 1) * 32 + j] (simplified)
//
// Guarantees (docs/ARITH.md has the full list of rules):
// - simplify never changes the value of an expression, assuming (as C does) that signed integer
//   arithmetic on non-constant operands does not overflow. Constant folding follows the
//   evaluator's semantics exactly (arith/eval.h): wrapping integers, floats rounded to their type.
// - can_prove is conservative: true means proven; false means "not proven".
// - Everything is deterministic (no dependence on pointer values) and uses no solver; results are
//   memoized per analyzer state.
// An Analyzer is not thread-safe; use one per pass invocation.
#pragma once

#include <map>
#include <memory>

#include "arith/const_int_bound.h"
#include "arith/interval.h"
#include "ir/buffer.h"
#include "ir/stmt.h"

namespace tl {

class AnalyzerImpl;

class Analyzer {
 public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  // ---- What is known. A later binding of the same variable replaces the earlier one.
  // v ranges over [r.min, r.min + r.extent) (a loop variable, a block/thread index).
  void bind(const Var& v, const Range& r);
  // v equals `value` (a let binding). The simplifier keeps v (it does not substitute the value)
  // but reasons with the value's bounds.
  void bind(const Var& v, const Expr& value);
  // v lies in a constant range (e.g. a dynamic dimension: [0, +inf)).
  void bind(const Var& v, const ConstIntBound& bound);
  void unbind(const Var& v);

  // RAII scope: undoes the bindings/assumptions it made when destroyed. Scopes must end in
  // reverse order of creation (they nest like the IR they follow).
  class Scope {
   public:
    Scope(Scope&& other) noexcept;
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    Scope& operator=(Scope&&) = delete;
    ~Scope();

   private:
    friend class Analyzer;
    Scope(AnalyzerImpl* impl, size_t undo_depth) : impl_(impl), undo_depth_(undo_depth) {}
    AnalyzerImpl* impl_;
    size_t undo_depth_;
  };
  [[nodiscard]] Scope bind_scoped(const Var& v, const Range& r);
  [[nodiscard]] Scope bind_scoped(const Var& v, const Expr& value);
  [[nodiscard]] Scope bind_scoped(const Var& v, const ConstIntBound& bound);
  // A kernel's block indices range over [0, grid[d]) and its thread indices over [0, threads[d])
  // while the scope lives (one scope for all of them). The extents are the kernel's own, or
  // `grid` / `threads` when a pass has rewritten them.
  [[nodiscard]] Scope bind_kernel_scoped(const KernelLaunchNode& kernel);
  [[nodiscard]] Scope bind_kernel_scoped(const KernelLaunchNode& kernel, const std::vector<Expr>& grid,
                                         const std::vector<Expr>& threads);
  // Every dynamic dimension of `f` lies in [0, +inf): a tensor's size is never negative.
  void bind_dynamic_dims(const PrimFunc& f);
  // `cond` (a boolean expression) holds while the scope lives: the then-branch of an if, the
  // true side of a select. Comparisons of index expressions and conjunctions are used for
  // proofs and bounds; any other condition is remembered as a known-true expression.
  [[nodiscard]] Scope assume(const Expr& cond);

  // ---- Questions.
  Expr simplify(const Expr& e);
  // True only when `cond` holds for every value of the variables allowed by what is known.
  bool can_prove(const Expr& cond);
  bool can_prove_equal(const Expr& a, const Expr& b);
  // Bounds of an integer expression (bool: within [0, 1]; floats and handles: everything).
  ConstIntBound const_int_bound(const Expr& e);
  // Symbolic bounds of `e` while each variable in `relax` sweeps its range (ranges may refer
  // to other relaxed variables; inner ones are relaxed first). Variables not in `relax` stay
  // symbolic. The ends are simplified; an end that cannot be bounded is undefined (+-inf).
  IntervalSet interval_of(const Expr& e, const RelaxMap& relax);

 private:
  std::unique_ptr<AnalyzerImpl> impl_;
};

// Constant bounds of `e` while each variable of `ranges` sweeps [min, min + extent); a range may use
// other variables of the map (they are bound first); any other variable ranges over its type. The
// Analyzer's one set of bound rules, for passes that keep their variables in a map (the lowering's
// guard elimination: op_util int_bounds; the cuda lowering: cuda_const_bounds).
ConstIntBound const_int_bound_over(const Expr& e, const std::map<Var, Range, VarLess>& ranges);

// True when `e` is a multiple of `n` for every value of its variables (constants, sums, differences,
// min/max of multiples, products with a factor that supplies n's divisors, shifts); false means
// "not proven". The one divisibility analysis (the cuda lowering's vector widths and TMA boxes).
bool provably_divisible(const Expr& e, int64_t n);

// The ranges of a kernel's indices: block indices [0, grid[d]), then thread indices
// [0, threads[d]) (the extents are `grid` / `threads` when given). What Analyzer::bind_kernel_scoped
// binds; analyses with their own variable map (access regions) use it directly.
std::vector<std::pair<Var, Range>> kernel_index_ranges(const KernelLaunchNode& kernel);
std::vector<std::pair<Var, Range>> kernel_index_ranges(const KernelLaunchNode& kernel, const std::vector<Expr>& grid,
                                                       const std::vector<Expr>& threads);

}  // namespace tl
