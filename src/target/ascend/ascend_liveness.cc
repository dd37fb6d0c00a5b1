#include "target/ascend/ascend_liveness.h"

#include <map>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "sim/isa.h"
#include "sim/program.h"
#include "transform/buffer_liveness.h"

namespace tl {

std::vector<BufferLife> analyze_ascend_liveness(const PrimFunc& f, const sim::MachineModel& model) {
  // T.annotate_address pins a buffer at an offset.
  std::map<const BufferNode*, int64_t> pinned;
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* op = s.as<TileOpNode>();
    if (op && is_tile_op(*op, TileOpKind::kAnnotateAddress) && op->args.size() >= 2 && op->args[0].is_region() &&
        op->args[1].is_expr())
      pinned[op->args[0].region.buffer.get()] = get_const_int(op->args[1].expr, "T.annotate_address offset");
  });
  // The shared liveness analysis (transform/buffer_liveness.h) over every allocation; the on-chip
  // ones are kept.
  std::vector<BufferLife> out;
  for (const LiveInterval& li : buffer_live_intervals(f.body())) {
    const Buffer& b = li.buffer;
    sim::Mem mem;
    if (!sim::mem_of_scope(b.scope(), &mem) || mem == sim::Mem::kGM) continue;
    BufferLife l;
    l.buffer = b;
    l.mem = mem;
    l.bytes = sim::buffer_footprint(b, mem, model);
    l.order = li.order;
    auto p = pinned.find(b.get());
    if (p != pinned.end()) l.pinned = p->second;
    l.first = li.first;
    l.last = li.last;
    l.used = li.used;
    out.push_back(l);
  }
  return out;
}

}  // namespace tl
