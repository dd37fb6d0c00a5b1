#include "transform/resolve_buffer_views.h"

#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {

namespace {

Expr product(const std::vector<Expr>& shape, size_t from) {
  Expr p = make_int(1);
  for (size_t d = from; d < shape.size(); ++d) p = p * shape[d];
  return p;
}

std::string shape_text(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + to_string(shape[i]);
  return s + "]";
}

bool same_exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    int64_t x = 0, y = 0;
    if (!(is_const_int(a[i], &x) && is_const_int(b[i], &y) && x == y) && !a[i].same_as(b[i])) return false;
  }
  return true;
}

// One group: the canonical buffer and, for every other member, the member itself.
struct Group {
  Buffer canonical;
  std::set<const BufferNode*> members;  // all of them, canonical included
};

class ViewRewriter : public StmtMutator {
 public:
  ViewRewriter(std::map<const BufferNode*, const Group*> group_of, std::map<const BufferNode*, Buffer> base_alloc_of)
      : group_of_(std::move(group_of)), base_alloc_of_(std::move(base_alloc_of)) {}
  using StmtMutator::mutate;

 protected:
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    const Buffer* c = canonical_for(n->buffer);
    if (!c) return changed ? make_load(n->buffer, std::move(idx)) : e;
    return make_load(*c, remap(n->buffer, idx, *c));
  }

  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    const Buffer* c = canonical_for(n->buffer);
    if (!c) return make_store(n->buffer, std::move(idx), v, n->span);
    return make_store(*c, remap(n->buffer, idx, *c), v, n->span);
  }

  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    // A copy or fill whose view operand has no equal region in the storage (the puzzle's
    // T.copy(O_reshaped, O[...]) of a 2-D gemm accumulator seen 3-D) is the element loop it means.
    bool unmappable = false;
    for (const TileArg& a : n->args)
      if (a.is_region())
        if (const Buffer* c = canonical_for(a.region.buffer)) unmappable = unmappable || !mappable(a.region, *c);
    const bool copy = is_tile_op(*n, TileOpKind::kCopy);
    const FillOp* fill = tile_op_as<FillOp>(*n);
    if (unmappable && (copy || (fill && !fill->vector_spelling())) && n->args.size() == 2 && n->args[0].is_region()) {
      const BufferRegion& dst = copy ? n->args[1].region : n->args[0].region;
      // With a whole view as an operand, the loop runs over the storage's own shape (a fragment
      // storage then gives the loop its layout); the other operand is indexed through the
      // row-major position.
      int whole = -1;
      for (int i = 0; i < (copy ? 2 : 1); ++i) {
        const BufferRegion& r = n->args[static_cast<size_t>(i)].region;
        if (canonical_for(r.buffer) && full(r)) whole = i;
      }
      if (whole >= 0) {
        const BufferRegion& view = n->args[static_cast<size_t>(whole)].region;
        const Buffer& c = *canonical_for(view.buffer);
        LoopNest nest = make_loop_nest(c.shape(), "v");
        std::vector<Expr> pos = unravel(linear_index(nest.indices(), c.shape()), view.squeezed_extents());
        Stmt body;
        if (!copy) body = make_store(c, nest.indices(), n->args[1].expr, n->span);
        else if (whole == 0) body = make_store(dst.buffer, region_indices(dst, pos), make_load(c, nest.indices()), n->span);
        else body = make_store(c, nest.indices(), region_load(n->args[0].region, pos), n->span);
        return mutate(nest.wrap(body, ForKind::kParallel));
      }
      LoopNest nest = make_loop_nest(dst.squeezed_extents(), "v");
      // T.copy's out-of-bounds rule holds for a view's own shape (reads past it give 0, writes
      // past it are dropped): once its accesses go through the storage's linear index, an index
      // past the view's row would otherwise land in the next row.
      auto inside = [&](const BufferRegion& r) -> Expr {
        if (!canonical_for(r.buffer)) return Expr();
        std::vector<Expr> idx = region_indices(r, nest.indices());
        Expr cond;
        for (size_t d = 0; d < idx.size(); ++d) {
          Expr c = idx[d] < r.buffer.shape()[d];
          if (is_one(c)) continue;
          cond = cond.defined() ? (cond && c) : c;
        }
        return cond;
      };
      Expr value = copy ? region_load(n->args[0].region, nest.indices()) : n->args[1].expr;
      if (copy)
        if (Expr in = inside(n->args[0].region); in.defined()) value = make_select(in, value, make_const(value.dtype(), 0));
      Stmt body = make_store(dst.buffer, region_indices(dst, nest.indices()), value, n->span);
      if (Expr in = inside(dst); in.defined()) body = make_if(in, body, Stmt(), n->span);
      return mutate(nest.wrap(body, ForKind::kParallel));
    }
    std::vector<TileArg> args;
    for (const TileArg& a : n->args) {
      if (!a.is_region()) {
        args.emplace_back(mutate(a.expr));
        continue;
      }
      bool changed = false;
      BufferRegion r = mutate_region(a.region, &changed);
      const Buffer* c = canonical_for(r.buffer);
      args.emplace_back(c ? region_in(r, *c, *n) : r);
    }
    bool changed = false;
    AttrMap attrs = mutate_attr_map(n->attrs, &changed);
    return make_tile_op(n->op, std::move(args), std::move(attrs), n->span);
  }

  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    auto g = group_of_.find(n->buffer.get());
    if (g == group_of_.end()) return make_allocate(n->buffer, body, n->span);
    // The group's storage is allocated where its base was; the other allocations go away.
    auto base = base_alloc_of_.find(n->buffer.get());
    if (base != base_alloc_of_.end()) return make_allocate(g->second->canonical, body, n->span);
    return body;
  }

 private:
  // The canonical buffer for an access of `b`, or nullptr when `b` is not rewritten.
  const Buffer* canonical_for(const Buffer& b) const {
    auto g = group_of_.find(b.get());
    if (g == group_of_.end() || g->second->canonical.same_as(b)) return nullptr;
    return &g->second->canonical;
  }

  static Expr linear_index(const std::vector<Expr>& idx, const std::vector<Expr>& shape) {
    Expr linear = make_int(0);
    for (size_t d = 0; d < idx.size(); ++d) linear = linear * shape[d] + idx[d];
    return linear;
  }
  static std::vector<Expr> unravel(const Expr& linear, const std::vector<Expr>& shape) {
    std::vector<Expr> out(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      Expr inner = product(shape, d + 1);
      out[d] = d == 0 ? floordiv(linear, inner) : floormod(floordiv(linear, inner), shape[d]);
    }
    if (out.empty()) out.push_back(make_int(0));
    return out;
  }

  // Indices of `from` -> the same element's indices in `to` (row-major linear index).
  static std::vector<Expr> remap(const Buffer& from, const std::vector<Expr>& idx, const Buffer& to) {
    Expr linear = make_int(0);
    if (idx.size() == 1 && from.ndim() != 1) {
      linear = idx[0];  // a flat access
    } else {
      for (size_t d = 0; d < idx.size(); ++d) linear = linear * from.shape()[d] + idx[d];
    }
    std::vector<Expr> out(to.ndim());
    for (size_t d = to.ndim(); d-- > 0;) {
      Expr inner = product(to.shape(), d + 1);
      out[d] = d == 0 ? floordiv(linear, inner) : floormod(floordiv(linear, inner), to.shape()[d]);
    }
    return out;
  }

  static bool full(const BufferRegion& r) {
    for (size_t d = 0; d < r.region.size(); ++d) {
      int64_t m = -1;
      if (!is_const_int(r.region[d].min, &m) || m != 0) return false;
      if (!same_exprs({r.region[d].extent}, {r.buffer.shape()[d]})) return false;
    }
    return true;
  }

  static bool mappable(const BufferRegion& r, const Buffer& c) {
    bool element = true;
    for (const Range& x : r.region) element = element && is_one(x.extent);
    return element || (full(r) && same_exprs(r.squeezed_extents(), BufferRegion::full(c).squeezed_extents()));
  }

  static BufferRegion region_in(const BufferRegion& r, const Buffer& c, const TileOpNode& op) {
    bool element = true;
    for (const Range& x : r.region) element = element && is_one(x.extent);
    if (element) {
      std::vector<Expr> mins;
      for (const Range& x : r.region) mins.push_back(x.min);
      std::vector<Range> out;
      for (const Expr& i : remap(r.buffer, mins, c)) out.emplace_back(i, make_int(1));
      return BufferRegion(c, out);
    }
    BufferRegion whole = BufferRegion::full(c);
    if (full(r) && same_exprs(r.squeezed_extents(), whole.squeezed_extents())) return whole;
    if (full(r))
      throw_error<NotImplemented>(op_prefix(op), "not implemented: T.", op.op, " on '", r.buffer.name(), "' (shape ",
                                  shape_text(r.squeezed_extents()), "), which shares its storage with '", c.name(),
                                  "' that tile ops use with shape ", shape_text(whole.squeezed_extents()),
                                  " (T.reshape / T.view); give every tile op on this storage the same shape");
    throw_error<NotImplemented>(op_prefix(op), "not implemented: T.", op.op, " on a part of '", r.buffer.name(),
                                "', which shares its storage with '", c.name(), "' (T.reshape / T.view); pass the "
                                "whole buffer, or the buffer whose shape the op needs");
  }

  static std::string op_prefix(const TileOpNode& op) { return op.span.prefix(); }

  std::map<const BufferNode*, const Group*> group_of_;
  std::map<const BufferNode*, Buffer> base_alloc_of_;
};

}  // namespace

PrimFunc resolve_buffer_views(const PrimFunc& f, const std::vector<std::pair<Buffer, Buffer>>& views) {
  if (views.empty()) return f;
  // Roots and members.
  std::map<const BufferNode*, Buffer> base_of;
  for (const auto& [v, b] : views) base_of[v.get()] = b;
  auto root = [&](Buffer b) {
    for (size_t guard = 0; base_of.count(b.get()) && guard < base_of.size() + 1; ++guard) b = base_of[b.get()];
    return b;
  };
  std::map<const BufferNode*, std::vector<Buffer>> members;  // root -> members (root first)
  std::vector<Buffer> roots;
  for (const auto& [v, b] : views) {
    Buffer r = root(b);
    auto& m = members[r.get()];
    if (m.empty()) {
      m.push_back(r);
      roots.push_back(r);
    }
    m.push_back(v);
  }
  // Which buffers tile ops use (as a tile, not as a single element).
  std::set<const BufferNode*> tiled;
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (const auto* op = s.as<TileOpNode>())
      for (const TileArg& a : op->args)
        if (a.is_region() && !a.region.squeezed_extents().empty()) tiled.insert(a.region.buffer.get());
  });
  std::set<const BufferNode*> params;
  for (const Param& p : f.params())
    if (p.is_buffer()) params.insert(p.buffer.get());

  std::vector<Group> groups(roots.size());
  std::map<const BufferNode*, const Group*> group_of;
  std::map<const BufferNode*, Buffer> base_alloc_of;
  for (size_t gi = 0; gi < roots.size(); ++gi) {
    const std::vector<Buffer>& m = members[roots[gi].get()];
    const Buffer& r = m[0];
    Expr n = product(r.shape(), 0);
    for (const Buffer& v : m) {
      if (v.dtype() != r.dtype())
        throw_error<NotImplemented>(v->span.prefix(), "not implemented: a view of '", r.name(), "' with dtype ",
                                    v.dtype().str(), " (it is ", r.dtype().str(), "); T.view may change the shape "
                                    "only, not the dtype");
      int64_t a = 0, b = 0;
      if (!(is_const_int(product(v.shape(), 0), &a) && is_const_int(n, &b)))
        throw_error<NotImplemented>(v->span.prefix(), "not implemented: T.reshape of '", r.name(),
                                    "' with a run-time shape");
      if (a != b)
        throw_error<ValueError>(v->span.prefix(), "T.reshape: '", v.name(), "' has ", a, " elements but '", r.name(),
                                "' has ", b);
    }
    Buffer canonical = r;
    if (!params.count(r.get()) && !tiled.count(r.get()))
      for (const Buffer& v : m)
        if (tiled.count(v.get())) {
          canonical = v;
          break;
        }
    if (!canonical.same_as(r) && r.scope() != canonical.scope())
      canonical = Buffer(canonical.name(), canonical.dtype(), canonical.shape(), r.scope(), {}, canonical->span);
    groups[gi].canonical = canonical;
    for (const Buffer& v : m) {
      groups[gi].members.insert(v.get());
      group_of[v.get()] = &groups[gi];
    }
    base_alloc_of[r.get()] = canonical;
  }
  ViewRewriter rw(group_of, base_alloc_of);
  return f.with_body(rw.mutate(f.body()));
}

}  // namespace tl
