#include "target/ascend/ascend_sync_analysis.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "ir/eval.h"
#include "sim/isa.h"
#include "sim/program.h"

namespace tl::ascend_sync {

using sim::Mem;
using sim::Pipe;
constexpr int kP = sim::kNumPipes;

// ---------------------------------------------------------------------------------------------
// Facts and evaluation

KernelFacts collect_facts(const PrimFunc& f, const sim::MachineModel& model) {
  KernelFacts k;
  k.model = &model;
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (auto* op = s.as<TileOpNode>(); op && is_tile_op(*op, TileOpKind::kAnnotateAddress) && op->args.size() >= 2 &&
                                       op->args[0].is_region() && op->args[1].is_expr()) {
      int64_t v;
      if (is_const_int(op->args[1].expr, &v)) k.address[op->args[0].region.buffer.get()] = v;
    }
    if (auto* l = s.as<LetStmtNode>()) k.lets[l->var.get()] = l->value;
  });
  return k;
}

bool eval_with(const Expr& e, const std::map<const VarNode*, int64_t>& vals, const KernelFacts& facts, int64_t* out) {
  // The one int64 evaluator (ir/eval.h); a variable without a value is computed from its let, if any.
  std::function<bool(const VarNode*, int64_t*)> lookup = [&](const VarNode* v, int64_t* val) {
    auto it = vals.find(v);
    if (it != vals.end()) return (*val = it->second, true);
    auto lt = facts.lets.find(v);
    return lt != facts.lets.end() && eval_int(lt->second, lookup, val) == IntEval::kOk;
  };
  return eval_int(e, lookup, out) == IntEval::kOk;
}

// ---------------------------------------------------------------------------------------------
// Tree construction

namespace {

int pipe_core(Pipe p) {
  if (p == Pipe::kMTE1 || p == Pipe::kM || p == Pipe::kFIX) return 0;
  if (p == Pipe::kV || p == Pipe::kMTE3) return 1;
  return -1;
}

int max_modulus(const Stmt& body, const Var& v) {
  int m = 0;
  for_each_expr(body, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      auto* b = x.as<BinaryNode>();
      if (!b || (b->op != BinOp::kFloorMod && b->op != BinOp::kMod)) return;
      int64_t c;
      if (!is_const_int(b->b, &c) || c < 2 || c > 8) return;
      bool uses = false;
      for_each_subexpr(b->a, [&](const Expr& y) { uses |= y.same_as(v); });
      if (uses) m = std::max<int>(m, static_cast<int>(c));
    });
  });
  return m;
}

class TreeBuilder {
 public:
  TreeBuilder(sim::CoreKind kind, const KernelFacts& facts, const std::set<const StmtNode*>& inserted)
      : kind_(static_cast<int>(kind)), facts_(facts), inserted_(inserted) {}

  std::unique_ptr<SNode> build(const Stmt& body) {
    auto root = std::make_unique<SNode>();
    root->kind = SNode::kSeq;
    root->stmt = body.get();
    add(root.get(), body);
    return root;
  }

 private:
  AccessT access(const BufferRegion& r, bool write) {
    AccessT a;
    a.buffer = r.buffer;
    a.region = r.region;
    a.write = write;
    if (!sim::mem_of_scope(r.buffer.scope(), &a.mem)) a.mem = Mem::kGM;
    if (a.mem != Mem::kGM) {
      auto it = facts_.address.find(r.buffer.get());
      a.addr = it == facts_.address.end() ? -1 : it->second;
      a.bytes = sim::buffer_footprint(r.buffer, a.mem, *facts_.model);
    }
    return a;
  }
  bool is_memory(const Buffer& b) {
    Mem m;
    return sim::mem_of_scope(b.scope(), &m);
  }
  // Scalar loads of memory in `e`: a leaf on pipe S before the statement that evaluates them.
  void scalar_reads(SNode* parent, const Expr& e, const Stmt& anchor, bool operand = false) {
    if (!e.defined()) return;
    std::vector<AccessT> acc;
    for_each_subexpr(e, [&](const Expr& x) {
      auto* l = x.as<BufferLoadNode>();
      if (!l || !is_memory(l->buffer) || !owned(l->buffer)) return;
      std::vector<Range> rr;
      for (auto& i : l->indices) rr.emplace_back(i, make_int(1));
      acc.push_back(access(BufferRegion(l->buffer, l->indices.size() == l->buffer.ndim() ? rr : std::vector<Range>{}),
                           false));
    });
    if (acc.empty()) return;
    SNode* n = leaf(parent, anchor);
    n->pipe = Pipe::kS;
    n->operand = operand;
    n->accesses = std::move(acc);
  }
  bool owned(const Buffer& b) {
    Mem m;
    if (!sim::mem_of_scope(b.scope(), &m) || m == Mem::kGM) return true;
    return static_cast<int>(sim::mem_owner(m)) == kind_;
  }
  SNode* leaf(SNode* parent, const Stmt& anchor) {
    auto n = std::make_unique<SNode>();
    n->kind = SNode::kLeaf;
    n->stmt = anchor.get();
    n->in_scope = scope_;
    n->inserted = inserted_.count(anchor.get()) != 0;
    parent->children.push_back(std::move(n));
    return parent->children.back().get();
  }
  SNode* child(SNode* parent, SNode::Kind k, const Stmt& anchor) {
    auto n = std::make_unique<SNode>();
    n->kind = k;
    n->stmt = anchor.get();
    n->in_scope = scope_;
    parent->children.push_back(std::move(n));
    return parent->children.back().get();
  }

  void add(SNode* seq, const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (auto& c : s.as<SeqStmtNode>()->seq) add(seq, c);
        return;
      case StmtKind::kLet:
        scalar_reads(seq, s.as<LetStmtNode>()->value, s);
        add(seq, s.as<LetStmtNode>()->body);
        return;
      case StmtKind::kAllocate: add(seq, s.as<AllocateNode>()->body); return;
      case StmtKind::kKernel: add(seq, s.as<KernelLaunchNode>()->body); return;
      case StmtKind::kAttr: {
        auto* a = s.as<AttrStmtNode>();
        if (a->key == "scope") {
          int want = a->value.kind() == Attr::kStr && a->value.as_str() == "C" ? 0 : 1;
          if (want != kind_) return;
          bool saved = scope_;
          scope_ = true;
          add(seq, a->body);
          scope_ = saved;
          return;
        }
        add(seq, a->body);
        return;
      }
      case StmtKind::kFor: {
        auto* f = s.as<ForNode>();
        scalar_reads(seq, f->min, s);
        scalar_reads(seq, f->extent, s);
        SNode* loop = child(seq, SNode::kLoop, s);
        loop->var = f->var;
        loop->min = f->min;
        int64_t ext;
        loop->extent = is_const_int(f->extent, &ext) ? ext : -1;
        int mod = max_modulus(f->body, f->var);
        loop->unroll = std::min(4, std::max(2, mod + 1));
        if (loop->extent >= 0) loop->unroll = static_cast<int>(std::min<int64_t>(loop->unroll, loop->extent));
        SNode* body = child(loop, SNode::kSeq, f->body);
        add(body, f->body);
        return;
      }
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        scalar_reads(seq, n->cond, s);
        SNode* node = child(seq, SNode::kIf, s);
        SNode* t = child(node, SNode::kSeq, n->then_case);
        add(t, n->then_case);
        SNode* e = child(node, SNode::kSeq, n->else_case.defined() ? n->else_case : s);
        add(e, n->else_case);
        return;
      }
      case StmtKind::kStore: {
        auto* st = s.as<BufferStoreNode>();
        if (!is_memory(st->buffer)) {
          scalar_reads(seq, st->value, s);
          return;
        }
        if (!owned(st->buffer)) return;
        scalar_reads(seq, st->value, s);
        for (auto& i : st->indices) scalar_reads(seq, i, s);
        SNode* n = leaf(seq, s);
        n->pipe = Pipe::kS;
        std::vector<Range> rr;
        for (auto& i : st->indices) rr.emplace_back(i, make_int(1));
        n->accesses.push_back(access(BufferRegion(st->buffer, st->indices.size() == st->buffer.ndim()
                                                                  ? rr : std::vector<Range>{}),
                                     true));
        return;
      }
      case StmtKind::kEvaluate: {
        auto* c = s.as<EvaluateNode>()->value.as<CallNode>();
        if (!c || c->op.rfind("ascend.", 0) != 0) {
          scalar_reads(seq, s.as<EvaluateNode>()->value, s);
          return;
        }
        auto pipe_at = [&](size_t i) {
          Pipe p = Pipe::kS;
          if (i < c->args.size())
            if (auto* str = c->args[i].as<StringImmNode>()) sim::parse_pipe(str->value, &p);
          return p;
        };
        auto here = [&](std::initializer_list<Pipe> ps) {
          if (scope_) return true;
          int owner = -1;
          for (Pipe p : ps)
            if (pipe_core(p) >= 0) owner = pipe_core(p);
          return owner < 0 || owner == kind_;
        };
        SNode* n = nullptr;
        if (c->op == "ascend.set_flag" || c->op == "ascend.wait_flag") {
          Pipe a = pipe_at(0), b = pipe_at(1);
          if (!here({a, b})) return;
          n = leaf(seq, s);
          n->leaf = c->op == "ascend.set_flag" ? LeafKind::kSetFlag : LeafKind::kWaitFlag;
          n->src = a;
          n->dst = b;
          n->id = c->args.size() > 2 ? c->args[2] : Expr();
        } else if (c->op == "ascend.pipe_barrier") {
          Pipe a = pipe_at(0);
          if (!here({a})) return;
          n = leaf(seq, s);
          n->leaf = LeafKind::kBarrier;
          n->pipe = a;
        } else if (c->op == "ascend.barrier_all" || c->op == "ascend.sync_all") {
          n = leaf(seq, s);
          n->leaf = LeafKind::kBarrierAll;
        } else {
          n = leaf(seq, s);
          n->leaf = LeafKind::kOther;
        }
        return;
      }
      case StmtKind::kTileOp: {
        auto* op = s.as<TileOpNode>();
        sim::OpClass cls = sim::classify_tile_op(*op);
        if (cls.cls == sim::InstrClass::kMeta) return;
        if (!cls.core_neutral && static_cast<int>(cls.core) != kind_) return;
        if (cls.core_neutral && !scope_ && kind_ == 1) return;  // debug ops on GM run on the cube core
        for (auto& a : op->args)
          if (a.is_expr()) scalar_reads(seq, a.expr, s, /*operand=*/true);
        SNode* n = leaf(seq, s);
        n->pipe = cls.pipe;
        sim::OpAccess acc = sim::tile_op_access(*op);
        // Reads first; a read-modify-write region appears as a write.
        auto same_region = [](const BufferRegion& a, const BufferRegion& b) {
          if (!a.buffer.same_as(b.buffer) || a.region.size() != b.region.size()) return false;
          for (size_t i = 0; i < a.region.size(); ++i)
            if (to_string(a.region[i].min) != to_string(b.region[i].min) ||
                to_string(a.region[i].extent) != to_string(b.region[i].extent))
              return false;
          return true;
        };
        for (auto& r : acc.reads) {
          bool also_written = false;
          for (auto& w : acc.writes) also_written |= same_region(w, r);
          if (!also_written) n->accesses.push_back(access(r, false));
        }
        for (auto& w : acc.writes) n->accesses.push_back(access(w, true));
        return;
      }
      case StmtKind::kLoopControl: return;
    }
  }

  int kind_;
  const KernelFacts& facts_;
  const std::set<const StmtNode*>& inserted_;
  bool scope_ = false;
};

}  // namespace

std::unique_ptr<SNode> build_tree(const PrimFunc& f, sim::CoreKind kind, const KernelFacts& facts,
                                  const std::set<const StmtNode*>& inserted) {
  return TreeBuilder(kind, facts, inserted).build(f.body());
}

}  // namespace tl::ascend_sync
