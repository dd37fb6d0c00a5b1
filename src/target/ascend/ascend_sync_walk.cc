// The abstract execution of ascend_sync_analysis.h: finds the unordered conflicting accesses of
// one core kind's statement tree and the syncs that order them.
#include <algorithm>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "sim/machine_model.h"
#include "target/ascend/ascend_sync_analysis.h"

namespace tl::ascend_sync {

using sim::Mem;
using sim::Pipe;
constexpr int kP = sim::kNumPipes;

namespace {

struct Clock {
  uint32_t c[kP] = {};
  void join(const Clock& o) {
    for (int i = 0; i < kP; ++i) c[i] = std::max(c[i], o.c[i]);
  }
  void meet(const Clock& o) {
    for (int i = 0; i < kP; ++i) c[i] = std::min(c[i], o.c[i]);
  }
};

struct Frame {
  const SNode* node;
  int child;
  int copy;
};

struct Record {
  const SNode* leaf;
  const AccessT* acc;
  Pipe pipe;
  uint32_t stamp;
  std::vector<Frame> path;
  std::map<const VarNode*, int64_t> vals;
};

struct FlagState {
  bool set = false;
  Clock snap;
  bool waited = false;
  uint32_t wait_stamp = 0;
};

struct State {
  Clock vc[kP];
  uint32_t cnt[kP] = {};
  Clock issue;
  std::vector<Record> records;
  std::map<std::tuple<int, int, int64_t>, FlagState> flags;
};

class Walker {
 public:
  explicit Walker(const KernelFacts& f) : facts_(f) {}

  std::vector<Need> run(const SNode& root) {
    State st;
    walk(root, st);
    return std::move(needs_);
  }

 private:
  Clock snapshot(const State& st, Pipe p) const {
    Clock c = st.vc[int(p)];
    c.c[int(p)] = st.cnt[int(p)];
    return c;
  }

  void walk(const SNode& n, State& st) {
    switch (n.kind) {
      case SNode::kSeq:
        for (size_t i = 0; i < n.children.size(); ++i) {
          path_.push_back({&n, static_cast<int>(i), 0});
          walk(*n.children[i], st);
          path_.pop_back();
        }
        return;
      case SNode::kLoop: {
        if (n.extent == 0) return;
        int64_t base = 0;
        int64_t v;
        if (eval_with(n.min, vals_, facts_, &v)) base = v;
        for (int c = 0; c < n.unroll; ++c) {
          vals_[n.var.get()] = base + c;
          path_.push_back({&n, 0, c});
          walk(*n.children[0], st);
          path_.pop_back();
        }
        vals_.erase(n.var.get());
        // A loop-carried flag found in this walk is drained after the loop: its waits order the
        // consumer pipe after the producer's last iteration.
        auto it = drains_.find(&n);
        if (it != drains_.end()) {
          for (auto [x, y] : it->second) st.vc[int(y)].join(snapshot(st, x));
          drains_.erase(it);
        }
        return;
      }
      case SNode::kIf: {
        State before = st;
        path_.push_back({&n, 0, 0});
        walk(*n.children[0], st);
        path_.pop_back();
        State other = before;
        for (int p = 0; p < kP; ++p) other.cnt[p] = st.cnt[p];
        path_.push_back({&n, 1, 0});
        walk(*n.children[1], other);
        path_.pop_back();
        // Join point. Stamps made inside one branch exist only on that path, so for them only that
        // path's knowledge counts; stamps from before the branch need both paths' knowledge.
        uint32_t b[kP], t[kP];
        for (int p = 0; p < kP; ++p) {
          b[p] = before.cnt[p];
          t[p] = st.cnt[p];
        }
        auto merge = [&](Clock& then_c, const Clock& else_c) {
          for (int p = 0; p < kP; ++p) {
            uint32_t tv = then_c.c[p], ev = else_c.c[p], m0 = std::min(tv, ev);
            if (m0 < b[p]) then_c.c[p] = m0;
            else if (tv < t[p]) then_c.c[p] = tv;
            else then_c.c[p] = std::max(t[p], ev);
          }
        };
        for (int p = 0; p < kP; ++p) {
          merge(st.vc[p], other.vc[p]);
          st.cnt[p] = std::max(st.cnt[p], other.cnt[p]);
        }
        merge(st.issue, other.issue);
        for (size_t i = before.records.size(); i < other.records.size(); ++i) st.records.push_back(other.records[i]);
        for (auto& [k, f] : st.flags) {
          auto it = other.flags.find(k);
          if (it == other.flags.end() || it->second.set != f.set) f.set = false;
          else merge(f.snap, it->second.snap);
        }
        return;
      }
      case SNode::kLeaf: leaf(n, st); return;
    }
  }

  int64_t flag_id(const SNode& n) {
    int64_t v = 0;
    if (n.id.defined() && !eval_with(n.id, vals_, facts_, &v)) v = -1;
    return v;
  }

  void leaf(const SNode& n, State& st) {
    switch (n.leaf) {
      case LeafKind::kInstr: instr(n, st); return;
      case LeafKind::kSetFlag: {
        int64_t id = flag_id(n);
        if (id < 0) return;
        Pipe s = n.src;
        st.vc[int(s)].join(st.issue);
        FlagState& f = st.flags[{int(s), int(n.dst), id}];
        if (n.inserted && f.set) {
          // An inserted set meeting a set flag: the placement is invalid (only hoisting tries it).
          Need nd;
          nd.kind = Need::kBarrierAll;
          nd.before = n.stmt;
          nd.before_in_scope = n.in_scope;
          nd.why = "double set";
          needs_.push_back(nd);
        }
        if (n.inserted && f.waited && st.vc[int(s)].c[int(n.dst)] < f.wait_stamp && s != n.dst) {
          // Reusing this id before the previous wait is ordered before the set: order dst -> src first.
          Need nd;
          nd.kind = Need::kPair;
          nd.src = n.dst;
          nd.dst = s;
          nd.before = n.stmt;
          nd.before_in_scope = n.in_scope;
          nd.why = "flag reuse";
          nd.reuse = true;
          nd.loop = innermost_loop(path_.size());
          needs_.push_back(nd);
          st.vc[int(s)].join(snapshot(st, n.dst));
        }
        f.set = true;
        f.snap = snapshot(st, s);
        return;
      }
      case LeafKind::kWaitFlag: {
        int64_t id = flag_id(n);
        if (id < 0) return;
        Pipe d = n.dst;
        FlagState& f = st.flags[{int(n.src), int(d), id}];
        if (!f.set) return;
        st.vc[int(d)].join(f.snap);
        st.vc[int(d)].join(st.issue);
        f.set = false;
        f.waited = true;
        f.wait_stamp = ++st.cnt[int(d)];
        if (d == Pipe::kS) {
          st.issue.join(f.snap);
          st.issue.c[int(Pipe::kS)] = f.wait_stamp;  // later-issued instructions follow the wait
        }
        if (d != Pipe::kV) st.vc[int(d)].c[int(d)] = f.wait_stamp;
        return;
      }
      case LeafKind::kBarrier:
        st.vc[int(n.pipe)].join(st.issue);
        if (n.pipe == Pipe::kV) st.vc[int(n.pipe)].c[int(n.pipe)] = st.cnt[int(n.pipe)];
        return;
      case LeafKind::kBarrierAll: {
        Clock j;
        for (int p = 0; p < kP; ++p) j.join(snapshot(st, Pipe(p)));
        for (auto& v : st.vc) v = j;
        st.issue.join(j);
        return;
      }
      case LeafKind::kOther: return;
    }
  }

  bool ranges_overlap(const Record& r, const AccessT& a) {
    if (r.acc->mem != a.mem) return false;
    if (!r.acc->buffer.same_as(a.buffer)) {
      if (a.mem == Mem::kGM) return false;  // distinct tensors
      if (r.acc->addr < 0 || a.addr < 0) return false;
      return r.acc->addr < a.addr + a.bytes && a.addr < r.acc->addr + r.acc->bytes;
    }
    if (r.acc->region.empty() || a.region.empty()) return true;
    // Same buffer: compare the regions with the loop variables of each side's iteration, and a few
    // shared samples for the other variables (block id, vector core id, lets of them, ...).
    for (int sample = 0; sample < 3; ++sample) {
      std::map<const VarNode*, int64_t> rv = r.vals, av = vals_;
      bool overlap = true, known = true;
      for (size_t d = 0; d < a.region.size() && d < r.acc->region.size(); ++d) {
        int64_t r0, re, a0, ae;
        auto ev = [&](const Expr& e, std::map<const VarNode*, int64_t>& m, int64_t* out) {
          if (eval_with(e, m, facts_, out)) return true;
          // Bind unknown variables to the sample's values, shared by both sides.
          bool again = false;
          for_each_subexpr(e, [&](const Expr& x) {
            if (auto* v = x.as<VarNode>(); v && !m.count(v) && !facts_.lets.count(v)) {
              int64_t val = int64_t((std::hash<const void*>()(v) >> 4) % 5) + sample * 3;
              m[v] = val;
              (&m == &rv ? av : rv).emplace(v, val);
              again = true;
            }
          });
          return again && eval_with(e, m, facts_, out);
        };
        if (!ev(r.acc->region[d].min, rv, &r0) || !ev(r.acc->region[d].extent, rv, &re) ||
            !ev(a.region[d].min, av, &a0) || !ev(a.region[d].extent, av, &ae)) {
          known = false;
          break;
        }
        if (r0 + re <= a0 || a0 + ae <= r0) overlap = false;
      }
      if (!known || overlap) return true;
    }
    return false;
  }

  void instr(const SNode& n, State& st) {
    Pipe P = n.pipe;
    Clock eff = st.vc[int(P)];
    eff.join(st.issue);
    // An instruction with scalar operands is issued after the scalar unit loaded them.
    if (operand_stamp_ && P != Pipe::kS) {
      eff.c[int(Pipe::kS)] = std::max(eff.c[int(Pipe::kS)], operand_stamp_);
      st.vc[int(P)].c[int(Pipe::kS)] = std::max(st.vc[int(P)].c[int(Pipe::kS)], operand_stamp_);
    }
    operand_stamp_ = 0;
    for (const AccessT& a : n.accesses) {
      for (auto it = st.records.rbegin(); it != st.records.rend(); ++it) {
        const Record& r = *it;
        if (!a.write && !r.acc->write) continue;
        if (r.pipe == P && P != Pipe::kV) continue;  // in-order pipe
        if (eff.c[int(r.pipe)] >= r.stamp) continue;
        if (!ranges_overlap(r, a)) continue;
        need(r, n, a);
        if (r.pipe == P) {
          st.vc[int(P)].c[int(P)] = st.cnt[int(P)];
        } else {
          st.vc[int(P)].join(snapshot(st, r.pipe));
        }
        eff.join(st.vc[int(P)]);
      }
    }
    uint32_t stamp = ++st.cnt[int(P)];
    st.vc[int(P)].join(st.issue);
    for (const AccessT& a : n.accesses) st.records.push_back(Record{&n, &a, P, stamp, path_, vals_});
    if (P != Pipe::kV) st.vc[int(P)].c[int(P)] = stamp;
    if (n.operand) operand_stamp_ = stamp;
  }

  void need(const Record& r, const SNode& n, const AccessT& a) {
    Need nd;
    nd.src = r.pipe;
    nd.dst = n.pipe;
    nd.aliased = r.acc->buffer.get() != a.buffer.get();
    std::ostringstream why;
    why << (r.acc->write && a.write ? "WAW" : r.acc->write ? "RAW" : "WAR") << " on " << a.buffer.name() << " ("
        << sim::pipe_name(r.pipe) << " -> " << sim::pipe_name(n.pipe) << ")";
    nd.why = why.str();
    if (r.pipe == n.pipe) {
      nd.kind = Need::kBarrier;
      nd.before = n.stmt;
      nd.before_in_scope = n.in_scope;
      needs_.push_back(nd);
      return;
    }
    size_t f = 0;
    while (f < r.path.size() && f < path_.size() && r.path[f].node == path_[f].node &&
           r.path[f].child == path_[f].child && r.path[f].copy == path_[f].copy)
      ++f;
    if (f >= r.path.size() || f >= path_.size()) {
      nd.loop = innermost_loop(path_.size());
      nd.kind = Need::kPair;
      nd.before = n.stmt;
      nd.before_in_scope = n.in_scope;
      needs_.push_back(nd);
      return;
    }
    const SNode* node = path_[f].node;
    if (node->kind == SNode::kLoop && f + 1 < r.path.size() && f + 1 < path_.size()) {
      const SNode* body = node->children[0].get();
      int rc = r.path[f + 1].child, ic = path_[f + 1].child;
      if (rc >= ic) {
        nd.kind = Need::kCarried;
        nd.loop = node;
        nd.distance = path_[f].copy - r.path[f].copy;
        nd.before = body->children[ic]->stmt;
        nd.before_in_scope = body->children[ic]->in_scope;
        nd.after = body->children[rc]->stmt;
        nd.after_in_scope = body->children[rc]->in_scope;
        nd.before_index = ic;
        nd.after_index = rc;
        needs_.push_back(nd);
        drains_[node].emplace_back(r.pipe, n.pipe);
        return;
      }
      nd.kind = Need::kPair;
      nd.before = body->children[ic]->stmt;
      nd.before_in_scope = body->children[ic]->in_scope;
      nd.loop = node;
      needs_.push_back(nd);
      return;
    }
    // A sequence: the pair goes right before the child holding the consumer.
    const SNode* child = node->kind == SNode::kSeq ? node->children[path_[f].child].get() : &n;
    nd.loop = innermost_loop(f);
    nd.kind = Need::kPair;
    nd.before = child->stmt;
    nd.before_in_scope = child->in_scope;
    needs_.push_back(nd);
  }

  // The innermost loop among the first `depth` frames of the current path.
  const SNode* innermost_loop(size_t depth) const {
    for (size_t i = std::min(depth, path_.size()); i-- > 0;)
      if (path_[i].node->kind == SNode::kLoop) return path_[i].node;
    return nullptr;
  }

  const KernelFacts& facts_;
  std::map<const SNode*, std::vector<std::pair<Pipe, Pipe>>> drains_;  // carried needs found per loop
  std::vector<Frame> path_;
  std::map<const VarNode*, int64_t> vals_;
  std::vector<Need> needs_;
  uint32_t operand_stamp_ = 0;  // stamp of the scalar operand loads of the next instruction
};

}  // namespace

std::vector<Need> find_needs(const SNode& root, const KernelFacts& facts) { return Walker(facts).run(root); }

}  // namespace tl::ascend_sync
