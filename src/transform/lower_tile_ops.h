// lower_tile_ops: replaces every tile op (copy, gemm, reduce, ...) by its lowering.
#pragma once

#include <functional>

#include "ir/tile_op.h"
#include "transform/pass.h"

namespace tl {

// A target's own lowering of some tile ops. Returns an undefined Stmt for ops it leaves to the
// op's target-neutral loop form (TileOp::lower_loops).
using TargetTileOpLowering = std::function<Stmt(const TileOpNode&, const LowerContext&)>;

// Checks each tile op (TileOp::verify) and replaces it by `target_lowering`'s statement, or else
// by its loop form. The LowerContext handed to both carries the ranges of the block, loop and let
// variables around the op (so bounds guards are emitted only where needed) and whether global
// accesses are guarded (pass config tl.disable_safe_memory_legalize turns it off).
// An op with no lowering for the target raises NotImplemented naming the op and target.
PrimFunc lower_tile_ops(const PrimFunc& f, const PassContext& ctx, const TargetTileOpLowering& target_lowering);

// The table of target lowering hooks: a target registers its lowering of one operator kind
// (`TileOpRegistration`-style, from the target's directory). Registering a kind twice replaces it.
void register_tile_op_lowering(Target::Kind target, TileOpKind op_kind, TargetTileOpLowering lowering);
// The target's hook over all kinds: dispatches each op to the lowering registered for its kind
// (an undefined Stmt for the others); null when the target registered none. Used by the
// target's pipeline and by the by-name pass "lower_tile_ops" (tl-opt).
const TargetTileOpLowering* find_target_tile_op_lowering(Target::Kind target);

}  // namespace tl
