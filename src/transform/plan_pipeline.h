// plan_pipeline: the analysis half of software pipelining (inject_pipeline.h is the rewrite).
//
// For a T.Pipelined(n, num_stages=S) loop, decides which statements of the body are *producers*:
// tile-level copies from a global tensor into a whole shared buffer whose source depends only on
// the loop variable, values defined outside the loop and elements of global tensors the loop does
// not write (e.g. a paged cache's block table). Producers of iteration k + S - 1 are issued
// (asynchronously) while iteration k computes, so their destination buffers get S versions.
// A copy stays in place (synchronous) when moving it would change the program: its buffer is used
// outside the loop or before the copy in the body, something else writes it, or its source reads
// a loop-local value or a tensor the loop writes.
#pragma once

#include <map>
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

// Buffers a statement accesses (loads, stores, tile-op regions), added to `out`.
void collect_buffer_uses(const Stmt& s, std::set<const BufferNode*>* out);
// Buffers accessed anywhere in `root` outside `loop`.
std::set<const BufferNode*> buffers_used_outside(const Stmt& root, const ForNode* loop);
// Multi-versioning of buffers across pipeline stages, shared by cuda (inject_pipeline) and ascend
// (ascend_multi_version): `stages` copies of `b` behind a leading stage dimension.
Buffer versioned_buffer(const Buffer& b, int64_t stages);
// Replaces every access of a buffer in `versions` (the plan's destination buffers) by an access of
// its versioned buffer (a leading stage dimension) at stage `stage`: loads, stores and tile-op regions.
Stmt rewrite_versions(const Stmt& s, const std::map<const BufferNode*, Buffer>& versions, const Expr& stage);
// The producer copy `s` marked {async} (cuda: cp.async).
Stmt mark_async(const Stmt& s);
// The one T.gemm of a pipelined loop body that may stay in flight across iterations (sm_90a
// wgmma): both operands are stages of the loop's producers, its accumulator is touched by nothing
// else in the body, f16/bf16 operands with float accumulators (the types wgmma takes here; layout
// inference still decides, and a GEMM that ends on mma.sync is synchronous anyway). nullptr if none.
const TileOpNode* async_mma_candidate(const std::vector<BodyItem>& items, const std::set<size_t>& producers,
                                      const std::vector<Buffer>& versioned);

}  // namespace tl
