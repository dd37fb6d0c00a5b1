#include "target/ascend/ascend_infer_scope.h"

#include <map>

#include "ir/error.h"
#include "ir/functor.h"
#include "op/tile_ops.h"
#include "sim/isa.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

bool is_gemm(const TileOpNode& op) { return is_tile_op(op, TileOpKind::kGemm); }

bool developer(const Buffer& b) {
  MemScope s = b.scope();
  return s == MemScope::kShared || s == MemScope::kFragment || s == MemScope::kL0;
}

struct Use {
  int gemm_position = -1;     // 0/1/2 as gemm operand A/B/C (first gemm use)
  bool copy_with_l0 = false;  // copy partner is L0A/L0B (or a gemm A/B fragment)
  bool copy_with_l1 = false;  // copy partner is L1 / L0C
  Span cube_site, vector_site;
  std::string cube_what, vector_what;
  bool cube() const { return gemm_position >= 0 || copy_with_l0 || copy_with_l1; }
  bool vector() const { return !vector_what.empty(); }
};

class UseCollector : public IRVisitor {
 public:
  std::map<Buffer, Use, BufferLess> uses;

  void vector_use(const Buffer& b, const Span& sp, const std::string& what) {
    if (!developer(b)) return;
    Use& u = uses[b];
    if (u.vector_what.empty()) {
      u.vector_what = what;
      u.vector_site = sp;
    }
  }
  void cube_use(Use& u, const Span& sp, const std::string& what) {
    if (u.cube_what.empty()) {
      u.cube_what = what;
      u.cube_site = sp;
    }
  }

 protected:
  void visit_tile_op(const TileOpNode* op) override {
    if (is_tile_op(*op, TileOpKind::kAnnotateAddress) || is_tile_op(*op, TileOpKind::kAnnotateLayout)) return;
    std::string what = sim::describe_tile_op(*op);
    if (is_gemm(*op)) {
      for (int i = 0; i < 3 && i < static_cast<int>(op->args.size()); ++i) {
        if (!op->args[i].is_region() || !developer(op->args[i].region.buffer)) continue;
        Use& u = uses[op->args[i].region.buffer];
        if (u.gemm_position < 0) u.gemm_position = i;
        cube_use(u, op->span, what);
      }
      IRVisitor::visit_tile_op(op);
      return;
    }
    if (is_tile_op(*op, TileOpKind::kCopy) && op->args.size() >= 2 && op->args[0].is_region() && op->args[1].is_region()) {
      copies.push_back(op);
      IRVisitor::visit_tile_op(op);
      return;
    }
    for (auto& a : op->args)
      if (a.is_region()) vector_use(a.region.buffer, op->span, what);
    IRVisitor::visit_tile_op(op);
  }
  void visit_store(const BufferStoreNode* s) override {
    vector_use(s->buffer, s->span, "an element store to '" + s->buffer.name() + "'");
    cur_span_ = s->span;
    IRVisitor::visit_store(s);
  }
  void visit_load(const BufferLoadNode* l) override {
    vector_use(l->buffer, cur_span_, "an element load of '" + l->buffer.name() + "'");
    IRVisitor::visit_load(l);
  }
  void visit_for(const ForNode* f) override {
    cur_span_ = f->span;
    IRVisitor::visit_for(f);
  }
  void visit_if(const IfThenElseNode* n) override {
    cur_span_ = n->span;
    IRVisitor::visit_if(n);
  }
  void visit_let(const LetStmtNode* n) override {
    cur_span_ = n->span;
    IRVisitor::visit_let(n);
  }

 public:
  std::vector<const TileOpNode*> copies;

 private:
  Span cur_span_;
};

}  // namespace

bool ascend_cv_combine_enabled(const PassContext& ctx) {
  return ctx.target.npuir || config_bool(ctx.configs, "tl.ascend_auto_cv_combine");
}

PrimFunc ascend_infer_scope(const PrimFunc& f, const PassContext& ctx) {
  UseCollector c;
  c.visit(f.body());
  auto& uses = c.uses;
  // Copies: a partner in a cube memory (or a gemm A/B fragment) makes the other end a cube use; a
  // UB partner makes it a vector use; GM partners say nothing.
  auto l0ab = [&](const Buffer& b) {
    MemScope sc = b.scope();
    if (sc == MemScope::kL0A || sc == MemScope::kL0B) return true;
    if (sc != MemScope::kFragment && sc != MemScope::kL0) return false;
    auto it = uses.find(b);
    return it != uses.end() && (it->second.gemm_position == 0 || it->second.gemm_position == 1);
  };
  for (const TileOpNode* op : c.copies) {
    const Buffer& a = op->args[0].region.buffer;
    const Buffer& b = op->args[1].region.buffer;
    std::string what = sim::describe_tile_op(*op);
    for (int side = 0; side < 2; ++side) {
      const Buffer& self = side == 0 ? a : b;
      const Buffer& other = side == 0 ? b : a;
      if (!developer(self)) continue;
      MemScope os = other.scope();
      if (l0ab(other)) {
        Use& u = uses[self];
        u.copy_with_l0 = true;
        c.cube_use(u, op->span, what);
      } else if (os == MemScope::kL1) {
        // L1 -> L1 is no path: a vector-side buffer copied into L1 is an explicit UB -> L1 transfer.
        Use& u = uses[self];
        if (u.vector()) continue;
        u.copy_with_l1 = true;
        c.cube_use(u, op->span, what);
      } else if (os == MemScope::kUB) {
        // A gemm result copied into UB is an explicit L0C -> UB transfer, not a vector use of it.
        auto it = uses.find(self);
        if (it != uses.end() && it->second.gemm_position >= 0) continue;
        c.vector_use(self, op->span, what);
      }
    }
  }
  bool combine = ascend_cv_combine_enabled(ctx);
  std::map<Buffer, Buffer, BufferLess> bmap;
  auto visit_alloc = [&](const Buffer& b) {
    MemScope s = b.scope();
    if (!developer(b)) return;
    const Use& u = uses[b];
    MemScope t = s;
    if (u.cube() && u.vector()) {
      if (!combine)
        throw_error<SyntaxError>(
            b->span.str(), b->span.defined() ? ": " : "", "the memory of buffer '", b.name(),
            "' is ambiguous: it is used by the cube core (", u.cube_what, " at ", u.cube_site.str(),
            ") and by the vector core (", u.vector_what, " at ", u.vector_site.str(),
            "), which share no memory. Enable pass config TL_ASCEND_AUTO_CV_COMBINE (or compile for target "
            "\"npuir\") to let the compiler split the kernel and move it between the cores through a GM "
            "workspace, or use two buffers (T.alloc_L0C / T.alloc_L1 and T.alloc_ub) with a GM tensor and "
            "cross-core flags between them (Expert mode)");
      // The cube side keeps the buffer; ascend_cv_split gives the vector uses a UB copy.
      t = u.gemm_position == 2 ? MemScope::kL0C
          : (u.gemm_position == 0 || u.gemm_position == 1 || u.copy_with_l0 || s == MemScope::kShared)
              ? MemScope::kL1
              : MemScope::kL0C;
    } else if (u.cube()) {
      if (s == MemScope::kShared) t = MemScope::kL1;
      else t = u.gemm_position == 0 ? MemScope::kL0A : u.gemm_position == 1 ? MemScope::kL0B : MemScope::kL0C;
      if (s == MemScope::kShared && u.gemm_position == 2) t = MemScope::kL0C;
    } else {
      t = s == MemScope::kL0 ? MemScope::kL0C : MemScope::kUB;
    }
    if (t != s) bmap[b] = b.with_scope(t);
  };
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (auto* a = s.as<AllocateNode>()) visit_alloc(a->buffer);
  });
  PrimFunc out = bmap.empty() ? f : f.with_body(substitute_buffers(f.body(), bmap));
  return out.with_attr("ascend.scopes_inferred", Attr(true));
}

TL_REGISTER_PASS("ascend_infer_scope", ascend_infer_scope);

}  // namespace tl
