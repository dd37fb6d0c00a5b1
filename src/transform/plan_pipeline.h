// plan_pipeline: the analysis half of software pipelining (inject_pipeline.h is the rewrite).
//
// For a T.Pipelined(n, num_stages=S) loop, decides which statements of the body are *producers*:
// tile-level copies from a global tensor into a whole shared buffer whose source depends only on
// the loop variable and values defined outside the loop. Producers of iteration k + S - 1 are issued
// (asynchronously) while iteration k computes, so their destination buffers get S versions.
// A copy stays in place (synchronous) when moving it would change the program: its buffer is used
// outside the loop or before the copy in the body, something else writes it, or its source reads
// a loop-local value or a tensor the loop writes.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tl {

// One statement of a loop body, with the let / allocation bindings that scope over the rest.
struct BodyItem {
  Stmt stmt;      // a statement, or
  Var let_var;    // a let binding for the following items, or
  Expr let_value;
  Buffer alloc;   // an allocation for the following items
  Span span;
  bool is_stmt() const { return stmt.defined(); }
};
// Splits a loop body into items (sequences flattened, lets and allocations as binding items).
std::vector<BodyItem> flatten_body(const Stmt& body);
// Rebuilds a statement from items (bindings wrap everything after them).
Stmt rebuild_body(const std::vector<BodyItem>& items);

struct PipelinePlan {
  int num_stages = 1;
  std::vector<size_t> producers;  // item indices, in body order
  std::vector<Buffer> versioned;  // their destination buffers
  std::vector<std::string> notes; // why candidate copies were left in place (verbose output)
};

// `used_outside` holds the buffers accessed anywhere outside this loop.
PipelinePlan plan_pipeline(const ForNode& loop, const std::vector<BodyItem>& items,
                           const std::set<const BufferNode*>& used_outside);

}  // namespace tl
