// T.finalize_reducer(reducer): completes a T.alloc_reducer fragment in place. Inside T.Parallel
// every thread combines its iterations' contributions into its own copy of the elements it
// touches (the reducer's layout replicates each element over the threads that share it), so the
// copies hold partial results; finalize combines the copies with the reducer's op (`op`: sum,
// max, min) and leaves the result in every copy. The loop form is nothing: on cpu a block runs
// its T.Parallel iterations one after the other into a single copy.
#include "ir/error.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

void check_finalize_reducer(const TileOpNode& op) {
  check_num_args(op, 1, 1, "T.finalize_reducer(reducer)");
  const BufferRegion& r = region_arg(op, 0, "reducer");
  if (r.buffer.scope() != MemScope::kFragment)
    throw_op_error_type(op, "'" + r.buffer.name() + "' is not a reducer (allocate it with T.alloc_reducer)");
  checked_str_attr(op, "op", {"sum", "max", "min"}, "sum");
}

AccessRegions access_finalize_reducer(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  a.write(op, 0);
  return a;
}

Stmt lower_finalize_reducer(const TileOpNode&, const LowerContext&) { return make_nop(); }

}  // namespace

void FinalizeReducerOp::verify(const TileOpNode& op) const { check_finalize_reducer(op); }
AccessRegions FinalizeReducerOp::effects(const TileOpNode& op) const { return access_finalize_reducer(op); }
Stmt FinalizeReducerOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_finalize_reducer(op, ctx); }

namespace {
TileOpRegistration reg_finalize_reducer(std::make_unique<FinalizeReducerOp>());
}  // namespace

}  // namespace tl
