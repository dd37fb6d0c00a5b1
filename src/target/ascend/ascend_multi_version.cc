#include "target/ascend/ascend_multi_version.h"

#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "sim/isa.h"
#include "transform/plan_pipeline.h"

namespace tl {

namespace {

std::string loc(const Span& s) { return s.prefix(); }

// Buffers each pipelined loop versions: destinations of GM->on-chip copies in its body that are
// used nowhere else.
class Planner : public IRVisitor {
 public:
  explicit Planner(bool cv_split) : cv_split_(cv_split) {}
  std::map<const ForNode*, std::set<const BufferNode*>> versioned;
  std::map<const BufferNode*, int> uses_outside;  // uses not inside the loop that writes it
  std::map<const BufferNode*, int> total_uses, inside_uses;

 protected:
  void visit_for(const ForNode* f) override {
    if (f->for_kind != ForKind::kPipelined) return IRVisitor::visit_for(f);
    if (current_) throw_error<SyntaxError>(loc(f->span), "T.Pipelined loops cannot be nested");
    int64_t stages = attr_int(f->annotations, "num_stages", 2);
    if (stages < 1) throw_error<SyntaxError>(loc(f->span), "T.Pipelined: num_stages must be at least 1, got ", stages);
    int kinds = 0;
    post_order_visit(f->body, [&](const Stmt& s) {
      auto* op = s.as<TileOpNode>();
      if (!op) return;
      sim::OpClass c;
      try {
        if (is_tile_op(*op, TileOpKind::kGemm)) {
          kinds |= 1;
          return;
        }
        c = sim::classify_tile_op(*op);
      } catch (const Error&) {
        return;
      }
      if (!c.core_neutral) kinds |= c.core == sim::CoreKind::kAIC ? 1 : 2;
      if (is_tile_op(*op, TileOpKind::kCopy) && c.cls == sim::InstrClass::kCopy && op->args[0].region.buffer.scope() == MemScope::kGlobal)
        versioned[f].insert(op->args[1].region.buffer.get());
    });
    // With the Developer-mode split, ascend_cross_sync versions the loop's GM workspaces by stage
    // instead (the cube runs up to num_stages iterations ahead of the vector cores).
    if (kinds == 3 && !cv_split_)
      throw_error<NotImplemented>(loc(f->span), "not implemented: a T.Pipelined loop with both cube and vector work "
                                  "(an inter-core pipeline) on target ascend; pipeline the cube loop and the vector "
                                  "loop separately and hand tiles over with T.set_cross_flag / T.wait_cross_flag, or "
                                  "let the compiler split the kernel (TL_ASCEND_AUTO_CV_COMBINE, target \"npuir\")");
    current_ = f;
    IRVisitor::visit_for(f);
    current_ = nullptr;
  }
  void visit_region_use(const Buffer& b) {
    ++total_uses[b.get()];
    if (current_) ++inside_uses[b.get()];
  }
  void visit_tile_op(const TileOpNode* op) override {
    TileOpKind kind;
    if (!tile_op_kind(*op, &kind) || !is_annotation(kind))
      for (auto& a : op->args)
        if (a.is_region()) visit_region_use(a.region.buffer);
    IRVisitor::visit_tile_op(op);
  }
  void visit_load(const BufferLoadNode* l) override {
    visit_region_use(l->buffer);
    IRVisitor::visit_load(l);
  }
  void visit_store(const BufferStoreNode* s) override {
    visit_region_use(s->buffer);
    IRVisitor::visit_store(s);
  }

 private:
  bool cv_split_;
  const ForNode* current_ = nullptr;
};

// Gives the versioned buffers their stage dimension: the allocations here, the accesses inside each
// pipelined loop through the multi-versioning shared with cuda (transform/plan_pipeline.h), at stage
// (k - min) % num_stages.
class Versioner : public StmtMutator {
 public:
  explicit Versioner(const std::map<const BufferNode*, Buffer>& nb) : new_(nb) {}

 protected:
  Stmt mutate_allocate(const AllocateNode* a, const Stmt& s) override {
    Stmt body = mutate(a->body);
    auto it = new_.find(a->buffer.get());
    if (it == new_.end()) return body.same_as(a->body) ? s : make_allocate(a->buffer, body, a->span);
    return make_allocate(it->second, body, a->span);
  }
  Stmt mutate_for(const ForNode* f, const Stmt& s) override {
    if (f->for_kind != ForKind::kPipelined) return StmtMutator::mutate_for(f, s);
    int64_t stages = attr_int(f->annotations, "num_stages", 2);
    Stmt body = rewrite_versions(mutate(f->body), new_, floormod(f->var - f->min, make_int(stages)));
    AttrMap ann = f->annotations;
    ann["ascend_pipelined"] = Attr(true);
    return make_for(f->var, f->min, f->extent, ForKind::kSerial, body, ann, f->span);
  }

 private:
  const std::map<const BufferNode*, Buffer>& new_;
};

}  // namespace

PrimFunc ascend_multi_version(const PrimFunc& f, const PassContext& ctx) {
  Planner p(f.attrs().count("ascend.cv_workspaces") > 0);
  p.visit(f.body());
  if (p.versioned.empty()) return f;
  std::map<const BufferNode*, Buffer> nb;
  std::map<const BufferNode*, Buffer> objs;
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (auto* a = s.as<AllocateNode>()) objs[a->buffer.get()] = a->buffer;
  });
  for (auto& [loop, bufs] : p.versioned) {
    int64_t stages = attr_int(loop->annotations, "num_stages", 2);
    for (auto* b : bufs) {
      if (p.total_uses[b] != p.inside_uses[b] || !objs.count(b) || stages < 2) continue;
      nb[b] = versioned_buffer(objs[b], stages);
    }
  }
  Versioner v(nb);
  Stmt body = v.mutate(f.body());
  return f.with_body(body).with_attr("ascend.pipelined", Attr(true));
}

TL_REGISTER_PASS("ascend_multi_version", ascend_multi_version);

}  // namespace tl
