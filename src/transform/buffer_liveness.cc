#include "transform/buffer_liveness.h"

#include <algorithm>
#include <map>

#include "ir/functor.h"
#include "ir/tile_op.h"

namespace tl {

namespace {

class LivenessWalker {
 public:
  explicit LivenessWalker(const LivenessOptions& opts) : opts_(opts) {}

  void walk(const Stmt& s) {
    if (!s.defined()) return;
    int64_t pos = ++pos_;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (auto& c : s.as<SeqStmtNode>()->seq) walk(c);
        return;
      case StmtKind::kAllocate: {
        auto* a = s.as<AllocateNode>();
        if (!opts_.track || opts_.track(a->buffer)) {
          Info& in = info_[a->buffer.get()];
          in.buffer = a->buffer;
          in.alloc_depth = stack_.size();
          in.order = static_cast<int>(order_.size());
          in.alloc_pos = pos;
          order_.push_back(a->buffer.get());
        }
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
      case StmtKind::kAttr: {
        auto* at = s.as<AttrStmtNode>();
        const auto* roles = at->body.as<IfThenElseNode>();
        if (!opts_.concurrent_attr.empty() && at->key == opts_.concurrent_attr && roles && stack_.empty()) {
          exprs(roles->cond);
          int64_t start = pos_;
          walk(roles->then_case);
          int64_t end = pos_;
          pos_ = start;
          walk(roles->else_case);
          pos_ = std::max(pos_, end);
          return;
        }
        walk(at->body);
        return;
      }
      case StmtKind::kKernel: walk(s.as<KernelLaunchNode>()->body); return;
      case StmtKind::kStore: {
        auto* st = s.as<BufferStoreNode>();
        use(st->buffer.get(), pos);
        for (auto& i : st->indices) exprs(i);
        exprs(st->value);
        return;
      }
      case StmtKind::kEvaluate: exprs(s.as<EvaluateNode>()->value); return;
      case StmtKind::kTileOp: {
        auto* op = s.as<TileOpNode>();
        const TileOp* def = find_tile_op(*op);
        if (def && is_annotation(def->kind())) return;
        if (def) {  // the op's memory effects
          AccessRegions eff = def->effects(*op);
          for (auto* list : {&eff.reads, &eff.writes})
            for (auto& r : *list) use(r.buffer.get(), pos);
        }
        for (auto& a : op->args) {
          if (a.is_region()) {
            if (!def) use(a.region.buffer.get(), pos);  // unregistered: every region it names
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

  std::vector<LiveInterval> result() {
    std::vector<LiveInterval> out;
    for (const BufferNode* b : order_) {
      Info& in = info_[b];
      LiveInterval l;
      l.buffer = in.buffer;
      l.order = in.order;
      if (in.uses.empty()) {
        l.first = l.last = in.alloc_pos;
      } else {
        l.used = true;
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
  struct Loop {
    int64_t start = 0, end = 0;
  };
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
  void use(const BufferNode* b, int64_t pos) {
    auto it = info_.find(b);
    if (it == info_.end()) return;  // parameters, untracked buffers
    it->second.uses.push_back({pos, stack_});
  }
  void exprs(const Expr& e) {
    if (!e.defined()) return;
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) use(l->buffer.get(), pos_);
    });
  }

  const LivenessOptions& opts_;
  int64_t pos_ = 0;
  std::vector<Loop> loops_;
  std::vector<int> stack_;
  std::map<const BufferNode*, Info> info_;
  std::vector<const BufferNode*> order_;
};

}  // namespace

std::vector<LiveInterval> buffer_live_intervals(const Stmt& body, const LivenessOptions& opts) {
  LivenessWalker w(opts);
  w.walk(body);
  return w.result();
}

}  // namespace tl
