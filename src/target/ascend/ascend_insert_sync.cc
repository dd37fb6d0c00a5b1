#include "target/ascend/ascend_insert_sync.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "ir/error.h"
#include "ir/functor.h"
#include "target/ascend/ascend_sync_analysis.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

using ascend_sync::Need;
using sim::Pipe;

struct PairKey {
  int src, dst;
  bool operator<(const PairKey& o) const { return std::tie(src, dst) < std::tie(o.src, o.dst); }
};

class Inserter {
 public:
  Inserter(const PrimFunc& f, const sim::MachineModel& m) : model_(m) { reserve_existing(f); }

  std::set<const StmtNode*> inserted;
  int count = 0, fallbacks = 0;

  PrimFunc apply(const PrimFunc& f, const std::vector<std::pair<sim::CoreKind, Need>>& needs) {
    before_.clear();
    after_.clear();
    replace_.clear();
    std::set<std::tuple<const StmtNode*, int, int, int>> pairs_done;
    std::map<std::tuple<const ascend_sync::SNode*, int, int>, Need> carried;
    std::set<const StmtNode*> rotated;
    std::vector<std::tuple<const ascend_sync::SNode*, int, int>> carried_order;
    bool carried_done = false;
    auto flush_carried = [&]() {
      if (carried_done) return;
      carried_done = true;
      for (auto& key : carried_order) {
        auto it = carried.find(key);
        if (it == carried.end()) continue;
        carried_flag(it->second, static_cast<int>(needs_kind(needs, it->second)));
        carried.erase(it);
      }
    };
    // Loop-carried flags first: they hold their ids for the whole loop, so the pairs of this round
    // must not take them.
    std::vector<std::pair<sim::CoreKind, Need>> ordered;
    for (auto& kn : needs)
      if (kn.second.kind == Need::kCarried) ordered.push_back(kn);
    for (auto& kn : needs)
      if (kn.second.kind != Need::kCarried) ordered.push_back(kn);
    for (auto& [kind, n] : ordered) {
      int k = static_cast<int>(kind);
      switch (n.kind) {
        case Need::kBarrier:
          flush_carried();
          if (pairs_done.insert({n.before, int(n.src), int(n.dst), k}).second)
            add_before(n.before, n.before_in_scope, k, {barrier(n.src, n.before)});
          break;
        case Need::kPair:
          flush_carried();
          if (n.reuse && rotated.count(n.before)) break;  // another unrolled copy reported the same set
          if (n.reuse && rotate_pair(n)) {
            rotated.insert(n.before);
            break;
          }
          if (pairs_done.insert({n.before, int(n.src), int(n.dst), k}).second) pair(n, k);
          break;
        case Need::kCarried: {
          auto key = std::make_tuple(n.loop, int(n.src), int(n.dst));
          carried_order.push_back(key);
          auto it = carried.find(key);
          if (it == carried.end()) {
            carried[key] = n;
          } else {
            Need& m = it->second;
            if (n.before_index < m.before_index) {
              m.before_index = n.before_index;
              m.before = n.before;
              m.before_in_scope = n.before_in_scope;
            }
            if (n.after_index > m.after_index) {
              m.after_index = n.after_index;
              m.after = n.after;
              m.after_in_scope = n.after_in_scope;
            }
            m.distance = std::min(m.distance, n.distance);
          }
          break;
        }
        case Need::kBarrierAll:
          add_before(n.before, n.before_in_scope, k, {call("ascend.barrier_all", {}, n.before)});
          ++fallbacks;
          break;
      }
    }
    flush_carried();
    Rewriter rw(*this);
    return f.with_body(rw.mutate(f.body()));
  }

  // Turns every remaining need into a barrier_all (last resort after the iteration cap).
  PrimFunc fallback(const PrimFunc& f, const std::vector<std::pair<sim::CoreKind, Need>>& needs) {
    before_.clear();
    after_.clear();
    replace_.clear();
    std::set<std::pair<const StmtNode*, int>> done;
    for (auto& [kind, n] : needs) {
      int k = static_cast<int>(kind);
      const StmtNode* at = n.kind == Need::kCarried ? n.after : n.before;
      bool sc = n.kind == Need::kCarried ? n.after_in_scope : n.before_in_scope;
      if (!done.insert({at, k}).second) continue;
      Stmt b = call("ascend.barrier_all", {}, at);
      if (n.kind == Need::kCarried) add_after(at, sc, k, {b});
      else add_before(at, sc, k, {b});
      ++fallbacks;
    }
    Rewriter rw(*this);
    return f.with_body(rw.mutate(f.body()));
  }

 private:
  static sim::CoreKind needs_kind(const std::vector<std::pair<sim::CoreKind, Need>>& needs, const Need& n) {
    for (auto& [k, m] : needs)
      if (m.loop == n.loop && m.src == n.src && m.dst == n.dst) return k;
    return sim::CoreKind::kAIC;
  }

  // Ids the kernel already uses on a pipe pair (user flags, gemm_v0's), never given out.
  void reserve_existing(const PrimFunc& f) {
    post_order_visit(f.body(), [&](const Stmt& s) {
      auto* ev = s.as<EvaluateNode>();
      auto* c = ev ? ev->value.as<CallNode>() : nullptr;
      if (!c || (c->op != "ascend.set_flag" && c->op != "ascend.wait_flag") || c->args.size() < 3) return;
      Pipe a, b;
      auto* sa = c->args[0].as<StringImmNode>();
      auto* sb = c->args[1].as<StringImmNode>();
      if (!sa || !sb || !sim::parse_pipe(sa->value, &a) || !sim::parse_pipe(sb->value, &b)) return;
      int64_t v;
      auto& r = reserved_[{int(a), int(b)}];
      if (is_const_int(c->args[2], &v)) {
        r.insert(v);
      } else {
        // An id computed from loop variables (ping-pong): reserve every value it takes for small inputs.
        std::map<const VarNode*, int64_t> vals;
        std::vector<const VarNode*> vars;
        for_each_subexpr(c->args[2], [&](const Expr& x) {
          if (auto* vn = x.as<VarNode>()) vars.push_back(vn);
        });
        ascend_sync::KernelFacts none;
        for (int64_t t = 0; t < 8; ++t) {
          for (auto* vn : vars) vals[vn] = t;
          if (ascend_sync::eval_with(c->args[2], vals, none, &v)) r.insert(v);
        }
      }
    });
  }

  std::vector<int64_t> take_ids(Pipe s, Pipe d, int n) {
    auto& r = reserved_[{int(s), int(d)}];
    for (int64_t base = 0; base + n <= model_.flag_ids; ++base) {
      bool ok = true;
      for (int j = 0; j < n; ++j) ok &= !r.count(base + j);
      if (!ok) continue;
      std::vector<int64_t> ids;
      for (int j = 0; j < n; ++j) {
        r.insert(base + j);
        ids.push_back(base + j);
      }
      return ids;
    }
    return {};
  }
  int64_t pair_id(Pipe s, Pipe d) {
    // Adjacent pairs rotate over the ids nobody holds, so consecutive pairs rarely reuse one.
    auto& r = reserved_[{int(s), int(d)}];
    int& next = rotate_[{int(s), int(d)}];
    for (int t = 0; t < model_.flag_ids; ++t) {
      int64_t id = (next + t) % model_.flag_ids;
      if (!r.count(id)) {
        next = static_cast<int>(id + 1);
        return id;
      }
    }
    return -1;
  }

  Stmt call(const char* op, std::vector<Expr> args, const StmtNode* anchor) {
    Stmt s = make_evaluate(make_call(DataType::Void(), op, std::move(args)), anchor ? anchor->span : Span{});
    inserted.insert(s.get());
    if (std::string(op) != "ascend.barrier_all") ++count;
    return s;
  }
  Stmt flag(const char* op, Pipe s, Pipe d, Expr id, const StmtNode* anchor) {
    return call(op, {make_string(sim::pipe_user_name(s)), make_string(sim::pipe_user_name(d)), std::move(id)}, anchor);
  }
  Stmt barrier(Pipe p, const StmtNode* anchor) {
    return call("ascend.pipe_barrier", {make_string(sim::pipe_user_name(p))}, anchor);
  }

  void pair(const Need& n, int kind) {
    int64_t id = pair_id(n.src, n.dst);
    if (id < 0) {
      add_before(n.before, n.before_in_scope, kind, {call("ascend.barrier_all", {}, n.before)});
      ++fallbacks;
      return;
    }
    Stmt s = flag("ascend.set_flag", n.src, n.dst, make_int(id), n.before);
    Stmt w = flag("ascend.wait_flag", n.src, n.dst, make_int(id), n.before);
    pairs_[s.get()] = PairInfo{w.get(), n.src, n.dst, n.loop ? n.loop->var : Var(), n.loop ? n.loop->min : Expr(),
                               false};
    add_before(n.before, n.before_in_scope, kind, {s, w});
  }

  // A pair whose id is reused too early inside a loop: alternate between two ids by iteration
  // (the producer then only needs to know the consumer's wait of two iterations ago).
  bool rotate_pair(const Need& n) {
    auto it = pairs_.find(n.before);
    if (it == pairs_.end() || it->second.rotating || !it->second.var.defined()) return false;
    PairInfo info = it->second;
    std::vector<int64_t> ids = take_ids(info.src, info.dst, 2);
    if (ids.empty()) return false;
    Expr id = make_int(ids[0]) + floormod(info.var - info.min, make_int(2));
    Stmt s = flag("ascend.set_flag", info.src, info.dst, id, n.before);
    Stmt w = flag("ascend.wait_flag", info.src, info.dst, id, n.before);
    count -= 2;  // replacements, not new syncs
    replace_[n.before] = s;
    replace_[info.wait] = w;
    pairs_.erase(it);
    pairs_[s.get()] = PairInfo{w.get(), info.src, info.dst, info.var, info.min, true};
    return true;
  }

  void carried_flag(const Need& n, int kind) {
    int d = std::max(1, n.distance);
    std::vector<int64_t> ids = take_ids(n.src, n.dst, d);
    const StmtNode* loop = n.loop->stmt;
    bool loop_scope = n.loop->in_scope;
    if (ids.empty()) {
      add_after(n.after, n.after_in_scope, kind, {call("ascend.barrier_all", {}, n.after)});
      ++fallbacks;
      return;
    }
    Expr id = make_int(ids[0]);
    if (d > 1) id = make_int(ids[0]) + floormod(n.loop->var - n.loop->min, make_int(d));
    std::vector<Stmt> arm, drain;
    for (int64_t i : ids) {
      arm.push_back(flag("ascend.set_flag", n.src, n.dst, make_int(i), loop));
      drain.push_back(flag("ascend.wait_flag", n.src, n.dst, make_int(i), loop));
    }
    add_before(loop, loop_scope, kind, arm);
    add_after(loop, loop_scope, kind, drain);
    groups_.push_back(CarriedGroup{n.loop->var.get(), arm, drain, kind, n.src, n.dst, ids});
    add_before(n.before, n.before_in_scope, kind, {flag("ascend.wait_flag", n.src, n.dst, id, n.before)});
    add_after(n.after, n.after_in_scope, kind, {flag("ascend.set_flag", n.src, n.dst, id, n.after)});
  }

  Stmt add(std::map<const StmtNode*, std::vector<Stmt>>& m, const StmtNode* at, bool in_scope, int kind,
           std::vector<Stmt> ss) {
    Stmt s = make_seq(std::move(ss));
    if (!in_scope) s = make_attr("scope", Attr(std::string(kind == 0 ? "C" : "V")), s);
    inserted.insert(s.get());
    m[at].push_back(s);
    return s;
  }
  Stmt add_before(const StmtNode* at, bool sc, int kind, std::vector<Stmt> ss) { return add(before_, at, sc, kind, ss); }
  Stmt add_after(const StmtNode* at, bool sc, int kind, std::vector<Stmt> ss) { return add(after_, at, sc, kind, ss); }

 public:
  // A loop-carried flag's pre-arm and drain, anchored around `loop`.
  struct CarriedGroup {
    const VarNode* loop;  // the loop's variable (loop statements are rebuilt as syncs are added)
    std::vector<Stmt> arm, drain;  // the set / wait statements (never rebuilt)
    int kind;
    Pipe src, dst;
    std::vector<int64_t> ids;
  };
  std::vector<CarriedGroup> groups_;

  // Moves a group's pre-arm / drain around the statement `outer` (an enclosing loop).
  PrimFunc move_group(const PrimFunc& f, CarriedGroup* g, const StmtNode* outer, bool outer_in_scope) {
    before_.clear();
    after_.clear();
    replace_.clear();
    for (auto& st : g->arm) replace_[st.get()] = make_nop();
    for (auto& st : g->drain) replace_[st.get()] = make_nop();
    std::vector<Stmt> arm, drain;
    for (int64_t i : g->ids) {
      arm.push_back(flag("ascend.set_flag", g->src, g->dst, make_int(i), outer));
      drain.push_back(flag("ascend.wait_flag", g->src, g->dst, make_int(i), outer));
    }
    count -= 2 * static_cast<int>(g->ids.size());  // moved, not added
    add_before(outer, outer_in_scope, g->kind, arm);
    add_after(outer, outer_in_scope, g->kind, drain);
    Rewriter rw(*this);
    PrimFunc out = f.with_body(rw.mutate(f.body()));
    pending_ = {arm, drain};
    return out;
  }
  // Makes the last move_group's statements the group's own (the move was kept).
  void accept_move(CarriedGroup* g) {
    g->arm = pending_.first;
    g->drain = pending_.second;
  }
  void reject_move(const CarriedGroup& g) { count += 2 * static_cast<int>(g.ids.size()); }

 private:

  class Rewriter : public StmtMutator {
   public:
    explicit Rewriter(Inserter& in) : in_(in) {}
    using StmtMutator::mutate;
    Stmt mutate(const Stmt& s) override {
      const StmtNode* key = s.get();
      auto r = in_.replace_.find(key);
      Stmt m = r != in_.replace_.end() ? r->second : StmtMutator::mutate(s);
      auto b = in_.before_.find(key);
      auto a = in_.after_.find(key);
      if (b == in_.before_.end() && a == in_.after_.end()) return m;
      std::vector<Stmt> seq;
      if (b != in_.before_.end()) seq.insert(seq.end(), b->second.begin(), b->second.end());
      seq.push_back(m);
      if (a != in_.after_.end()) seq.insert(seq.end(), a->second.begin(), a->second.end());
      return make_seq(seq, s.span());
    }

   private:
    Inserter& in_;
  };

  const sim::MachineModel& model_;
  std::map<PairKey, std::set<int64_t>> reserved_;
  std::map<PairKey, int> rotate_;
  std::map<const StmtNode*, std::vector<Stmt>> before_, after_;
  std::map<const StmtNode*, Stmt> replace_;
  std::pair<std::vector<Stmt>, std::vector<Stmt>> pending_;
  struct PairInfo {
    const StmtNode* wait;
    Pipe src, dst;
    Var var;  // innermost loop around the pair
    Expr min;
    bool rotating;
  };
  std::map<const StmtNode*, PairInfo> pairs_;
};

bool dump_needs() {
  const char* e = std::getenv("TL_ASCEND_SYNC_DEBUG");
  return e && *e && std::string(e) != "0";
}

// The loops enclosing `target` in `kind`'s tree, outermost first.
bool loop_chain(const ascend_sync::SNode& n, const VarNode* target, std::vector<const ascend_sync::SNode*>* chain) {
  if (n.kind == ascend_sync::SNode::kLoop && n.var.get() == target) return true;
  if (n.kind == ascend_sync::SNode::kLoop) chain->push_back(&n);
  for (auto& c : n.children)
    if (loop_chain(*c, target, chain)) return true;
  if (n.kind == ascend_sync::SNode::kLoop) chain->pop_back();
  return false;
}

// bisheng --cce-auto-sync (TileLang-Ascend's AscendC route) orders these pipe pairs itself: vector
// after vector, and the scalar unit with MTE2, MTE3 and the vector pipe, both ways. Everything else
// (MTE2 -> V, V -> MTE3, the cube pipes, ...) is the kernel's job. Needs our own inserted flags
// create (flag reuse, double sets) are kept, and so are conflicts between different buffers that the
// memory planner put on shared bytes: the kernel's own syncs cannot know of those.
bool vendor_orders(const Need& n) {
  if (n.reuse || n.kind == Need::kBarrierAll || n.aliased) return true;
  using sim::Pipe;
  auto is = [](Pipe p, std::initializer_list<Pipe> l) { return std::find(l.begin(), l.end(), p) != l.end(); };
  if (n.src == Pipe::kV && n.dst == Pipe::kV) return true;
  if (n.src == Pipe::kS) return is(n.dst, {Pipe::kMTE2, Pipe::kMTE3, Pipe::kV});
  if (n.dst == Pipe::kS) return is(n.src, {Pipe::kMTE2, Pipe::kMTE3, Pipe::kV});
  return false;
}

// Which needs a run inserts: every one (TL_ASCEND_AUTO_SYNC), those bisheng's implicit sync covers
// (the AscendC route), or only those the memory planner created (kernels that sync themselves).
enum class Scope { kAll, kVendor, kPlanner };

bool keep(const Need& n, Scope s) {
  if (s == Scope::kAll) return true;
  if (s == Scope::kVendor) return vendor_orders(n);
  return n.reuse || n.kind == Need::kBarrierAll || n.aliased;
}

std::vector<std::pair<sim::CoreKind, Need>> analyse(const PrimFunc& f, const sim::MachineModel& model,
                                                    const std::set<const StmtNode*>& inserted, Scope scope) {
  ascend_sync::KernelFacts facts = ascend_sync::collect_facts(f, model);
  std::vector<std::pair<sim::CoreKind, Need>> needs;
  for (sim::CoreKind k : {sim::CoreKind::kAIC, sim::CoreKind::kAIV}) {
    auto tree = ascend_sync::build_tree(f, k, facts, inserted);
    for (auto& n : ascend_sync::find_needs(*tree, facts))
      if (keep(n, scope)) needs.emplace_back(k, n);
  }
  return needs;
}

// A flag carried by an inner loop, with ids rotating by its iteration, can stay armed across the
// iterations of the loops around it (its sets and waits alternate whatever the trip count), so the
// next outer iteration's first consumer waits only for the matching producer instead of the whole
// inner loop. Each hoist is kept only if the analysis still finds nothing missing.
PrimFunc hoist_carried_flags(PrimFunc cur, Inserter& ins, const sim::MachineModel& model, Scope scope) {
  for (size_t gi = 0; gi < ins.groups_.size(); ++gi) {
    Inserter::CarriedGroup& g = ins.groups_[gi];
    ascend_sync::KernelFacts facts = ascend_sync::collect_facts(cur, model);
    auto tree = ascend_sync::build_tree(cur, static_cast<sim::CoreKind>(g.kind), facts, ins.inserted);
    std::vector<const ascend_sync::SNode*> chain;
    if (!loop_chain(*tree, g.loop, &chain)) continue;
    for (const ascend_sync::SNode* outer : chain) {
      PrimFunc moved = ins.move_group(cur, &g, outer->stmt, outer->in_scope);
      auto needs = analyse(moved, model, ins.inserted, scope);
      if (dump_needs())
        for (auto& [k, n] : needs) std::cerr << "[ascend_insert_sync] hoist of group " << gi << " rejected: " << n.why << "\n";
      if (needs.empty()) {
        cur = moved;
        ins.accept_move(&g);
        break;
      }
      ins.reject_move(g);
    }
  }
  return cur;
}


}  // namespace

PrimFunc ascend_insert_sync(const PrimFunc& f, const PassContext& ctx) {
  bool enabled = config_bool(ctx.configs, "tl.ascend_auto_sync") || attr_bool(f.attrs(), "enable_auto_sync", false) ||
                 attr_bool(f.attrs(), "ascend.pipelined", false);
  // Without TL_ASCEND_AUTO_SYNC, the AscendC route still gets what bisheng's implicit sync adds, and
  // with memory planning every kernel gets the syncs its planned buffer sharing needs.
  Scope scope = enabled ? Scope::kAll
                : config_bool(ctx.configs, "tl.ascend_vendor_auto_sync") ? Scope::kVendor
                                                                           : Scope::kPlanner;
  if (scope == Scope::kPlanner && !config_bool(ctx.configs, "tl.ascend_memory_planning"))
    return f.with_attr("ascend.syncs_inserted", Attr(int64_t(0)));
  const sim::MachineModel& model = sim::machine_model(ctx.target.model);
  Inserter ins(f, model);
  PrimFunc cur = f;
  constexpr int kMaxRounds = 16;
  for (int round = 0;; ++round) {
    ascend_sync::KernelFacts facts = ascend_sync::collect_facts(cur, model);
    std::vector<std::pair<sim::CoreKind, Need>> needs;
    std::vector<std::unique_ptr<ascend_sync::SNode>> trees;  // keep the nodes the needs point into
    for (sim::CoreKind k : {sim::CoreKind::kAIC, sim::CoreKind::kAIV}) {
      trees.push_back(ascend_sync::build_tree(cur, k, facts, ins.inserted));
      for (auto& n : ascend_sync::find_needs(*trees.back(), facts))
        if (keep(n, scope)) needs.emplace_back(k, n);
    }
    if (dump_needs())
      for (auto& [k, n] : needs)
        std::cerr << "[ascend_insert_sync] round " << round << " " << sim::core_kind_name(k) << ": " << n.why
                  << (n.kind == Need::kCarried ? " (loop-carried, distance " + std::to_string(n.distance) + ")" : "")
                  << "\n";
    if (needs.empty()) break;
    cur = round < kMaxRounds ? ins.apply(cur, needs) : ins.fallback(cur, needs);
    if (round > kMaxRounds)
      throw_error<Error>("internal error: ascend_insert_sync did not converge for kernel '", f.name(), "'");
  }
  cur = hoist_carried_flags(cur, ins, model, scope);
  AttrMap attrs = cur.attrs();
  attrs["ascend.syncs_inserted"] = Attr(int64_t(ins.count));
  attrs["ascend.sync_fallbacks"] = Attr(int64_t(ins.fallbacks));
  return cur.with_attrs(attrs);
}

TL_REGISTER_PASS("ascend_insert_sync", ascend_insert_sync);

}  // namespace tl
