#include "transform/thread_uniformity.h"

#include "ir/functor.h"

namespace tl {

namespace {

bool is_per_thread(const Buffer& b) { return b.scope() == MemScope::kLocal || b.scope() == MemScope::kLocalVar; }

// Device calls that copy a tile element for element from their source operand(s) into the
// address_of destination: the destination is uniform when every argument is.
bool is_plain_copy(const std::string& op) {
  return op == "cuda.copy_vec" || op == "cuda.copy_cast" || op == "cuda.copy_vec_zfill";
}

// One walk of the kernel body; run until no buffer is added (a buffer read before the write that
// makes it non-uniform, in program order, is seen on the next round).
class UniformityWalk {
 public:
  UniformityWalk(std::set<const VarNode*> vars, std::set<const BufferNode*>* varying_buffers)
      : vars_(std::move(vars)), buffers_(varying_buffers) {}

  bool changed() const { return changed_; }

  void walk(const Stmt& s, bool divergent) {
    if (!s.defined()) return;
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) walk(x, divergent);
    } else if (const auto* a = s.as<AllocateNode>()) {
      walk(a->body, divergent);
    } else if (const auto* at = s.as<AttrStmtNode>()) {
      walk(at->body, divergent);
    } else if (const auto* l = s.as<LetStmtNode>()) {
      if (varying(l->value)) vars_.insert(l->var.get());
      walk(l->body, divergent);
    } else if (const auto* f = s.as<ForNode>()) {
      bool div = divergent || varying(f->min) || varying(f->extent);
      if (div) vars_.insert(f->var.get());
      bool saved_exit = divergent_exit_;
      int saved_depth = loop_if_depth_;
      divergent_exit_ = false;
      loop_if_depth_ = 0;
      walk(f->body, div);
      if (divergent_exit_ && !div) {
        // A break/continue under a thread-dependent condition: the iterations a thread runs, and so
        // everything the body writes, depend on the thread.
        vars_.insert(f->var.get());
        walk(f->body, true);
      }
      divergent_exit_ = saved_exit;
      loop_if_depth_ = saved_depth;
    } else if (const auto* i = s.as<IfThenElseNode>()) {
      bool div = varying(i->cond);
      loop_if_depth_ += div ? 1 : 0;
      walk(i->then_case, divergent || div);
      walk(i->else_case, divergent || div);
      loop_if_depth_ -= div ? 1 : 0;
    } else if (s.as<LoopControlNode>()) {
      if (loop_if_depth_ > 0) divergent_exit_ = true;
    } else if (const auto* st = s.as<BufferStoreNode>()) {
      if (is_per_thread(st->buffer)) {
        bool v = divergent || varying(st->value);
        for (const Expr& i : st->indices) v = v || varying(i);
        if (v) mark(st->buffer.get());
      }
    } else if (const auto* ev = s.as<EvaluateNode>()) {
      calls(ev->value, divergent);
    } else if (const auto* k = s.as<KernelLaunchNode>()) {
      walk(k->body, divergent);
    } else if (const auto* t = s.as<TileOpNode>()) {
      // Not expected after lowering; a tile op writing a per-thread buffer makes it non-uniform.
      for (const auto& a : t->args)
        if (a.is_region() && is_per_thread(a.region.buffer)) mark(a.region.buffer.get());
    }
  }

  // True when `e` may have different values in different threads.
  bool varying(const Expr& e) const {
    bool v = false;
    if (!e.defined()) return false;
    for_each_subexpr(e, [&](const Expr& x) {
      if (v) return;
      if (const auto* var = x.as<VarNode>()) {
        v = vars_.count(var) != 0;
      } else if (const auto* l = x.as<BufferLoadNode>()) {
        v = is_per_thread(l->buffer) && buffers_->count(l->buffer.get()) != 0;
      } else if (const auto* c = x.as<CallNode>()) {
        v = c->op.find("atomic") != std::string::npos;
      }
    });
    return v;
  }

 private:
  void mark(const BufferNode* b) {
    if (buffers_->insert(b).second) changed_ = true;
  }

  // Per-thread buffers written through cuda.address_of operands of the calls in `e`.
  void calls(const Expr& e, bool divergent) {
    for_each_subexpr(e, [&](const Expr& x) {
      const auto* c = x.as<CallNode>();
      if (!c) return;
      std::vector<const BufferNode*> dests;
      bool other_varying = false;
      for (const Expr& a : c->args) {
        const auto* ad = a.as<CallNode>();
        const auto* l = ad && ad->op == "cuda.address_of" && !ad->args.empty() ? ad->args[0].as<BufferLoadNode>()
                                                                                 : nullptr;
        int64_t mode = 3;
        if (l && ad->args.size() > 1) is_const_int(ad->args[1], &mode);
        if (l && (mode & 2) && is_per_thread(l->buffer)) {
          dests.push_back(l->buffer.get());
          for (const Expr& i : l->indices) other_varying = other_varying || varying(i);
        } else {
          other_varying = other_varying || varying(a);
        }
      }
      if (dests.empty()) return;
      bool uniform = !divergent && !other_varying && is_plain_copy(c->op);
      if (!uniform)
        for (const BufferNode* b : dests) mark(b);
    });
  }

  std::set<const VarNode*> vars_;
  std::set<const BufferNode*>* buffers_;
  bool changed_ = false;
  bool divergent_exit_ = false;
  int loop_if_depth_ = 0;  // thread-dependent ifs around the current statement inside the innermost loop
};

}  // namespace

std::set<const BufferNode*> thread_varying_buffers(const Stmt& kernel_body,
                                                   const std::set<const VarNode*>& thread_vars) {
  std::set<const BufferNode*> out;
  for (;;) {
    UniformityWalk w(thread_vars, &out);
    w.walk(kernel_body, false);
    if (!w.changed()) return out;
  }
}

}  // namespace tl
