#include "target/ascend/ascend_liveness.h"

#include <algorithm>
#include <map>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "sim/isa.h"
#include "sim/program.h"

namespace tl {

namespace {

struct Loop {
  int64_t start = 0, end = 0;
};

class LivenessWalker {
 public:
  void walk(const Stmt& s) {
    if (!s.defined()) return;
    int64_t pos = ++pos_;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (auto& c : s.as<SeqStmtNode>()->seq) walk(c);
        return;
      case StmtKind::kAllocate: {
        auto* a = s.as<AllocateNode>();
        Info& in = info_[a->buffer];
        in.buffer = a->buffer;
        in.alloc_depth = stack_.size();
        in.order = static_cast<int>(order_.size());
        in.alloc_pos = pos;
        order_.push_back(a->buffer);
        walk(a->body);
        return;
      }
      case StmtKind::kFor: {
        auto* f = s.as<ForNode>();
        exprs(f->min);
        exprs(f->extent);
        int id = static_cast<int>(loops_.size());
        loops_.push_back({pos, 0});
        stack_.push_back(id);
        walk(f->body);
        stack_.pop_back();
        loops_[id].end = ++pos_;
        return;
      }
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        exprs(n->cond);
        walk(n->then_case);
        walk(n->else_case);
        return;
      }
      case StmtKind::kLet:
        exprs(s.as<LetStmtNode>()->value);
        walk(s.as<LetStmtNode>()->body);
        return;
      case StmtKind::kAttr: walk(s.as<AttrStmtNode>()->body); return;
      case StmtKind::kKernel: walk(s.as<KernelLaunchNode>()->body); return;
      case StmtKind::kStore: {
        auto* st = s.as<BufferStoreNode>();
        use(st->buffer, pos);
        for (auto& i : st->indices) exprs(i);
        exprs(st->value);
        return;
      }
      case StmtKind::kEvaluate: exprs(s.as<EvaluateNode>()->value); return;
      case StmtKind::kTileOp: {
        auto* op = s.as<TileOpNode>();
        if (is_tile_op(*op, TileOpKind::kAnnotateAddress)) {
          if (op->args.size() >= 2 && op->args[0].is_region() && op->args[1].is_expr())
            pinned_[op->args[0].region.buffer] = get_const_int(op->args[1].expr, "T.annotate_address offset");
          return;
        }
        if (is_tile_op(*op, TileOpKind::kAnnotateLayout)) return;
        for (auto& a : op->args) {
          if (a.is_region()) {
            use(a.region.buffer, pos);
            for (auto& r : a.region.region) {
              exprs(r.min);
              exprs(r.extent);
            }
          } else {
            exprs(a.expr);
          }
        }
        for (auto& [k, v] : op->attrs)
          if (v.kind() == Attr::kExpr) exprs(v.as_expr());
        return;
      }
      case StmtKind::kLoopControl: return;
    }
  }

  std::vector<BufferLife> result(const sim::MachineModel& model) {
    std::vector<BufferLife> out;
    for (auto& b : order_) {
      Info& in = info_[b];
      sim::Mem mem;
      if (!sim::mem_of_scope(b.scope(), &mem) || mem == sim::Mem::kGM) continue;
      BufferLife l;
      l.buffer = b;
      l.mem = mem;
      l.bytes = sim::buffer_footprint(b, mem, model);
      l.order = in.order;
      auto p = pinned_.find(b);
      if (p != pinned_.end()) l.pinned = p->second;
      if (in.uses.empty()) {
        l.first = l.last = in.alloc_pos;
        l.used = false;
      } else {
        l.first = INT64_MAX;
        l.last = INT64_MIN;
        for (auto& u : in.uses) {
          l.first = std::min(l.first, u.pos);
          l.last = std::max(l.last, u.pos);
          // Loops entered after the allocation keep the buffer alive across their iterations.
          for (size_t d = in.alloc_depth; d < u.loops.size(); ++d) {
            l.first = std::min(l.first, loops_[u.loops[d]].start);
            l.last = std::max(l.last, loops_[u.loops[d]].end);
          }
        }
      }
      out.push_back(l);
    }
    return out;
  }

 private:
  struct UseAt {
    int64_t pos;
    std::vector<int> loops;
  };
  struct Info {
    Buffer buffer;
    size_t alloc_depth = 0;
    int64_t alloc_pos = 0;
    int order = 0;
    std::vector<UseAt> uses;
  };
  void use(const Buffer& b, int64_t pos) {
    auto it = info_.find(b);
    if (it == info_.end()) return;  // parameters and locals
    it->second.uses.push_back({pos, stack_});
  }
  void exprs(const Expr& e) {
    if (!e.defined()) return;
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) use(l->buffer, pos_);
    });
  }

  int64_t pos_ = 0;
  std::vector<Loop> loops_;
  std::vector<int> stack_;
  std::map<Buffer, Info, BufferLess> info_;
  std::map<Buffer, int64_t, BufferLess> pinned_;
  std::vector<Buffer> order_;
};

}  // namespace

std::vector<BufferLife> analyze_ascend_liveness(const PrimFunc& f, const sim::MachineModel& model) {
  LivenessWalker w;
  w.walk(f.body());
  return w.result(model);
}

}  // namespace tl
