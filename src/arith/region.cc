#include "arith/region.h"

#include "ir/functor.h"

namespace tl {

namespace {

Expr last_of(const Range& r) {
  return make_binary(BinOp::kSub, make_binary(BinOp::kAdd, r.min, r.extent), make_int(1, r.min.dtype()));
}

Range full_dim(const Buffer& b, size_t d) {
  const Expr& ext = b.shape()[d];
  return Range(make_int(0, ext.dtype()), ext);
}

Range from_ends(const Expr& lo, const Expr& hi, Analyzer& an) {
  Expr ext = make_binary(BinOp::kAdd, make_binary(BinOp::kSub, hi, lo), make_int(1, lo.dtype()));
  return Range(lo, an.simplify(ext));
}

}  // namespace

BufferRegion relax_region(const BufferRegion& region, const RelaxMap& relax, Analyzer& an) {
  std::vector<Range> out;
  out.reserve(region.region.size());
  for (size_t d = 0; d < region.region.size(); ++d) {
    const Range& r = region.region[d];
    IntervalSet lo = an.interval_of(r.min, relax);
    IntervalSet hi = an.interval_of(last_of(r), relax);
    if (!lo.has_lower() || !hi.has_upper()) {
      out.push_back(d < region.buffer.ndim() ? full_dim(region.buffer, d) : r);
      continue;
    }
    out.push_back(from_ends(lo.min, hi.max, an));
  }
  return BufferRegion(region.buffer, std::move(out));
}

bool whole_buffer(const BufferRegion& r) {
  if (r.region.size() != r.buffer.ndim()) return false;
  for (size_t d = 0; d < r.region.size(); ++d) {
    int64_t e = 0, n = 0;
    if (!is_zero(r.region[d].min) || !is_const_int(r.region[d].extent, &e) || !is_const_int(r.buffer.shape()[d], &n) ||
        e != n)
      return false;
  }
  return true;
}

BufferRegion region_union(const BufferRegion& a, const BufferRegion& b, Analyzer& an) {
  if (a.region.size() != b.region.size()) return BufferRegion::full(a.buffer);
  std::vector<Range> out;
  for (size_t d = 0; d < a.region.size(); ++d) {
    const Range &x = a.region[d], &y = b.region[d];
    Expr lo = an.simplify(make_binary(BinOp::kMin, x.min, y.min));
    Expr hi = an.simplify(make_binary(BinOp::kMax, last_of(x), last_of(y)));
    out.push_back(from_ends(lo, hi, an));
  }
  return BufferRegion(a.buffer, std::move(out));
}

namespace {

class AccessCollector : public IRVisitor {
 public:
  explicit AccessCollector(Analyzer& an) : an_(an) {}

  AccessRegions result() const {
    AccessRegions out;
    for (auto& r : reads_) out.reads.push_back(r);
    for (auto& w : writes_) out.writes.push_back(w);
    return out;
  }

  using IRVisitor::visit;

 protected:
  void visit_load(const BufferLoadNode* n) override {
    IRVisitor::visit_load(n);
    add(reads_, point_region(n->buffer, n->indices));
  }
  void visit_store(const BufferStoreNode* n) override {
    IRVisitor::visit_store(n);
    add(writes_, point_region(n->buffer, n->indices));
  }
  void visit_call(const CallNode* n) override {
    IRVisitor::visit_call(n);
    // The destination of a scalar atomic is written (its load form is also counted as a read).
    if (is_atomic_write_builtin(n->op) && !n->args.empty())
      if (auto* dst = n->args[0].as<BufferLoadNode>()) add(writes_, point_region(dst->buffer, dst->indices));
  }
  void visit_for(const ForNode* n) override {
    visit(n->min);
    visit(n->extent);
    for (auto& [k, v] : n->annotations) visit_attr_value(v);
    Scoped s(relax_, n->var, Range(n->min, n->extent));
    visit(n->body);
  }
  void visit_let(const LetStmtNode* n) override {
    visit(n->value);
    if (!n->var.dtype().is_integer()) {
      visit(n->body);
      return;
    }
    Scoped s(relax_, n->var, Range(n->value, make_int(1, n->value.dtype())));
    visit(n->body);
  }
  void visit_kernel(const KernelLaunchNode* n) override {
    for (auto& g : n->grid) visit(g);
    for (auto& t : n->threads) visit(t);
    for (auto& [k, v] : n->attrs) visit_attr_value(v);
    std::vector<std::pair<Var, Range>> ranges = kernel_index_ranges(*n);
    std::vector<Scoped> scopes;
    scopes.reserve(ranges.size());
    for (auto& [v, r] : ranges) scopes.emplace_back(relax_, v, r);
    visit(n->body);
  }
  void visit_tile_op(const TileOpNode* n) override {
    IRVisitor::visit_tile_op(n);  // loads inside region bounds and scalar arguments
    const TileOp* def = find_tile_op(*n);
    AccessRegions acc;
    if (def) {
      acc = def->effects(*n);
    } else {
      bool first = true;
      for (auto& a : n->args) {
        if (!a.is_region()) continue;
        (first ? acc.writes : acc.reads).push_back(a.region);
        first = false;
      }
    }
    for (auto& r : acc.reads) add(reads_, r);
    for (auto& w : acc.writes) add(writes_, w);
  }

 private:
  // Adds a variable to the relax map for the extent of a scope (restoring a shadowed entry).
  struct Scoped {
    RelaxMap& map;
    Var var;
    bool had = false;
    Range prev;
    Scoped(RelaxMap& m, const Var& v, const Range& r) : map(m), var(v) {
      auto it = map.find(v);
      if (it != map.end()) {
        had = true;
        prev = it->second;
      }
      map[v] = r;
    }
    Scoped(Scoped&& o) noexcept : map(o.map), var(std::move(o.var)), had(o.had), prev(std::move(o.prev)) { o.var = Var(); }
    ~Scoped() {
      if (!var.defined()) return;
      if (had) map[var] = prev;
      else map.erase(var);
    }
  };

  BufferRegion point_region(const Buffer& b, const std::vector<Expr>& indices) {
    if (indices.size() != b.ndim()) return BufferRegion::full(b);  // flat access
    std::vector<Range> rs;
    for (auto& i : indices) {
      if (auto* ramp = i.as<RampNode>()) {
        int64_t s;
        if (!is_const_int(ramp->stride, &s)) return BufferRegion::full(b);
        Expr span = make_int(s * (ramp->lanes - 1), ramp->base.dtype());
        if (s >= 0) rs.emplace_back(ramp->base, make_binary(BinOp::kAdd, span, make_int(1, span.dtype())));
        else rs.emplace_back(make_binary(BinOp::kAdd, ramp->base, span), make_int(1 - s * (ramp->lanes - 1), span.dtype()));
      } else if (auto* bc = i.as<BroadcastNode>()) {
        rs.emplace_back(bc->value, make_int(1, bc->value.dtype()));
      } else {
        rs.emplace_back(i, make_int(1, i.dtype()));
      }
    }
    return BufferRegion(b, std::move(rs));
  }

  struct List {
    std::vector<BufferRegion> regions;  // first-access order
    const BufferRegion* begin() const { return regions.data(); }
    const BufferRegion* end() const { return regions.data() + regions.size(); }
  };

  void add(List& list, const BufferRegion& raw) {
    BufferRegion r = relax_.empty() ? simplified(raw) : relax_region(raw, relax_, an_);
    for (auto& existing : list.regions) {
      if (existing.buffer.same_as(r.buffer)) {
        existing = region_union(existing, r, an_);
        return;
      }
    }
    list.regions.push_back(std::move(r));
  }

  BufferRegion simplified(const BufferRegion& r) {
    std::vector<Range> rs;
    for (auto& rg : r.region) rs.emplace_back(an_.simplify(rg.min), an_.simplify(rg.extent));
    return BufferRegion(r.buffer, std::move(rs));
  }

  Analyzer& an_;
  RelaxMap relax_;
  List reads_, writes_;
};

}  // namespace

AccessRegions collect_access_regions(const Stmt& s, Analyzer& analyzer) {
  AccessCollector c(analyzer);
  c.visit(s);
  return c.result();
}

}  // namespace tl
