// T.copy(src, dst): element-wise copy between two tiles of the same (squeezed) shape, converting
// to dst's dtype. Out-of-bounds tails of *global* tensors are guarded using the buffer's shape:
// reads outside fill 0, writes outside are dropped (non-divisible sizes, dynamic dimensions).
#include "ir/error.h"
#include "op/op_util.h"

namespace tl {
namespace {

void check_copy(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.copy(src, dst)");
  check_same_shape_tiles(op, 0, "src", 1, "dst");
  for (const TileArg& a : op.args)
    if (a.region.buffer.dtype().is_handle())
      throw_op_error_type(op, "cannot copy buffer '" + a.region.buffer.name() + "' of dtype handle");
}

AccessRegions access_copy(const TileOpNode& op) {
  AccessRegions a;
  a.reads.push_back(op.args[0].region);
  a.writes.push_back(op.args[1].region);
  return a;
}

Stmt lower_copy(const TileOpNode& op, const LowerContext& ctx) {
  const BufferRegion& src = op.args[0].region;
  const BufferRegion& dst = op.args[1].region;
  LoopNest nest = make_loop_nest(common_extents(src, dst), "i");
  std::vector<Expr> src_idx = region_indices(src, nest.indices());
  std::vector<Expr> dst_idx = region_indices(dst, nest.indices());
  Expr value = make_load(src.buffer, src_idx);
  std::vector<Expr> read_guards = global_bounds_guards(src.buffer, src_idx, ctx, &nest);
  if (!read_guards.empty()) value = make_select(conjunction(read_guards), value, make_const(src.buffer.dtype(), 0));
  Stmt store = make_store(dst.buffer, dst_idx, make_cast(dst.buffer.dtype(), value), op.span);
  return nest.wrap(store, ForKind::kParallel, global_bounds_guards(dst.buffer, dst_idx, ctx, &nest));
}

TileOpRegistration reg_copy(TileOpDef{"copy", check_copy, access_copy, lower_copy});

}  // namespace
}  // namespace tl
