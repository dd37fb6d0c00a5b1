#include "layout/infer_layout.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "layout/swizzle.h"

namespace tl {

namespace {

std::string where(const Span& s) { return s.prefix(); }

bool is_fragment(const Buffer& b) { return b.defined() && b.scope() == MemScope::kFragment; }

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
  std::vector<const TileOpNode*> annotations;

 protected:
  void visit_allocate(const AllocateNode* n) override {
    if (is_fragment(n->buffer)) fragments.push_back(n->buffer);
    IRVisitor::visit_allocate(n);
  }
  void visit_tile_op(const TileOpNode* n) override {
    if (is_tile_op(*n, TileOpKind::kAnnotateLayout)) {
      annotations.push_back(n);
      return;
    }
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
    if (is_fragment(n->buffer) && !floating.count(n->buffer)) floating[n->buffer] = span_;
    IRVisitor::visit_load(n);
  }
  void visit_store(const BufferStoreNode* n) override {
    if (is_fragment(n->buffer) && !floating.count(n->buffer)) floating[n->buffer] = n->span;
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
        if (!is_fragment(b)) return;
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

// ---------------------------------------------------------------------------------------------

struct RegionInfo {
  Buffer buffer;
  std::vector<int64_t> extents;  // squeezed, constant
  std::vector<int> dims;         // buffer dimension of each squeezed extent
  bool full = false;             // covers the whole buffer
};

RegionInfo region_info(const BufferRegion& r) {
  RegionInfo info;
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

class Solver {
 public:
  Solver(const Collector& c, int64_t threads, const Target& target, bool allow_wgmma)
      : c_(c), target_(target), allow_wgmma_(allow_wgmma) {
    map_.num_threads = threads;
  }

  LayoutMap run() {
    apply_annotations();
    strict();
    for (int round = 0; round < 10000; ++round) {
      propagate();
      if (!free_step()) break;
    }
    // Fragments nobody constrained (only filled, or unused): the default layout.
    for (const Buffer& b : c_.fragments)
      if (!map_.fragments.count(b))
        set_fragment(b, default_fragment(const_shape(b, "fragment"), threads(), 1), "default layout");
    for (size_t i = 0; i < c_.nests.size(); ++i) verify_nest(c_.nests[i]);
    return std::move(map_);
  }

 private:
  int64_t threads() const { return map_.num_threads; }

  void set_fragment(const Buffer& b, const Fragment& f, const std::string& who) {
    auto it = map_.fragments.find(b);
    if (it != map_.fragments.end()) {
      if (it->second.same_as(f)) return;
      throw_error<LayoutError>(
          who, " needs fragment '", b.name(), "' in layout ", f.str(), ", but ", origin_[b], " gave it layout ",
          it->second.str(), ". One fragment cannot have two thread layouts: copy it to a shared-memory buffer "
          "(T.alloc_shared) and read it from there, or into a second fragment through shared memory");
    }
    if (f.num_threads() > threads())
      throw_error<LayoutError>(who, " needs fragment '", b.name(), "' spread over ", f.num_threads(),
                               " threads, but the kernel has only ", threads(),
                               " threads; raise T.Kernel(threads=...) or use smaller tiles");
    std::vector<int64_t> shape = const_shape(b, "fragment");
    if (shape != f.shape())
      throw_error<LayoutError>(who, ": fragment '", b.name(), "' of shape ", shape_str(shape),
                               " cannot take a layout of shape ", shape_str(f.shape()));
    map_.fragments.emplace(b, f);
    origin_[b] = who;
    changed_ = true;
  }

  std::string nest_name(const Nest& n) const { return where(n.root->span) + "T.Parallel loop"; }

  // ---- strict ----------------------------------------------------------------------------
  void apply_annotations() {
    for (const TileOpNode* op : c_.annotations) {
      if (op->args.empty() || !op->args[0].is_region()) continue;
      const Buffer& b = op->args[0].region.buffer;
      std::string kind = attr_str(op->attrs, "kind", "custom");
      if (b.scope() == MemScope::kShared) {
        std::vector<int64_t> shape = const_shape(b, "shared buffer");
        if (kind == "swizzled") {
          if (!swizzle_applicable(shape, b.dtype().element_bytes()))
            throw_error<LayoutError>(op_error_prefix(*op), "no swizzled layout exists for shared buffer '", b.name(),
                                     "' ", shape_str(shape), " of ", b.dtype().str(),
                                     "; rows must be 16, 32, 64 or a multiple of 128 bytes");
          map_.shared[b] = make_swizzled_layout(shape, b.dtype().element_bytes());
        } else if (kind == "custom") {
          auto vit = op->attrs.find("vars");
          auto eit = op->attrs.find("exprs");
          if (vit == op->attrs.end() || eit == op->attrs.end())
            throw_error<LayoutError>(op_error_prefix(*op), "a custom layout needs 'vars' and 'exprs'");
          std::vector<Var> vars;
          for (const Expr& e : vit->second.as_expr_list()) {
            const VarNode* v = e.as<VarNode>();
            if (!v) throw_error<LayoutError>(op_error_prefix(*op), "layout 'vars' must be variables");
            vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
          }
          std::vector<Expr> exprs = eit->second.as_expr_list();
          if (vars.size() != shape.size())
            throw_error<LayoutError>(op_error_prefix(*op), "the layout of '", b.name(), "' takes ", vars.size(),
                                     " indices for a buffer of rank ", shape.size());
          std::vector<int64_t> out_shape;
          // The output space: flat, as large as the largest image (checked bijective below).
          int64_t total = 1;
          for (int64_t s : shape) total *= s;
          Layout l = make_layout(shape, {total}, [&](const std::vector<Var>& v) {
            std::map<Var, Expr, VarLess> sub;
            for (size_t i = 0; i < vars.size(); ++i) sub[vars[i]] = v[i];
            std::vector<Expr> out;
            std::vector<Expr> mapped;
            for (const Expr& e : exprs) mapped.push_back(substitute(e, sub));
            if (mapped.size() == 1) return mapped;
            // A multi-dimensional image is flattened row-major over the buffer's own shape.
            return std::vector<Expr>{flatten_index(mapped, shape)};
          }, "custom");
          std::string why;
          if (!l.is_bijective(&why))
            throw_error<LayoutError>(op_error_prefix(*op), "the layout annotated for '", b.name(),
                                     "' is not a permutation of its elements: ", why);
          map_.shared[b] = l;
        } else {
          throw_error<LayoutError>(op_error_prefix(*op), "layout kind '", kind,
                                   "' is an Ascend layout; it has no meaning on target cuda");
        }
      } else if (is_fragment(b)) {
        throw_error<NotImplemented>(op_error_prefix(*op), "not implemented: T.annotate_layout of fragment '",
                                    b.name(), "' on target cuda (fragment layouts are inferred)");
      }
    }
  }

  void strict() {
    for (auto& [b, span] : c_.floating) {
      if (!map_.fragments.count(b))
        set_fragment(b, make_replicated_fragment(const_shape(b, "fragment"), threads()),
                     where(span) + "a use outside T.Parallel and tile ops (every thread holds the whole fragment)");
    }
    std::vector<const TileOpNode*> gemms;
    for (const Participant& p : c_.parts)
      if (p.op && is_tile_op(*p.op, TileOpKind::kGemm)) gemms.push_back(p.op);
    // wgmma for all of the kernel's GEMMs, or for none (see infer_layouts).
    std::map<const TileOpNode*, GemmPlan> wplans;
    std::map<Buffer, Layout, BufferLess> wlayouts;
    std::string why_not;
    bool wgmma = allow_wgmma_ && !gemms.empty();
    for (const TileOpNode* g : gemms) {
      if (!wgmma) break;
      GemmPlan plan;
      if (!plan_wgmma(*g, &plan, &wlayouts, &why_not)) wgmma = false;
      else wplans[g] = plan;
    }
    if (wgmma) {
      for (const TileOpNode* g : gemms) apply_wgmma(*g, wplans[g]);
      for (auto& [b, l] : wlayouts) map_.shared[b] = l;
      return;
    }
    for (const TileOpNode* g : gemms) {
      plan_gemm(*g);
      if (allow_wgmma_) map_.gemms[g].why_not_wgmma = why_not;
    }
  }

  // Whether the op can run on wgmma, and how: the warpgroup split, and the gmma layouts its
  // shared operands need (added to `layouts`; a buffer already given another layout, by an
  // annotation or another GEMM, disqualifies it). Malformed ops return false and are diagnosed
  // by plan_gemm.
  bool plan_wgmma(const TileOpNode& op, GemmPlan* plan, std::map<Buffer, Layout, BufferLess>* layouts,
                  std::string* why) {
    auto no = [&](const std::string& w) {
      *why = op_error_prefix(op) + w;
      return false;
    };
    if (op.args.size() < 3 || !op.args[0].is_region() || !op.args[1].is_region() || !op.args[2].is_region())
      return no("operands");
    RegionInfo a = region_info(op.args[0].region), b = region_info(op.args[1].region),
               c = region_info(op.args[2].region);
    for (const RegionInfo* r : {&a, &b, &c})
      if (r->extents.size() != 2 || r->extents[0] <= 0 || r->extents[1] <= 0) return no("non-2-d tiles");
    bool ta = attr_bool(op.attrs, "transpose_A", false), tb = attr_bool(op.attrs, "transpose_B", false);
    int64_t m = c.extents[0], n = c.extents[1];
    int64_t k = ta ? a.extents[0] : a.extents[1];
    if ((ta ? a.extents[1] : a.extents[0]) != m || (tb ? b.extents[0] : b.extents[1]) != n ||
        (tb ? b.extents[1] : b.extents[0]) != k)
      return no("shapes do not agree");
    if (!is_fragment(c.buffer) || !c.full) return no("the accumulator is not a whole fragment");
    DataType at = a.buffer.dtype(), bt = b.buffer.dtype(), ct = c.buffer.dtype();
    const bool f8 = at.is_fp8() && bt.is_fp8();
    if ((at != bt && !f8) || !(at == DataType::Float(16) || at == DataType::BFloat16() || f8) ||
        ct != DataType::Float32())
      return no("wgmma here takes f16/bf16/fp8 operands with float accumulators, not " + at.str() + " x " + bt.str() +
                " -> " + ct.str());
    if (threads() % 128) return no("the block is not whole warpgroups (" + std::to_string(threads()) + " threads)");
    const int64_t kinst = f8 ? 32 : 16;
    if (k % kinst) return no("K = " + std::to_string(k) + " is not a multiple of " + std::to_string(kinst));
    if (f8 && (ta || !tb || is_fragment(a.buffer)))
      return no("fp8 wgmma reads both operands K-major from shared memory (A [M, K], B [N, K] with transpose_B)");
    WarpgroupPartition wp;
    GemmWarpPolicy policy = parse_gemm_warp_policy(attr_str(op.attrs, "policy", "Square"));
    if (!compute_warpgroup_partition(m, n, static_cast<int>(threads() / 128), policy, &wp))
      return no("[" + std::to_string(m) + ", " + std::to_string(n) + "] does not split into 64-row tiles over " +
                std::to_string(threads() / 128) + " warpgroups");
    bool a_reg = is_fragment(a.buffer);
    if (is_fragment(b.buffer)) return no("B is in registers");
    if (a_reg && (ta || !a.full)) return no("a transposed or partial register operand A");
    const int64_t nw = n / wp.wg_n;
    for (int which = 0; which < 2; ++which) {
      const BufferRegion& r = op.args[which].region;
      const Buffer& buf = r.buffer;
      if (which == 0 && a_reg) continue;
      if (buf.scope() != MemScope::kShared) return no("operand '" + buf.name() + "' is not in shared memory");
      std::vector<int64_t> shape = const_shape(buf, "shared buffer");
      size_t nd = shape.size();
      if (nd < 2) return no("operand '" + buf.name() + "' is not a 2-d tile");
      for (size_t d = nd - 2; d < nd; ++d)
        if (!is_zero(r.region[d].min) || !is_const_value(r.region[d].extent, shape[d]))
          return no("operand '" + buf.name() + "' is part of its buffer's rows or columns");
      int eb = buf.dtype().element_bytes();
      int swz = gmma_swizzle_bytes(shape[nd - 1], eb);
      if (!swz || shape[nd - 2] % 8) return no("no gmma layout for '" + buf.name() + "'");
      bool mn_major = which == 0 ? ta : !tb;
      // An MN-major B slice of one warpgroup must start at a panel.
      if (mn_major && which == 1 && wp.wg_n > 1 && (nw * eb) % swz) return no("B slices cross swizzle panels");
      Layout l = make_gmma_layout(shape, eb, swz);
      auto have = map_.shared.find(buf);
      if (have != map_.shared.end() && !have->second.same_map(l))
        return no("'" + buf.name() + "' already has layout " + have->second->name);
      auto pending = layouts->find(buf);
      if (pending != layouts->end() && pending->second->name != l->name) return no("'" + buf.name() + "' is read "
                                                                                     "by GEMMs in two layouts");
      (*layouts)[buf] = l;
    }
    plan->use_wgmma = true;
    plan->warpgroups = wp;
    return true;
  }

  void apply_wgmma(const TileOpNode& op, const GemmPlan& plan) {
    RegionInfo a = region_info(op.args[0].region), c = region_info(op.args[2].region);
    bool ta = attr_bool(op.attrs, "transpose_A", false);
    int64_t m = c.extents[0], n = c.extents[1], k = ta ? a.extents[0] : a.extents[1];
    set_fragment(c.buffer, make_wgmma_c_fragment(m, n, plan.warpgroups), op_error_prefix(op) + "the wgmma accumulator");
    if (is_fragment(a.buffer))
      set_fragment(a.buffer, make_wgmma_a_fragment(m, k, plan.warpgroups, a.buffer.dtype()),
                   op_error_prefix(op) + "wgmma operand A");
    map_.gemms[&op] = plan;
  }

  void plan_gemm(const TileOpNode& op) {
    if (op.args.size() < 3 || !op.args[0].is_region() || !op.args[1].is_region() || !op.args[2].is_region())
      throw_error<LayoutError>(op_error_prefix(op), "expects three buffer regions A, B, C");
    RegionInfo a = region_info(op.args[0].region), b = region_info(op.args[1].region),
               c = region_info(op.args[2].region);
    bool ta = attr_bool(op.attrs, "transpose_A", false), tb = attr_bool(op.attrs, "transpose_B", false);
    auto dims_ok = [](const RegionInfo& r) {
      return r.extents.size() == 2 && r.extents[0] > 0 && r.extents[1] > 0;
    };
    if (!dims_ok(a) || !dims_ok(b) || !dims_ok(c))
      throw_error<LayoutError>(op_error_prefix(op), "A, B and C must be two-dimensional tiles of constant size");
    int64_t m = c.extents[0], n = c.extents[1];
    int64_t k = ta ? a.extents[0] : a.extents[1];
    int64_t am = ta ? a.extents[1] : a.extents[0];
    int64_t bk = tb ? b.extents[1] : b.extents[0];
    int64_t bn = tb ? b.extents[0] : b.extents[1];
    if (am != m || bn != n || bk != k)
      throw_error<LayoutError>(op_error_prefix(op), "shapes do not agree: A ", shape_str(a.extents),
                               ta ? " (transposed)" : "", ", B ", shape_str(b.extents), tb ? " (transposed)" : "",
                               ", C ", shape_str(c.extents));
    if (!is_fragment(c.buffer))
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: a T.gemm accumulator in ",
                                  scope_name(c.buffer.scope()), " memory on target cuda; use T.alloc_fragment for C");
    if (!c.full)
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: a T.gemm accumulating into part of "
                                  "fragment '", c.buffer.name(), "' on target cuda; give C its own fragment");
    GemmPlan plan;
    DataType at = a.buffer.dtype(), bt = b.buffer.dtype(), ct = c.buffer.dtype();
    auto simt = [&](std::string why) {
      plan.use_mma = false;
      plan.why_simt = std::move(why);
    };
    bool types_ok = false;
    if (at == bt) {
      if (at == DataType::Float(16) && (ct == DataType::Float32() || ct == DataType::Float(16)))
        types_ok = true;
      else if (at == DataType::BFloat16() && ct == DataType::Float32())
        types_ok = true;
      else if (at == DataType::Float32() && ct == DataType::Float32())
        types_ok = true;  // tf32
      else if ((at == DataType::Int(8) || at == DataType::UInt(8)) && ct == DataType::Int32())
        types_ok = true;
      else if (at.is_fp8() && ct == DataType::Float32() && target_.is_cuda() && target_.sm() >= 89)
        types_ok = true;
    }
    if (!types_ok) {
      simt("no mma.sync for " + at.str() + " x " + bt.str() + " -> " + ct.str());
    } else if (threads() % 32 != 0) {
      simt("the block has " + std::to_string(threads()) + " threads, not whole warps");
    } else {
      int64_t kk = mma_k(at);
      if (m % 16 || n % 8 || k % kk) {
        simt("M, N, K = " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) +
             " are not multiples of 16, 8, " + std::to_string(kk));
      } else {
        try {
          plan.warps = compute_warp_partition(m, n, static_cast<int>(threads() / 32),
                                              parse_gemm_warp_policy(attr_str(op.attrs, "policy", "Square")));
          plan.use_mma = true;
        } catch (const LayoutError& e) {
          simt(e.what());
        }
      }
    }
    bool a_reg = is_fragment(a.buffer), b_reg = is_fragment(b.buffer);
    if (plan.use_mma && a_reg && ta) simt("a transposed register operand A");
    if (plan.use_mma && b_reg && tb) simt("a transposed register operand B");
    if (!plan.use_mma && (a_reg || b_reg))
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.gemm with operand in a fragment when "
                                  "mma.sync cannot be used (", plan.why_simt, ") on target cuda; keep A and B in "
                                  "shared memory (T.alloc_shared)");
    std::string who = op_error_prefix(op) + "the mma.sync accumulator";
    if (plan.use_mma) {
      set_fragment(c.buffer, make_mma_c_fragment(m, n, plan.warps), who);
      if (a_reg) {
        if (!a.full) throw_error<NotImplemented>(op_error_prefix(op), "not implemented: A as part of a fragment");
        set_fragment(a.buffer, make_mma_a_fragment(m, k, plan.warps, at), op_error_prefix(op) + "operand A");
      }
      if (b_reg) {
        if (!b.full) throw_error<NotImplemented>(op_error_prefix(op), "not implemented: B as part of a fragment");
        set_fragment(b.buffer, make_mma_b_fragment(k, n, plan.warps, bt), op_error_prefix(op) + "operand B");
      }
      // Shared operands read with ldmatrix: swizzle them when the layout allows (bank-conflict free).
      for (const RegionInfo* r : {&a, &b}) {
        const Buffer& buf = r->buffer;
        if (buf.scope() != MemScope::kShared || map_.shared.count(buf) || buf.dtype().bits != 16) continue;
        std::vector<int64_t> shape = const_shape(buf, "shared buffer");
        int64_t rows = r->extents[0], cols = r->extents[1];
        int64_t eb = buf.dtype().element_bytes();
        // The tile must be the buffer's last two dimensions, and a whole number of swizzle
        // periods (8 lines of 128 bytes) so every stage slice has the same phase.
        if (shape.size() < 2 || shape[shape.size() - 1] != cols || shape[shape.size() - 2] != rows) continue;
        if ((rows * cols * eb) % 1024 != 0 || !swizzle_applicable(shape, static_cast<int>(eb))) continue;
        map_.shared[buf] = make_swizzled_layout(shape, static_cast<int>(eb));
      }
    } else {
      // The SIMT accumulator takes the default layout (or whatever others fix).
    }
    map_.gemms[&op] = plan;
  }

  // ---- propagation ----------------------------------------------------------------------
  void propagate() {
    changed_ = true;
    while (changed_) {
      changed_ = false;
      for (const Participant& p : c_.parts) {
        if (p.op) propagate_op(*p.op);
        else propagate_nest(c_.nests[static_cast<size_t>(p.nest)]);
      }
    }
  }

  void propagate_nest(const Nest& n) {
    auto it = map_.loops.find(n.root);
    if (it == map_.loops.end()) {
      // A fragment indexed by exactly the loop variables gives the nest its layout.
      for (const FragAccess& a : n.accesses) {
        if (a.dims.size() != n.nest.vars.size()) continue;
        auto f = map_.fragments.find(a.buffer);
        if (f == map_.fragments.end()) continue;
        std::vector<int> order(a.dims.size());
        for (size_t k = 0; k < a.dims.size(); ++k) order[static_cast<size_t>(a.dims[k])] = static_cast<int>(k);
        map_.loops[n.root] = f->second.permute(order);
        loop_origin_[n.root] = "fragment '" + a.buffer.name() + "'";
        changed_ = true;
        break;
      }
      it = map_.loops.find(n.root);
      if (it == map_.loops.end()) return;
    }
    for (const FragAccess& a : n.accesses) {
      if (a.dims.empty() || map_.fragments.count(a.buffer)) continue;
      set_fragment(a.buffer, it->second.project(a.dims), nest_name(n));
    }
  }

  void propagate_op(const TileOpNode& op) {
    TileOpKind kind;
    if (!tile_op_kind(op, &kind)) return;
    if (kind == TileOpKind::kReduce) {
      if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region()) return;
      RegionInfo src = region_info(op.args[0].region), dst = region_info(op.args[1].region);
      if (!is_fragment(src.buffer) || !is_fragment(dst.buffer)) return;
      auto s = map_.fragments.find(src.buffer);
      if (s == map_.fragments.end()) {
        // The result's layout came first (a T.Parallel loop using it): lay the source out so that
        // each thread holds the whole reduced dimension of its result elements (a reduction inside
        // each thread), instead of choosing a second, conflicting layout for the result.
        auto d = map_.fragments.find(dst.buffer);
        int64_t dim = attr_int(op.attrs, "dim", -1);
        if (d == map_.fragments.end() || !src.full || !dst.full || dim < 0 ||
            dim >= static_cast<int64_t>(src.dims.size()))
          return;
        std::vector<int64_t> sshape = const_shape(src.buffer, "fragment");
        int bdim = src.dims[static_cast<size_t>(dim)];
        std::vector<int64_t> rest = sshape;
        rest.erase(rest.begin() + bdim);
        if (rest != d->second.shape()) return;
        set_fragment(src.buffer, d->second.insert_register_dim(bdim, sshape[static_cast<size_t>(bdim)]),
                     op_error_prefix(op) + "the source of a reduction whose result's layout is known");
        return;
      }
      if (!src.full)
        throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reducing part of fragment '",
                                    src.buffer.name(), "' on target cuda; reduce the whole fragment or copy the part "
                                    "to its own fragment");
      int64_t dim = attr_int(op.attrs, "dim", -1);
      if (dim < 0 || dim >= static_cast<int64_t>(src.dims.size()))
        throw_error<LayoutError>(op_error_prefix(op), "reduction dimension ", dim, " out of range");
      int bdim = src.dims[static_cast<size_t>(dim)];
      Fragment want = s->second.reduce(bdim);
      std::vector<int64_t> dshape = const_shape(dst.buffer, "fragment");
      if (want.shape() != dshape) {
        // [M] vs [M, 1] and the like: drop unit dimensions on both sides.
        throw_error<NotImplemented>(op_error_prefix(op), "not implemented: reducing ", shape_str(s->second.shape()),
                                    " over dimension ", dim, " into fragment '", dst.buffer.name(), "' of shape ",
                                    shape_str(dshape), "; the destination must have the source's shape without ",
                                    "that dimension");
      }
      set_fragment(dst.buffer, want, op_error_prefix(op) + "the result of the reduction");
    } else if (kind == TileOpKind::kCopy) {
      if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region()) return;
      RegionInfo src = region_info(op.args[0].region), dst = region_info(op.args[1].region);
      if (!is_fragment(src.buffer) || !is_fragment(dst.buffer) || !src.full || !dst.full) return;
      if (const_shape(src.buffer, "fragment") != const_shape(dst.buffer, "fragment")) return;
      auto s = map_.fragments.find(src.buffer);
      auto d = map_.fragments.find(dst.buffer);
      if (s != map_.fragments.end())
        set_fragment(dst.buffer, s->second, op_error_prefix(op) + "a register-to-register copy");
      else if (d != map_.fragments.end())
        set_fragment(src.buffer, d->second, op_error_prefix(op) + "a register-to-register copy");
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
      if (map_.loops.count(n.root)) continue;
      bool open_broadcast = false, full_known = false;
      for (const FragAccess& a : n.accesses) {
        bool known = map_.fragments.count(a.buffer) > 0;
        if (a.dims.size() == n.nest.vars.size()) full_known |= known;
        else if (!a.dims.empty() && !known) open_broadcast = true;
      }
      if (!open_broadcast || full_known) continue;
      // Vectors as wide as the copies would have chosen (16-byte accesses), so fragments filled
      // from global memory keep their vector loads.
      map_.loops[n.root] = default_fragment(n.nest.extents, threads(), std::max<int64_t>(1, 16 / n.max_elem_bytes));
      loop_origin_[n.root] = "the default loop layout (it broadcasts a fragment)";
      return true;
    }
    for (const Participant& p : c_.parts) {
      if (!p.op) {
        const Nest& n = c_.nests[static_cast<size_t>(p.nest)];
        if (map_.loops.count(n.root)) continue;
        // Nests that index a fragment fully but whose fragments are all unknown, or nests
        // without fragments: threads walk the iteration space row-major, one element each, so
        // global accesses of consecutive threads are consecutive.
        map_.loops[n.root] = default_fragment(n.nest.extents, threads(), 1);
        loop_origin_[n.root] = "the default loop layout";
        return true;
      }
      const TileOpNode& op = *p.op;
      if (const TileOp* def = find_tile_op(op)) {
        for (size_t i = 0; i < op.args.size(); ++i) {
          if (!op.args[i].is_region() || !is_fragment(op.args[i].region.buffer)) continue;
          const Buffer& b = op.args[i].region.buffer;
          if (map_.fragments.count(b)) continue;
          // A fill says nothing about the layout (let others decide); a reduction's destination
          // follows its source.
          if (def->fragment_role(op, i) != FragmentRole::kDefault) continue;
          // Vector width from the widest element the op moves (16-byte accesses).
          int64_t bytes = b.dtype().element_bytes();
          for (const TileArg& a : op.args)
            if (a.is_region()) bytes = std::max<int64_t>(bytes, a.region.buffer.dtype().element_bytes());
          int64_t vec = std::max<int64_t>(1, 16 / bytes);
          set_fragment(b, default_fragment(const_shape(b, "fragment"), threads(), vec),
                       op_error_prefix(op) + "the default layout");
          return true;
        }
      }
    }
    return false;
  }

  // ---- verification ---------------------------------------------------------------------
  void verify_nest(const Nest& n) {
    auto lit = map_.loops.find(n.root);
    TL_ICHECK(lit != map_.loops.end());
    const Fragment& L = lit->second;
    if (L.num_threads() > threads())
      throw_error<LayoutError>(nest_name(n), ": its layout ", L.str(), " needs ", L.num_threads(),
                               " threads, but the kernel has only ", threads());
    // The loop layout's points, computed once for all accesses (every (thread, register) of the
    // tile: this check dominates the cost of lowering a large attention tile otherwise).
    const size_t rank = n.nest.vars.size();
    std::vector<int64_t> points;   // rank entries per (thread, register); empty when not valid
    std::vector<char> valid;
    std::set<std::string> seen;    // an access checked once (a load and a store of acc[i, j])
    for (const FragAccess& a : n.accesses) {
      auto fit = map_.fragments.find(a.buffer);
      TL_ICHECK(fit != map_.fragments.end(), "fragment without layout: ", a.buffer.name());
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
        std::vector<int64_t> p;
        for (int64_t t = 0; t < L.num_threads(); ++t)
          for (int64_t r = 0; r < L.num_regs(); ++r) {
            size_t slot = static_cast<size_t>(t * L.num_regs() + r);
            if (!L.index_at(t, r, &p)) continue;
            valid[slot] = 1;
            std::copy(p.begin(), p.end(), points.begin() + static_cast<std::ptrdiff_t>(slot * rank));
          }
      }
      std::vector<int64_t> point(rank), idx, back;  // reused: this runs for every (thread, register)
      for (int64_t t = 0; t < L.num_threads(); ++t) {
        for (int64_t r = 0; r < L.num_regs(); ++r) {
          size_t slot = static_cast<size_t>(t * L.num_regs() + r);
          if (!valid[slot]) continue;
          std::copy(points.begin() + static_cast<std::ptrdiff_t>(slot * rank),
                    points.begin() + static_cast<std::ptrdiff_t>((slot + 1) * rank), point.begin());
          at.eval(point, &idx);
          bool in_range = idx.size() == fshape.size();
          for (size_t k = 0; in_range && k < idx.size(); ++k) in_range = idx[k] >= 0 && idx[k] < fshape[k];
          if (!in_range) {
            std::ostringstream os;
            os << nest_name(n) << " indexes fragment '" << a.buffer.name() << "' " << shape_str(fshape) << " at (";
            for (size_t k = 0; k < idx.size(); ++k) os << (k ? ", " : "") << idx[k];
            os << "), outside the fragment";
            throw LayoutError(os.str());
          }
          bool holds = t < F.num_threads() && F.index_at(t, F.reg_at(idx), &back) && back == idx;
          if (!holds) {
            std::ostringstream os;
            os << nest_name(n) << ": thread " << t << " runs the iteration (";
            for (size_t k = 0; k < point.size(); ++k) os << (k ? ", " : "") << point[k];
            os << ") and needs element (";
            for (size_t k = 0; k < idx.size(); ++k) os << (k ? ", " : "") << idx[k];
            os << ") of fragment '" << a.buffer.name() << "', which that thread does not hold. The loop is laid out "
               << "by " << loop_origin_[n.root] << " as " << L.str() << "; '" << a.buffer.name() << "' has layout "
               << F.str() << " (from " << origin_[a.buffer] << "). Copy '" << a.buffer.name()
               << "' to a shared-memory buffer (T.alloc_shared) and read it from there in this loop";
            throw LayoutError(os.str());
          }
          if (++checked > (int64_t(1) << 22)) break;
        }
      }
    }
  }

  const Collector& c_;
  const Target& target_;
  bool allow_wgmma_ = false;
  LayoutMap map_;
  std::map<Buffer, std::string, BufferLess> origin_;
  std::map<const ForNode*, std::string> loop_origin_;
  bool changed_ = false;
};

}  // namespace

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
  Solver s(c, num_threads, target, allow_wgmma);
  return s.run();
}

}  // namespace tl
