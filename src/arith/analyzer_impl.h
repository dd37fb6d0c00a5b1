// Internals of the Analyzer, shared by the files that implement it:
//   analyzer.cc        bindings, assumptions, scopes, the public API
//   simplifier.cc      the simplifier's dispatch, memo, linear arithmetic, casts, select, calls
//   rewrite_div.cc     floordiv / floormod / truncdiv / truncmod
//   rewrite_minmax.cc  min / max
//   rewrite_logic.cc   comparisons, and / or / not, known facts
//   bound.cc           constant integer bounds and proofs from them
//   interval.cc        symbolic intervals, relaxation over variables, symbolic proofs
// Not part of the public API: include arith/analyzer.h instead.
#pragma once

#include <unordered_map>
#include <vector>

#include "arith/analyzer.h"
#include "arith/linear_form.h"

namespace tl {

class AnalyzerImpl;

// Rolls the analyzer back to the state it had when the guard was made (exception-safe scopes for
// assumptions made while simplifying).
struct UndoGuard {
  AnalyzerImpl& an;
  size_t depth;
  explicit UndoGuard(AnalyzerImpl& a);
  ~UndoGuard();
  UndoGuard(const UndoGuard&) = delete;
  UndoGuard& operator=(const UndoGuard&) = delete;
};

// Signed integers of 32 or 64 bits: the types of indices, extents and loop variables. Only these
// get linear canonical forms and bound-based rewriting (see docs/ARITH.md for why).
inline bool is_index_type(DataType t) { return t.is_int() && t.bits >= 32 && t.lanes == 1; }

struct VarInfo {
  enum class Kind : uint8_t { kRange, kValue, kBound };
  Var var;
  Kind kind = Kind::kBound;
  Range range;  // kRange: simplified
  Expr value;   // kValue: simplified
  ConstIntBound bound;
  bool symbolic = false;  // the range or value mentions variables: symbolic relaxation may help
};

class AnalyzerImpl {
 public:
  AnalyzerImpl() : lin_(order_) {}

  // ---- state (analyzer.cc)
  void set_var(const Var& v, VarInfo info, bool scoped);
  void erase_var(const Var& v, bool scoped);
  // Always scoped (undone by rollback). `simplified`: cond is already in simplified form.
  void add_assumption(const Expr& cond, bool simplified = false);
  void rollback(size_t depth);
  size_t undo_depth() const { return undo_.size(); }
  const VarInfo* find_var(const VarNode* v) const {
    auto it = vars_.find(v);
    return it == vars_.end() ? nullptr : &it->second;
  }
  VarInfo make_range_info(const Var& v, const Range& r);
  VarInfo make_value_info(const Var& v, const Expr& value);

  // ---- simplifier (simplifier.cc and the rewrite_*.cc files)
  Expr simplify(const Expr& e);
  Expr simplify_uncached(const Expr& e);
  Expr simplify_binary(const BinaryNode* n, const Expr& e);
  Expr rewrite_linear(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_cast(DataType t, const Expr& value);
  Expr rewrite_select(const SelectNode* n, const Expr& e);
  Expr rewrite_call(const CallNode* n, const Expr& e);
  Expr rewrite_div(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_min_max(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_compare(BinOp op, const Expr& a, const Expr& b);
  // Operands not yet simplified: the second one is simplified under the first.
  Expr rewrite_logic(BinOp op, const Expr& a, const Expr& b);
  Expr rewrite_not(const Expr& a);  // `a` simplified
  // Negation of a simplified condition, in simplified form.
  Expr negate(const Expr& cond);
  // `f` with let-bound variables replaced by their values (for decisions, never for output).
  LinearForm inline_lets(const LinearForm& f);
  // true/false when `e` (simplified, bool) is a known fact; undefined otherwise.
  Expr lookup_fact(const Expr& e);
  // Constant folding with the evaluator's semantics; undefined when not foldable.
  Expr fold_binary(BinOp op, const Expr& a, const Expr& b);

  // ---- linear forms
  LinearForm linear(const Expr& e);  // e simplified; cached
  Expr to_expr(const LinearForm& f) { return lin_.to_expr(f); }

  // ---- bounds and proofs (bound.cc)
  ConstIntBound bound(const Expr& e);
  ConstIntBound bound_uncached(const Expr& e);
  ConstIntBound bound_of(const LinearForm& f);
  ConstIntBound tighten_with_facts(const Expr& atom, ConstIntBound b);
  bool prove_le0(const LinearForm& d);  // d <= 0 for all values
  bool prove_nonneg(const Expr& e);     // e simplified, index type
  bool prove_positive(const Expr& e);
  bool prove_le(const Expr& a, const Expr& b);  // a <= b, both simplified

  // ---- intervals (interval.cc)
  using Domain = std::unordered_map<const VarNode*, IntervalSet>;
  // One level: each variable in `dom` is replaced by its interval (no recursion into the
  // interval's own variables).
  IntervalSet eval_interval(const Expr& e, const Domain& dom);
  IntervalSet relax(const Expr& e, const RelaxMap& relax);
  bool prove_le0_symbolic(const LinearForm& d);

  ExprOrder order_;
  LinearOps lin_;

  std::unordered_map<const VarNode*, VarInfo> vars_;
  std::vector<LinearForm> facts_;  // each fact: form <= 0
  std::vector<Expr> true_facts_, false_facts_;

  // State identity for memoization: changes with every binding/assumption, and comes back
  // when a scope ends (the state is then identical to what it was).
  uint64_t state_ = 0;
  uint64_t next_state_ = 1;
  uint64_t unscoped_changes_ = 0;

  struct Undo {
    enum class Kind : uint8_t { kVar, kFacts } kind;
    Var var;
    bool had_var = false;
    VarInfo prev;
    size_t facts = 0, true_facts = 0, false_facts = 0;
    uint64_t state = 0;
    uint64_t unscoped = 0;
  };
  std::vector<Undo> undo_;

  struct Key {
    const void* node;
    uint64_t state;
    bool operator==(const Key& o) const { return node == o.node && state == o.state; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.node) ^ (std::hash<uint64_t>()(k.state) * 0x9e3779b97f4a7c15ULL);
    }
  };
  // The input expression is kept alive so its address cannot be reused while cached.
  std::unordered_map<Key, std::pair<Expr, Expr>, KeyHash> simplify_memo_;
  std::unordered_map<Key, std::pair<Expr, ConstIntBound>, KeyHash> bound_memo_;
  std::unordered_map<const void*, std::pair<Expr, LinearForm>> linear_memo_;

  // > 0 while a symbolic proof runs: nested symbolic proofs are not attempted (termination and
  // speed).
  int symbolic_depth_ = 0;
  // Recursion depth of simplify, to cap the cost of pathological inputs.
  int depth_ = 0;
};

inline UndoGuard::UndoGuard(AnalyzerImpl& a) : an(a), depth(a.undo_depth()) {}
inline UndoGuard::~UndoGuard() { an.rollback(depth); }

}  // namespace tl
