// Structural comparison of expressions: a deterministic total order (used to sort the terms of
// canonical forms) and structural equality (used to merge like terms).
//
// Two expressions compare equal only when they provably denote the same value: same structure,
// the same variables and buffers (identity, not names), and no call with side effects
// (a `tl.*` builtin or anything outside the pure math list is never equal to another node).
#pragma once

#include <string>
#include <unordered_map>

#include "ir/buffer.h"

namespace tl {

// True for the side-effect-free math builtins (exp, sqrt, floor, ...; docs/TILE_OPS.md).
bool is_pure_call(const std::string& op);
// True when evaluating `e` has no side effect (no impure call inside).
bool is_pure_expr(const Expr& e);

// Structural equality (see above). Cheap when the nodes are shared.
bool expr_equal(const Expr& a, const Expr& b);

// A deterministic total order. Variables order by name; distinct variables (or buffers, or
// impure calls) that look the same are ordered by the first time this object saw them, so the
// order never depends on pointer values.
class ExprOrder {
 public:
  // <0, 0, >0 like strcmp; 0 exactly when expr_equal(a, b).
  int compare(const Expr& a, const Expr& b);
  bool less(const Expr& a, const Expr& b) { return compare(a, b) < 0; }

 private:
  // Sequence numbers in order of first sight; the handles keep the nodes alive so an address is
  // never reused for another node while it is registered.
  uint64_t seq_of(const Expr& e);
  uint64_t seq_of(const Buffer& b);
  int compare_buffers(const Buffer& a, const Buffer& b);

  std::unordered_map<const ExprNode*, std::pair<Expr, uint64_t>> expr_seq_;
  std::unordered_map<const BufferNode*, std::pair<Buffer, uint64_t>> buffer_seq_;
  uint64_t next_seq_ = 0;
};

}  // namespace tl
