// Access analysis: which part of which buffer a statement reads and writes. Pipelining, sync
// insertion (cuda __syncthreads / mbarriers, ascend flags) and memory planning ask it.
//
// A region is a BufferRegion: one [min, min + extent) per buffer dimension, with symbolic
// (simplified) ends. All results over-approximate: every element that may be accessed is inside
// the reported region; elements outside it are never accessed.
//
//   Analyzer an;                       // bind what is known outside `s` (enclosing loops...)
//   AccessRegions acc = collect_access_regions(loop_body, an);
//   for (auto& r : acc.writes) ...     // r.buffer, r.region[d].min / .extent
//
// Layering note: AccessRegions and the tile-op registry come from ir/tile_op.h, the registry
// interface only (no op implementation is included).
#pragma once

#include "arith/analyzer.h"
#include "ir/tile_op.h"

namespace tl {

// The region covered by `region` while every variable in `relax` sweeps its range (ranges may
// depend on other relaxed variables). Variables not in `relax` stay symbolic, simplified with
// what `analyzer` knows. A dimension whose bounds cannot be expressed becomes the whole
// dimension [0, shape[d]).
BufferRegion relax_region(const BufferRegion& region, const RelaxMap& relax, Analyzer& analyzer);

// Whether `r` covers the whole of its buffer: every dimension from 0 over a constant extent equal to
// the buffer's constant shape.
bool whole_buffer(const BufferRegion& r);

// The bounding box of two regions of the same buffer (per dimension: min of the mins, max of the
// ends; `min(...)`/`max(...)` remain when neither side provably dominates).
BufferRegion region_union(const BufferRegion& a, const BufferRegion& b, Analyzer& analyzer);

// Every buffer region read and written by `s`, one bounding box per buffer and access kind, in
// order of first access.
// - Scalar loads/stores (BufferLoad / BufferStore, `tl.atomic_add_scalar`'s destination) inside
//   loops are relaxed over every variable defined inside `s`: loop variables over their ranges,
//   kernel block/thread indices over [0, grid) / [0, threads), let variables over their values.
//   Variables defined outside `s` stay symbolic.
// - Tile ops report their regions through the op registry: find_tile_op(op)->effects(op). An op
//   that is not registered is treated as "region argument 0 is written, every other region
//   argument is read" (the dst-first convention of docs/TILE_OPS.md).
// - Vector indices (ramp) cover their lanes; a flat (single) index into a multi-dimensional buffer
//   reports the whole buffer.
// - Conditions are not used to narrow regions (`if (i < n) A[i]` reports A over all of i's range).
// - Buffers allocated inside `s` are reported too; callers interested in outside buffers only
//   filter them.
// A buffer both read and written appears in both lists.
AccessRegions collect_access_regions(const Stmt& s, Analyzer& analyzer);

}  // namespace tl
