// The driver of layout inference (see infer_layout.h): collects the participants, runs the stages
// over the tile operators (each operator's constraints are its TileOp::infer_layout /
// propose_layout, src/op/) and owns the T.Parallel nests, the fragments used outside both, and the
// final check of every nest's accesses.
#include "layout/infer_layout.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"

namespace tl {

namespace {

std::string where(const Span& s) { return s.prefix(); }

// A fragment read or written inside a T.Parallel nest.
struct FragAccess {
  Buffer buffer;
  std::vector<Expr> indices;
  // For an access whose indices are distinct loop variables of the nest (F[i, j], F[j], F[i]):
  // the nest dimension of each index; empty otherwise.
  std::vector<int> dims;
};

struct Nest {
  const ForNode* root = nullptr;
  ParallelNest nest;
  std::vector<FragAccess> accesses;
  int64_t max_elem_bytes = 1;  // widest element the body touches
};

struct Participant {
  const TileOpNode* op = nullptr;  // a tile op, or
  int nest = -1;                   // an index into nests
};

// Collects the participants in program order.
class Collector : public IRVisitor {
 public:
  std::vector<Participant> parts;
  std::vector<Nest> nests;
  std::vector<Buffer> fragments;                    // allocation order
  std::map<Buffer, Span, BufferLess> floating;      // fragments used outside nests and tile ops

 protected:
  void visit_allocate(const AllocateNode* n) override {
    if (is_fragment_buffer(n->buffer)) fragments.push_back(n->buffer);
    IRVisitor::visit_allocate(n);
  }
  void visit_tile_op(const TileOpNode* n) override {
    parts.push_back({n, -1});
    // Scalar arguments may read fragments (fill(x, frag[0])): those are floating reads.
    for (const TileArg& a : n->args)
      if (a.is_expr()) visit(a.expr);
  }
  void visit_for(const ForNode* n) override {
    if (n->for_kind != ForKind::kParallel) return IRVisitor::visit_for(n);
    Nest nest;
    nest.root = n;
    nest.nest = parallel_nest(n);
    collect_nest_accesses(&nest);
    nests.push_back(std::move(nest));
    parts.push_back({nullptr, static_cast<int>(nests.size()) - 1});
    // The extents / min of the outer loop are evaluated outside.
    visit(n->min);
    visit(n->extent);
  }
  // tl.buffer_handle(b[0, ...]) names buffer b as a whole (e.g. the accumulator cuda.wgmma_wait
  // waits for), not an element: no use of its layout.
  void visit_call(const CallNode* n) override {
    if (n->op == "tl.buffer_handle") return;
    IRVisitor::visit_call(n);
  }
  void visit_load(const BufferLoadNode* n) override {
    if (is_fragment_buffer(n->buffer) && !floating.count(n->buffer)) floating[n->buffer] = span_;
    IRVisitor::visit_load(n);
  }
  void visit_store(const BufferStoreNode* n) override {
    if (is_fragment_buffer(n->buffer) && !floating.count(n->buffer)) floating[n->buffer] = n->span;
    IRVisitor::visit_store(n);
  }
 public:
  void visit(const Stmt& s) override {
    Span saved = span_;
    if (s.defined() && s->span.defined()) span_ = s->span;
    IRVisitor::visit(s);
    span_ = saved;
  }
  using IRVisitor::visit;

 private:
  void collect_nest_accesses(Nest* nest) {
    struct Inner : IRVisitor {
      Nest* nest;
      void add(const Buffer& b, const std::vector<Expr>& idx) {
        nest->max_elem_bytes = std::max<int64_t>(nest->max_elem_bytes, b.dtype().element_bytes());
        if (!is_fragment_buffer(b)) return;
        FragAccess a{b, idx, {}};
        std::vector<int> dims;
        for (const Expr& e : idx) {
          const VarNode* v = e.as<VarNode>();
          int d = -1;
          for (size_t k = 0; v && k < nest->nest.vars.size(); ++k)
            if (nest->nest.vars[k].get() == v) d = static_cast<int>(k);
          if (d < 0 || std::find(dims.begin(), dims.end(), d) != dims.end()) {
            dims.clear();
            break;
          }
          dims.push_back(d);
        }
        if (dims.size() == idx.size() && !idx.empty()) {
          bool shapes_match = true;
          for (size_t k = 0; k < dims.size(); ++k) {
            int64_t ext = 0;
            if (!is_const_int(b.shape()[k], &ext) || ext != nest->nest.extents[static_cast<size_t>(dims[k])])
              shapes_match = false;
          }
          if (shapes_match) a.dims = dims;
        }
        nest->accesses.push_back(std::move(a));
      }
      void visit_load(const BufferLoadNode* n) override {
        add(n->buffer, n->indices);
        IRVisitor::visit_load(n);
      }
      void visit_store(const BufferStoreNode* n) override {
        add(n->buffer, n->indices);
        IRVisitor::visit_store(n);
      }
      void visit_for(const ForNode* n) override {
        if (n->for_kind == ForKind::kParallel)
          throw_error<LayoutError>(where(n->span),
                                   "a T.Parallel loop inside the body of another T.Parallel (not directly nested) "
                                   "is not supported on cuda; write the loops as one T.Parallel(...) nest");
        IRVisitor::visit_for(n);
      }
      void visit_tile_op(const TileOpNode* n) override {
        throw_error<LayoutError>(op_error_prefix(*n), "tile ops cannot appear inside a T.Parallel loop");
      }
    } inner;
    inner.nest = nest;
    inner.visit(nest->nest.body);
  }

  Span span_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

LayoutRegion layout_region(const BufferRegion& r) {
  LayoutRegion info;
  info.buffer = r.buffer;
  info.full = true;
  for (size_t d = 0; d < r.region.size(); ++d) {
    int64_t ext = 0, mn = 0, shape = 0;
    bool const_ext = is_const_int(r.region[d].extent, &ext);
    bool const_shape = d < r.buffer.shape().size() && is_const_int(r.buffer.shape()[d], &shape);
    if (!const_ext) {
      info.full = false;
      info.extents.push_back(-1);
      info.dims.push_back(static_cast<int>(d));
      continue;
    }
    if (!(is_const_int(r.region[d].min, &mn) && mn == 0 && const_shape && ext == shape)) info.full = false;
    if (ext != 1) {
      info.extents.push_back(ext);
      info.dims.push_back(static_cast<int>(d));
    }
  }
  return info;
}

// ---- the state the operators see --------------------------------------------------------------

LayoutInference::LayoutInference(int64_t num_threads, const Target& target, bool allow_wgmma)
    : target_(target), allow_wgmma_(allow_wgmma) {
  map_.num_threads = num_threads;
}

const Fragment* LayoutInference::fragment(const Buffer& b) const {
  auto it = map_.fragments.find(b);
  return it == map_.fragments.end() ? nullptr : &it->second;
}

void LayoutInference::set_fragment(const Buffer& b, const Fragment& f, const std::string& who) {
  auto it = map_.fragments.find(b);
  if (it != map_.fragments.end()) {
    if (it->second.same_as(f)) return;
    throw_error<LayoutError>(
        who, " needs fragment '", b.name(), "' in layout ", f.str(), ", but ", origin_[b], " gave it layout ",
        it->second.str(), ". One fragment cannot have two thread layouts: copy it to a shared-memory buffer "
        "(T.alloc_shared) and read it from there, or into a second fragment through shared memory");
  }
  if (f.thread_end() > num_threads())
    throw_error<LayoutError>(who, " needs fragment '", b.name(), "' spread over ", f.num_threads(), " threads",
                             f.thread_offset() ? " from thread " + std::to_string(f.thread_offset()) : std::string(),
                             ", but the kernel has only ", num_threads(),
                             " threads; raise T.Kernel(threads=...) or use smaller tiles");
  std::vector<int64_t> shape = const_shape(b, "fragment");
  if (shape != f.shape())
    throw_error<LayoutError>(who, ": fragment '", b.name(), "' of shape ", shape_str(shape),
                             " cannot take a layout of shape ", shape_str(f.shape()));
  map_.fragments.emplace(b, f);
  origin_[b] = who;
  changed_ = true;
}

bool LayoutInference::set_default_fragment(const TileOpNode& op, int except_arg) {
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (static_cast<int>(i) == except_arg) continue;
    if (!op.args[i].is_region() || !is_fragment_buffer(op.args[i].region.buffer)) continue;
    const Buffer& b = op.args[i].region.buffer;
    if (map_.fragments.count(b)) continue;
    // Vector width from the widest element the op moves (16-byte accesses).
    int64_t bytes = b.dtype().element_bytes();
    for (const TileArg& a : op.args)
      if (a.is_region()) bytes = std::max<int64_t>(bytes, a.region.buffer.dtype().element_bytes());
    int64_t vec = std::max<int64_t>(1, 16 / bytes);
    set_fragment(b, default_fragment(const_shape(b, "fragment"), num_threads(), vec),
                 op_error_prefix(op) + "the default layout");
    return true;
  }
  return false;
}

const Layout* LayoutInference::shared_layout(const Buffer& b) const {
  auto it = map_.shared.find(b);
  return it == map_.shared.end() ? nullptr : &it->second;
}

void LayoutInference::set_shared_layout(const Buffer& b, const Layout& l) { map_.shared[b] = l; }

void LayoutInference::set_gemm_plan(const TileOpNode& op, const GemmPlan& plan) { map_.gemms[&op] = plan; }

// ---- the driver -------------------------------------------------------------------------------

class LayoutSolver {
 public:
  LayoutSolver(const Collector& c, int64_t threads, const Target& target, bool allow_wgmma)
      : c_(c), ctx_(threads, target, allow_wgmma) {}

  LayoutMap run() {
    each_op(LayoutStage::kAnnotate);
    strict();
    for (int round = 0; round < 10000; ++round) {
      propagate();
      if (!free_step()) break;
    }
    // Fragments nobody constrained (only filled, or unused): the default layout.
    for (const Buffer& b : c_.fragments)
      if (!ctx_.map_.fragments.count(b))
        ctx_.set_fragment(b, default_fragment(const_shape(b, "fragment"), ctx_.num_threads(), 1), "default layout");
    for (size_t i = 0; i < c_.nests.size(); ++i) verify_nest(c_.nests[i]);
    return std::move(ctx_.map_);
  }

 private:
  std::string nest_name(const Nest& n) const { return where(n.root->span) + "T.Parallel loop"; }

  void each_op(LayoutStage stage) {
    for (const Participant& p : c_.parts)
      if (p.op)
        if (const TileOp* def = find_tile_op(*p.op)) def->infer_layout(*p.op, ctx_, stage);
  }

  // ---- strict ----------------------------------------------------------------------------
  void strict() {
    for (auto& [b, span] : c_.floating) {
      if (!ctx_.map_.fragments.count(b))
        ctx_.set_fragment(b, make_replicated_fragment(const_shape(b, "fragment"), ctx_.num_threads()),
                          where(span) + "a use outside T.Parallel and tile ops (every thread holds the whole fragment)");
    }
    // The kernel-wide instruction choice: wgmma for all of the kernel's GEMMs, or for none (see
    // infer_layouts). The first refusal ends the vote (its reason is the one reported).
    bool granted = ctx_.allow_wgmma_, proposed = false;
    for (const Participant& p : c_.parts) {
      if (!granted) break;
      const TileOp* def = p.op ? find_tile_op(*p.op) : nullptr;
      if (!def) continue;
      KernelChoice vote = def->propose_layout(*p.op, ctx_);
      if (vote == KernelChoice::kAccept) proposed = true;
      else if (vote == KernelChoice::kRefuse) granted = false;
    }
    ctx_.wgmma_granted_ = granted && proposed;
    each_op(LayoutStage::kStrict);
    if (ctx_.wgmma_granted_)
      for (auto& [b, l] : ctx_.wgmma_layouts_) ctx_.map_.shared[b] = l;
  }

  // ---- propagation ----------------------------------------------------------------------
  void propagate() {
    ctx_.changed_ = true;
    while (ctx_.changed_) {
      ctx_.changed_ = false;
      for (const Participant& p : c_.parts) {
        if (p.op) {
          if (const TileOp* def = find_tile_op(*p.op)) def->infer_layout(*p.op, ctx_, LayoutStage::kPropagate);
        } else {
          propagate_nest(c_.nests[static_cast<size_t>(p.nest)]);
        }
      }
    }
  }

  void propagate_nest(const Nest& n) {
    auto it = ctx_.map_.loops.find(n.root);
    if (it == ctx_.map_.loops.end()) {
      // A fragment indexed by exactly the loop variables gives the nest its layout.
      for (const FragAccess& a : n.accesses) {
        if (a.dims.size() != n.nest.vars.size()) continue;
        auto f = ctx_.map_.fragments.find(a.buffer);
        if (f == ctx_.map_.fragments.end()) continue;
        std::vector<int> order(a.dims.size());
        for (size_t k = 0; k < a.dims.size(); ++k) order[static_cast<size_t>(a.dims[k])] = static_cast<int>(k);
        ctx_.map_.loops[n.root] = f->second.permute(order);
        loop_origin_[n.root] = "fragment '" + a.buffer.name() + "'";
        ctx_.changed_ = true;
        break;
      }
      it = ctx_.map_.loops.find(n.root);
      if (it == ctx_.map_.loops.end()) return;
    }
    for (const FragAccess& a : n.accesses) {
      if (a.dims.empty() || ctx_.map_.fragments.count(a.buffer)) continue;
      ctx_.set_fragment(a.buffer, it->second.project(a.dims), nest_name(n));
    }
  }

  // ---- free choices ---------------------------------------------------------------------
  // Gives the first participant lacking a layout the default one. Returns false when none lacks.
  bool free_step() {
    // First, a nest that broadcasts a fragment whose layout is still open (C[i, j] = A[i] + B[j])
    // and whose full-rank fragments are open too: its default layout decides, and the broadcast
    // fragments follow it (replicated over the threads of the other dimensions). Were the copy
    // filling A to choose first, its layout would spread A over threads the nest does not give
    // A's rows to (TileLang's outer-product puzzle failed so).
    for (const Participant& p : c_.parts) {
      if (p.op) continue;
      const Nest& n = c_.nests[static_cast<size_t>(p.nest)];
      if (ctx_.map_.loops.count(n.root)) continue;
      bool open_broadcast = false, full_known = false;
      for (const FragAccess& a : n.accesses) {
        bool known = ctx_.map_.fragments.count(a.buffer) > 0;
        if (a.dims.size() == n.nest.vars.size()) full_known |= known;
        else if (!a.dims.empty() && !known) open_broadcast = true;
      }
      if (!open_broadcast || full_known) continue;
      // Vectors as wide as the copies would have chosen (16-byte accesses), so fragments filled
      // from global memory keep their vector loads.
      ctx_.map_.loops[n.root] = default_fragment(n.nest.extents, ctx_.num_threads(), std::max<int64_t>(1, 16 / n.max_elem_bytes));
      loop_origin_[n.root] = "the default loop layout (it broadcasts a fragment)";
      return true;
    }
    for (const Participant& p : c_.parts) {
      if (!p.op) {
        const Nest& n = c_.nests[static_cast<size_t>(p.nest)];
        if (ctx_.map_.loops.count(n.root)) continue;
        // Nests that index a fragment fully but whose fragments are all unknown, or nests
        // without fragments: threads walk the iteration space row-major, one element each, so
        // global accesses of consecutive threads are consecutive.
        ctx_.map_.loops[n.root] = default_fragment(n.nest.extents, ctx_.num_threads(), 1);
        loop_origin_[n.root] = "the default loop layout";
        return true;
      }
      if (const TileOp* def = find_tile_op(*p.op))
        if (def->infer_layout(*p.op, ctx_, LayoutStage::kFree)) return true;
    }
    return false;
  }

  // ---- verification ---------------------------------------------------------------------
  void verify_nest(const Nest& n) {
    auto lit = ctx_.map_.loops.find(n.root);
    TL_ICHECK(lit != ctx_.map_.loops.end());
    const Fragment& L = lit->second;
    if (L.thread_end() > ctx_.num_threads())
      throw_error<LayoutError>(nest_name(n), ": its layout ", L.str(), " needs threads up to ", L.thread_end(),
                               ", but the kernel has only ", ctx_.num_threads());
    const int64_t t0 = L.thread_offset();  // slots below are relative to the layout's first thread
    // The loop layout's points, computed once for all accesses (every (thread, register) of the
    // tile: this check dominates the cost of lowering a large attention tile otherwise).
    const size_t rank = n.nest.vars.size();
    std::vector<int64_t> points;   // rank entries per (thread, register); empty when not valid
    std::vector<char> valid;
    std::set<std::string> seen;    // an access checked once (a load and a store of acc[i, j])
    for (const FragAccess& a : n.accesses) {
      auto fit = ctx_.map_.fragments.find(a.buffer);
      TL_ICHECK(fit != ctx_.map_.fragments.end(), "fragment without layout: ", a.buffer.name());
      const Fragment& F = fit->second;
      // Indices that use variables other than the nest's cannot be enumerated here; the lowering
      // indexes the registers with a run-time expression for them.
      bool enumerable = true;
      for (const Expr& e : a.indices)
        for_each_subexpr(e, [&](const Expr& x) {
          if (const VarNode* v = x.as<VarNode>()) {
            bool mine = false;
            for (const Var& lv : n.nest.vars) mine |= lv.get() == v;
            if (!mine) enumerable = false;
          } else if (x.kind() == ExprKind::kBufferLoad || x.kind() == ExprKind::kCall) {
            enumerable = false;
          }
        });
      if (!enumerable) continue;
      std::string key = std::to_string(reinterpret_cast<uintptr_t>(a.buffer.get()));
      for (const Expr& e : a.indices) key += "," + to_string(e);
      if (!seen.insert(key).second) continue;
      const std::vector<int64_t>& fshape = F.shape();
      int64_t checked = 0;
      NestIndexEval at(n.nest.vars, a.indices);
      if (valid.empty()) {
        valid.assign(static_cast<size_t>(L.num_threads() * L.num_regs()), 0);
        points.assign(valid.size() * rank, 0);
        for (int64_t t = 0; t < L.num_threads(); ++t)
          for (int64_t r = 0; r < L.num_regs(); ++r) {
            size_t slot = static_cast<size_t>(t * L.num_regs() + r);
            valid[slot] = L.index_at(t0 + t, r, points.data() + slot * rank);
          }
      }
      std::vector<int64_t> idx(a.indices.size());  // reused: this runs for every (thread, register)
      for (int64_t t = 0; t < L.num_threads(); ++t) {
        for (int64_t r = 0; r < L.num_regs(); ++r) {
          size_t slot = static_cast<size_t>(t * L.num_regs() + r);
          if (!valid[slot]) continue;
          const int64_t* point = points.data() + slot * rank;
          at.eval(point, idx.data());
          bool in_range = idx.size() == fshape.size();
          for (size_t k = 0; in_range && k < idx.size(); ++k) in_range = idx[k] >= 0 && idx[k] < fshape[k];
          if (!in_range) {
            std::ostringstream os;
            os << nest_name(n) << " indexes fragment '" << a.buffer.name() << "' " << shape_str(fshape) << " at (";
            for (size_t k = 0; k < idx.size(); ++k) os << (k ? ", " : "") << idx[k];
            os << "), outside the fragment";
            throw LayoutError(os.str());
          }
          int64_t reg_of_idx = 0;
          if (!F.holds(t0 + t, idx.data(), &reg_of_idx)) {
            std::ostringstream os;
            os << nest_name(n) << ": thread " << t0 + t << " runs the iteration (";
            for (size_t k = 0; k < rank; ++k) os << (k ? ", " : "") << point[k];
            os << ") and needs element (";
            for (size_t k = 0; k < idx.size(); ++k) os << (k ? ", " : "") << idx[k];
            os << ") of fragment '" << a.buffer.name() << "', which that thread does not hold. The loop is laid out "
               << "by " << loop_origin_[n.root] << " as " << L.str() << "; '" << a.buffer.name() << "' has layout "
               << F.str() << " (from " << ctx_.origin_[a.buffer] << "). Copy '" << a.buffer.name()
               << "' to a shared-memory buffer (T.alloc_shared) and read it from there in this loop";
            throw LayoutError(os.str());
          }
          if (++checked > (int64_t(1) << 22)) break;
        }
      }
    }
  }

  const Collector& c_;
  LayoutInference ctx_;
  std::map<const ForNode*, std::string> loop_origin_;
};

std::vector<int64_t> const_shape(const Buffer& b, const char* what) {
  std::vector<int64_t> s;
  for (const Expr& e : b.shape()) {
    int64_t v = 0;
    if (!is_const_int(e, &v) || v <= 0)
      throw_error<LayoutError>(where(b->span), what, " '", b.name(), "' needs a constant shape on target cuda, but ",
                               "dimension ", s.size(), " is ", to_string(e));
    s.push_back(v);
  }
  return s;
}

ParallelNest parallel_nest(const ForNode* root) {
  ParallelNest n;
  const ForNode* f = root;
  while (true) {
    int64_t ext = 0, mn = 0;
    if (!is_const_int(f->extent, &ext) || !is_const_int(f->min, &mn))
      throw_error<LayoutError>(where(f->span), "T.Parallel needs constant extents on target cuda, but loop '",
                               f->var.name(), "' runs over (", to_string(f->min), ", ", to_string(f->extent),
                               "); use a T.serial loop, or a constant tile size with a guard inside");
    if (mn != 0)
      throw_error<LayoutError>(where(f->span), "T.Parallel loop '", f->var.name(), "' must start at 0 on target cuda");
    n.vars.push_back(f->var);
    n.extents.push_back(ext);
    const ForNode* inner = f->body.as<ForNode>();
    if (inner && inner->for_kind == ForKind::kParallel) {
      f = inner;
      continue;
    }
    n.body = f->body;
    break;
  }
  return n;
}

Fragment default_fragment(const std::vector<int64_t>& shape, int64_t num_threads, int64_t max_vector_elems) {
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  int64_t vec = 1;
  // Largest power of two <= max_vector_elems dividing the last extent, and leaving every thread
  // at least one vector (small tiles get scalars spread over more threads).
  while (vec * 2 <= max_vector_elems && shape.back() % (vec * 2) == 0 && total / (vec * 2) >= std::min(total, num_threads))
    vec *= 2;
  if (total < num_threads) vec = 1;
  return make_parallel_fragment(shape, num_threads, vec);
}

LayoutMap infer_layouts(const Stmt& body, int64_t num_threads, const Target& target, bool allow_wgmma) {
  Collector c;
  c.visit(body);
  LayoutSolver s(c, num_threads, target, allow_wgmma);
  return s.run();
}

}  // namespace tl
