#include "target/ascend/ascend_cv_split.h"

#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "op/tile_ops.h"
#include "sim/isa.h"
#include "target/ascend/ascend_infer_scope.h"

namespace tl {

namespace {

using sim::Mem;

constexpr int kC = 1, kV = 2;

Mem mem_or_none(const Buffer& b, bool* ok) {
  Mem m = Mem::kGM;
  *ok = sim::mem_of_scope(b.scope(), &m);
  return m;
}
bool in_mem(const Buffer& b, std::initializer_list<Mem> ms) {
  bool ok;
  Mem m = mem_or_none(b, &ok);
  if (!ok) return false;
  for (Mem x : ms)
    if (x == m) return true;
  return false;
}
bool cube_mem(const Buffer& b) { return in_mem(b, {Mem::kL1, Mem::kL0A, Mem::kL0B, Mem::kL0C}); }
bool ub(const Buffer& b) { return in_mem(b, {Mem::kUB}); }
bool gm(const Buffer& b) { return b.scope() == MemScope::kGlobal; }
bool is_gemm(const TileOpNode& op) { return is_tile_op(op, TileOpKind::kGemm); }
std::string at(const Span& s) { return s.defined() ? s.str() : "<unknown location>"; }
const char* side_name(int s) { return s == kC ? "cube" : "vector"; }

bool is_leaf(const Stmt& s) {
  if (s.as<TileOpNode>() || s.as<BufferStoreNode>() || s.as<EvaluateNode>()) return true;
  auto* f = s.as<ForNode>();
  return f && (f->for_kind == ForKind::kParallel || f->for_kind == ForKind::kVectorized);
}

// Tile ops that are no work of either core.
bool neutral_op(const TileOpNode& op) {
  TileOpKind kind;
  return tile_op_kind(op, &kind) && (is_annotation(kind) || kind == TileOpKind::kPrint);
}

struct BufUse {
  Buffer b;
  int side;
  bool read, write;
};

// Element accesses of a leaf (stores and loads, also inside a T.Parallel nest).
void element_accesses(const Stmt& s, std::vector<BufUse>& out) {
  post_order_visit(s, [&](const Stmt& st) {
    if (auto* w = st.as<BufferStoreNode>()) out.push_back({w->buffer, kV, false, true});
  });
  for_each_expr(s, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      if (auto* l = x.as<BufferLoadNode>()) out.push_back({l->buffer, kV, true, false});
    });
  });
}

bool init_always(const TileOpNode& op) {
  for (const char* k : {"init", "initC", "clear_accum"}) {
    auto it = op.attrs.find(k);
    if (it == op.attrs.end() || it->second.is_none()) continue;
    if (it->second.kind() == Attr::kExpr) {
      int64_t v;
      return is_const_int(it->second.as_expr(), &v) && v != 0;
    }
    return it->second.as_bool();
  }
  return false;
}

// True when a gemm never overwrites its accumulator (initC / clear_accum / init constant false or absent).
bool init_never(const TileOpNode& op) {
  for (const char* k : {"init", "initC", "clear_accum"}) {
    auto it = op.attrs.find(k);
    if (it == op.attrs.end() || it->second.is_none()) continue;
    if (it->second.kind() == Attr::kExpr) {
      int64_t v;
      if (!is_const_int(it->second.as_expr(), &v) || v != 0) return false;
    } else if (it->second.kind() == Attr::kBool && it->second.as_bool()) {
      return false;
    }
  }
  return true;
}

class Splitter {
 public:
  // ---- 1. buffers touched by vector work ----
  void find_cross(const Stmt& body) {
    post_order_visit(body, [&](const Stmt& s) {
      if (!is_leaf(s)) return;
      if (auto* op = s.as<TileOpNode>()) {
        if (is_tile_op(*op, TileOpKind::kCopy) || is_gemm(*op) || neutral_op(*op)) return;
        for (auto& a : op->args)
          if (a.is_region()) mark(a.region.buffer, s.span(), sim::describe_tile_op(*op));
        for (auto& w : sim::tile_op_access(*op).writes) vector_written_.insert(w.buffer.get());
        return;
      }
      if (s.as<EvaluateNode>()) return;
      std::vector<BufUse> us;
      element_accesses(s, us);
      for (auto& u : us) {
        mark(u.b, s.span(), "an element access of '" + u.b.name() + "'");
        if (u.write) vector_written_.insert(u.b.get());
      }
    });
  }

  // ---- 2. where each cross buffer's current value lives ----
  using State = std::map<const BufferNode*, int>;
  void walk(const Stmt& s, State& st) {
    if (!s.defined()) return;
    if (is_leaf(s)) return leaf(s, st);
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (auto& c : s.as<SeqStmtNode>()->seq) walk(c, st);
        return;
      case StmtKind::kFor: {
        State entry = st;
        for (int it = 0; it < 16; ++it) {
          State cur = entry;
          walk(s.as<ForNode>()->body, cur);
          State met = meet(entry, cur);
          if (met == entry) break;
          entry = met;
        }
        st = entry;
        return;
      }
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        State a = st;
        walk(n->then_case, a);
        State b = st;
        walk(n->else_case, b);
        st = meet(a, b);
        return;
      }
      case StmtKind::kLet: return walk(s.as<LetStmtNode>()->body, st);
      case StmtKind::kAllocate: return walk(s.as<AllocateNode>()->body, st);
      case StmtKind::kAttr: return walk(s.as<AttrStmtNode>()->body, st);
      case StmtKind::kKernel: return walk(s.as<KernelLaunchNode>()->body, st);
      default: return;
    }
  }

  // ---- 3. rewriting ----
  Stmt rewrite(const Stmt& body);

  std::map<Buffer, Buffer, BufferLess> twins;  // cube buffer -> UB twin
  std::vector<std::string> workspaces;

 private:
  void mark(const Buffer& b, const Span& sp, const std::string& what) {
    if (!cube_mem(b) || twins.count(b)) return;
    if (in_mem(b, {Mem::kL0A, Mem::kL0B}))
      throw_error<SyntaxError>(at(sp), ": ", what, " is vector work on '", b.name(), "', which is in ",
                               in_mem(b, {Mem::kL0A}) ? "L0A" : "L0B",
                               " (a T.gemm A/B operand): the vector core cannot reach it and L0A/L0B have no path "
                               "to GM; compute on a T.alloc_shared buffer and pass that to T.gemm instead");
    twins[b] = b.with_scope(MemScope::kUB).with_name(b.name() + "_ub");
  }
  bool cross(const Buffer& b) const { return twins.count(b) > 0; }

  static State meet(const State& a, const State& b) {
    State r = a;
    for (auto& [k, v] : b) {
      auto it = r.find(k);
      r[k] = (it == r.end() ? (kC | kV) : it->second) & v;
    }
    return r;
  }

  std::vector<BufUse> uses_of(const Stmt& s, const State& st) {
    std::vector<BufUse> us;
    if (auto* op = s.as<TileOpNode>()) {
      if (neutral_op(*op)) return us;
      if (is_gemm(*op)) {
        for (int i = 0; i < 3 && i < int(op->args.size()); ++i) {
          if (!op->args[i].is_region() || !cross(op->args[i].region.buffer)) continue;
          us.push_back({op->args[i].region.buffer, kC, i < 2 || !init_always(*op), i == 2});
        }
        return us;
      }
      if (is_tile_op(*op, TileOpKind::kCopy) && op->args.size() >= 2 && op->args[0].is_region() && op->args[1].is_region()) {
        const Buffer& src = op->args[0].region.buffer;
        const Buffer& dst = op->args[1].region.buffer;
        bool sx = cross(src), dx = cross(dst);
        if (sx && dx) {
          us.push_back({src, kV, true, false});
          us.push_back({dst, kV, false, true});
        } else if (sx) {
          int side = kV;
          if (ub(dst) || cube_mem(dst)) side = kC;  // explicit transfer / L1 -> L0A/L0B
          // To GM: from L0C (FIX) unless vector work rewrites the buffer (then the UB twin holds
          // the final value); L1 has no path to GM, so from the twin.
          else if (gm(dst)) side = in_mem(src, {Mem::kL0C}) && !vector_written_.count(src.get()) ? kC : kV;
          us.push_back({src, side, true, false});
        } else if (dx) {
          int side = kV;
          if (in_mem(dst, {Mem::kL1}) && (ub(src) || gm(src) || cube_mem(src))) side = kC;
          us.push_back({dst, side, false, true});
        }
        return us;
      }
      sim::OpAccess acc = sim::tile_op_access(*op);
      for (auto& r : acc.reads)
        if (cross(r.buffer)) us.push_back({r.buffer, kV, true, false});
      for (auto& w : acc.writes)
        if (cross(w.buffer)) us.push_back({w.buffer, kV, false, true});
      return us;
    }
    std::vector<BufUse> all;
    element_accesses(s, all);
    for (auto& u : all)
      if (cross(u.b)) us.push_back(u);
    return us;
  }

  static int valid(const State& st, const Buffer& b) {
    auto it = st.find(b.get());
    return it == st.end() ? (kC | kV) : it->second;
  }

  public:
  // Clears what a walk records (the accumulating gemms found so far are kept: the walk is repeated
  // until they are stable, so that every recorded transfer belongs to the final decisions).
  void reset_walk() {
    to_twin_.clear();
    transfers_.clear();
    transfer_buf_.clear();
    dual_load_.clear();
  }
  size_t accumulating() const { return accumulate_.size() + accum_bufs_.size(); }

 private:

  // A gemm accumulating (initC=False) into an L0C buffer whose current value the vector core computed
  // (flash attention's `acc_o *= correction` between the P @ V gemms). Nothing writes L0C but the cube,
  // so the gemm gets a fresh accumulator instead: part = A @ B (initC=True) on the cube, then the
  // vector core adds it to its copy (acc_ub += part, through a GM workspace like every L0C -> UB
  // transfer). From then on every gemm into that buffer computes into the part (an initC=True one is
  // copied to the vector copy instead of added), so the buffer's value always lives on the vector
  // side and no path can find a stale L0C version current.
  bool accumulate_leaf(const Stmt& s, State& st) {
    auto* op = s.as<TileOpNode>();
    if (!op || !is_gemm(*op) || op->args.size() < 3 || !op->args[2].is_region()) return false;
    const Buffer& c = op->args[2].region.buffer;
    if (!cross(c) || !in_mem(c, {Mem::kL0C})) return false;
    const bool set = init_always(*op);
    if (!accum_bufs_.count(c.get()) && (set || (valid(st, c) & kC))) return false;
    if (!set && !init_never(*op))
      throw_error<SyntaxError>(at(s.span()), ": the cube core accumulates into '", c.name(),
                               "' (L0C), whose current value was computed by the vector core, with an initC decided "
                               "at run time; the compiler can only split an accumulation (initC=False: the cube "
                               "computes the product into a fresh accumulator and the vector core adds it). Use "
                               "initC=False, or start the gemm with initC=True and add the vector term after it");
    accumulate_.insert(s.get());
    accum_bufs_[c.get()] = c;
    for (int i = 0; i < 2; ++i) {
      if (!op->args[i].is_region() || !cross(op->args[i].region.buffer)) continue;
      const Buffer& b = op->args[i].region.buffer;
      if (!(valid(st, b) & kC)) {
        transfers_[s.get()].insert({b.get(), kC});
        transfer_buf_[b.get()] = b;
      }
      st[b.get()] = valid(st, b) | kC;
    }
    if (!set && !(valid(st, c) & kV)) {  // the twin is stale: it gets the L0C value first
      transfers_[s.get()].insert({c.get(), kV});
      transfer_buf_[c.get()] = c;
    }
    st[c.get()] = kV;
    return true;
  }

  void leaf(const Stmt& s, State& st) {
    if (accumulate_leaf(s, st)) return;
    // A GM tile loaded into an L1 buffer that vector work also reads: L1 has no path to UB, so the
    // tile is loaded twice, into L1 and into the UB twin (both versions current).
    if (auto* op = s.as<TileOpNode>(); op && is_tile_op(*op, TileOpKind::kCopy) && op->args.size() >= 2 && op->args[0].is_region() &&
                                         op->args[1].is_region() && gm(op->args[0].region.buffer) &&
                                         cross(op->args[1].region.buffer) &&
                                         in_mem(op->args[1].region.buffer, {Mem::kL1})) {
      dual_load_.insert(s.get());
      st[op->args[1].region.buffer.get()] = kC | kV;
      return;
    }
    std::vector<BufUse> us = uses_of(s, st);
    for (auto& u : us) {
      if (u.side == kV) to_twin_[s.get()].insert(u.b.get());
      if (!u.read) continue;
      if (!(valid(st, u.b) & u.side)) {
        transfers_[s.get()].insert({u.b.get(), u.side});
        transfer_buf_[u.b.get()] = u.b;
      }
      st[u.b.get()] = valid(st, u.b) | u.side;
    }
    for (auto& u : us)
      if (u.write) st[u.b.get()] = u.side;
  }

  friend class Rewriter;
  std::map<const StmtNode*, std::set<const BufferNode*>> to_twin_;
  std::map<const StmtNode*, std::set<std::pair<const BufferNode*, int>>> transfers_;
  std::map<const BufferNode*, Buffer> transfer_buf_;
  std::set<const BufferNode*> vector_written_;
  std::set<const StmtNode*> dual_load_;
  std::set<const StmtNode*> accumulate_;
  std::map<const BufferNode*, Buffer> accum_bufs_;  // L0C buffers of accumulating gemms
  std::map<const BufferNode*, std::pair<Buffer, Buffer>> parts_;  // -> (L0C part, UB part)

 public:
  const std::pair<Buffer, Buffer>& parts_of(const Buffer& c) {
    auto it = parts_.find(c.get());
    if (it != parts_.end()) return it->second;
    Buffer p = c.with_name(c.name() + "_part");
    Buffer pu = c.with_scope(MemScope::kUB).with_name(c.name() + "_part_ub");
    return parts_[c.get()] = {p, pu};
  }
};

// Adds the twins' allocations, moves vector statements to the twins and inserts the transfers.
class Rewriter : public StmtMutator {
 public:
  explicit Rewriter(Splitter& s) : s_(s) {}

 protected:
  Stmt leaf(const Stmt& s) {
    if (s_.dual_load_.count(s.get())) {
      const Buffer& dst = s.as<TileOpNode>()->args[1].region.buffer;
      return make_seq({s, substitute_buffers(s, {{dst, s_.twins.at(dst)}})}, s.span());
    }
    Stmt r = s;
    if (s_.accumulate_.count(s.get())) r = accumulate(s);
    auto tw = s_.to_twin_.find(s.get());
    if (tw != s_.to_twin_.end()) {
      std::map<Buffer, Buffer, BufferLess> m;
      for (auto& [b, t] : s_.twins)
        if (tw->second.count(b.get())) m[b] = t;
      r = substitute_buffers(s, m);
    }
    auto tr = s_.transfers_.find(s.get());
    if (tr == s_.transfers_.end()) return r;
    std::vector<Stmt> seq;
    for (auto& [bn, side] : tr->second) {
      const Buffer& b = s_.transfer_buf_.at(bn);
      const Buffer& twin = s_.twins.at(b);
      if (side == kV) {
        if (!in_mem(b, {Mem::kL0C}))
          throw_error<SyntaxError>(at(s.span()), ": vector work reads '", b.name(), "', whose current value is in ",
                                   in_mem(b, {Mem::kL1}) ? "L1" : "a cube memory",
                                   " (written by the cube core); L1 has no path to GM or UB, so the vector core "
                                   "cannot get it. Load the data into the vector buffer from GM instead");
        seq.push_back(make_tile_op("copy", {BufferRegion::full(b), BufferRegion::full(twin)}, {}, s.span()));
      } else {
        if (!in_mem(b, {Mem::kL1}))
          throw_error<SyntaxError>(at(s.span()), ": the cube core reads '", b.name(),
                                   "' (L0C), whose current value was computed by the vector core; nothing writes "
                                   "L0C but T.gemm, so a vector result cannot become a gemm accumulator. Start the "
                                   "gemm with initC=True and add the vector term after it");
        seq.push_back(make_tile_op("copy", {BufferRegion::full(twin), BufferRegion::full(b)}, {}, s.span()));
      }
    }
    seq.push_back(r);
    return make_seq(seq, s.span());
  }
  // part = A @ B (fresh accumulator); part_ub <- part (L0C -> UB, through GM below); acc_ub += part_ub.
  Stmt accumulate(const Stmt& s) {
    const TileOpNode* op = s.as<TileOpNode>();
    const BufferRegion& c = op->args[2].region;
    const auto& [part, part_ub] = s_.parts_of(c.buffer);
    const Buffer& twin = s_.twins.at(c.buffer);
    std::vector<TileArg> args = op->args;
    args[2] = BufferRegion(part, c.region);
    AttrMap attrs = op->attrs;
    for (const char* k : {"init", "initC", "clear_accum"})
      if (attrs.count(k)) attrs[k] = Attr(make_bool(true));
    if (!attrs.count("init") && !attrs.count("initC") && !attrs.count("clear_accum"))
      attrs["clear_accum"] = Attr(make_bool(true));
    if (init_always(*op))  // acc_ub <- part
      return make_seq({make_tile_op(op->op, args, attrs, s.span()),
                       make_tile_op("copy", {BufferRegion(part, c.region), BufferRegion(twin, c.region)}, {}, s.span())},
                      s.span());
    return make_seq({make_tile_op(op->op, args, attrs, s.span()),
                     make_tile_op("copy", {BufferRegion(part, c.region), BufferRegion(part_ub, c.region)}, {}, s.span()),
                     make_tile_op("tile.add", {BufferRegion(twin, c.region), BufferRegion(twin, c.region),
                                               BufferRegion(part_ub, c.region)}, {}, s.span())},
                    s.span());
  }
  Stmt mutate_tile_op(const TileOpNode*, const Stmt& s) override { return leaf(s); }
  Stmt mutate_store(const BufferStoreNode*, const Stmt& s) override { return leaf(s); }
  Stmt mutate_evaluate(const EvaluateNode*, const Stmt& s) override { return leaf(s); }
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    if (is_leaf(s)) return leaf(s);
    return StmtMutator::mutate_for(n, s);
  }
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    auto it = s_.twins.find(n->buffer);
    if (it != s_.twins.end()) body = make_allocate(it->second, body, n->span);
    if (s_.accum_bufs_.count(n->buffer.get())) {
      const auto& [part, part_ub] = s_.parts_of(n->buffer);
      body = make_allocate(part, make_allocate(part_ub, body, n->span), n->span);
    }
    return body.same_as(n->body) ? s : make_allocate(n->buffer, body, n->span);
  }

 private:
  Splitter& s_;
};

// L0C -> UB and UB -> L1 copies become two copies through a GM workspace.
class WorkspaceRewriter : public StmtMutator {
 public:
  std::vector<std::string> names;

 protected:
  Stmt mutate_tile_op(const TileOpNode* op, const Stmt& s) override {
    if (!is_tile_op(*op, TileOpKind::kCopy) || op->args.size() < 2 || !op->args[0].is_region() || !op->args[1].is_region()) return s;
    const BufferRegion& src = op->args[0].region;
    const BufferRegion& dst = op->args[1].region;
    bool c2v = in_mem(src.buffer, {Mem::kL0C}) && ub(dst.buffer);
    bool v2c = ub(src.buffer) && in_mem(dst.buffer, {Mem::kL1});
    if (!c2v && !v2c) return s;
    std::vector<Expr> shape;
    for (auto& r : src.region) {
      int64_t e;
      if (!is_const_int(r.extent, &e))
        throw_error<NotImplemented>(at(s.span()), ": not implemented: the cube/vector transfer ",
                                    sim::describe_tile_op(*op), " has a region of dynamic extent (",
                                    to_string(r.extent), "); its GM workspace needs a static size");
      shape.push_back(make_int(e));
    }
    // L0C -> GM casts on the way out (FIX); the workspace holds the destination's element type.
    DataType dt = c2v ? dst.buffer.dtype() : src.buffer.dtype();
    std::string name = "cv_ws" + std::to_string(names.size()) + "_" + src.buffer.name();
    Buffer ws(name, dt, shape, MemScope::kGlobal, {}, s.span());
    names.push_back(name);
    AttrMap a1 = op->attrs, a2;
    Stmt out = make_tile_op("copy", {src, BufferRegion::full(ws)}, a1, s.span());
    Stmt in = make_tile_op("copy", {BufferRegion::full(ws), dst}, a2, s.span());
    return make_seq({out, in}, s.span());
  }
};

}  // namespace

PrimFunc ascend_cv_split(const PrimFunc& f, const PassContext& ctx) {
  if (!ascend_cv_combine_enabled(ctx)) return f;
  Splitter sp;
  sp.find_cross(f.body());
  Stmt body = f.body();
  if (!sp.twins.empty()) {
    Splitter::State st;
    sp.walk(body, st);
    // Accumulating gemms found by a walk change what later statements see; walk again until they
    // are stable (they only grow), keeping only the last walk's transfers.
    for (int round = 0; round < 8; ++round) {
      size_t n = sp.accumulating();
      if (n == 0) break;
      sp.reset_walk();
      st.clear();
      sp.walk(body, st);
      if (sp.accumulating() == n) break;
    }
    Rewriter rw(sp);
    body = rw.mutate(body);
  }
  WorkspaceRewriter ws;
  body = ws.mutate(body);
  if (sp.twins.empty() && ws.names.empty()) return f;
  AttrMap attrs = f.attrs();
  attrs["ascend.cv_workspaces"] = Attr(ws.names);
  attrs["enable_auto_sync"] = Attr(true);
  return f.with_body(body).with_attrs(attrs);
}

TL_REGISTER_PASS("ascend_cv_split", ascend_cv_split);

}  // namespace tl
