#include "target/ascend/ascend_cross_sync.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "sim/isa.h"
#include "sim/machine_model.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

using sim::Mem;

constexpr int kC = 0, kV = 1;

std::string at(const Span& s) { return s.defined() ? s.str() : "<unknown location>"; }

bool mem_is(const Buffer& b, Mem want) {
  Mem m;
  return sim::mem_of_scope(b.scope(), &m) && m == want;
}

// One GM copy of a tensor that carries data between the cores.
struct Point {
  const TileOpNode* op = nullptr;
  std::vector<Stmt> path;  // root ... the copy itself
  int side = kC;
  bool write = false;
  std::string pipe;        // the pipe that accesses GM
  int order = 0;           // program order
};

class Collector : public IRVisitor {
 public:
  std::map<std::string, std::vector<Point>> points;  // by tensor name (GM buffers are unique by name)
  std::set<int64_t> user_ids;

  void visit(const Stmt& s) override {
    path_.push_back(s);
    IRVisitor::visit(s);
    path_.pop_back();
  }
  using IRVisitor::visit;

 protected:
  void visit_attr(const AttrStmtNode* a) override {
    if (a->key != "scope" || a->value.kind() != Attr::kStr) return IRVisitor::visit_attr(a);
    int saved = scope_;
    scope_ = a->value.as_str() == "C" ? kC : kV;
    IRVisitor::visit_attr(a);
    scope_ = saved;
  }
  void visit_evaluate(const EvaluateNode* e) override {
    if (auto* c = e->value.as<CallNode>(); c && (c->op == "ascend.set_cross_flag" || c->op == "ascend.wait_cross_flag")) {
      size_t i = c->op == "ascend.set_cross_flag" ? 1 : (c->args.size() > 1 && c->args[0].as<StringImmNode>() ? 1 : 0);
      int64_t v;
      if (i < c->args.size() && is_const_int(c->args[i], &v)) user_ids.insert(v);
      else if (i < c->args.size()) dynamic_user_ids = true;
    }
    IRVisitor::visit_evaluate(e);
  }
  void visit_tile_op(const TileOpNode* op) override {
    if (!is_tile_op(*op, TileOpKind::kCopy) || op->args.size() < 2 || !op->args[0].is_region() || !op->args[1].is_region()) return;
    const Buffer& src = op->args[0].region.buffer;
    const Buffer& dst = op->args[1].region.buffer;
    bool sg = src.scope() == MemScope::kGlobal, dg = dst.scope() == MemScope::kGlobal;
    if (sg == dg) return;
    Point p;
    p.op = op;
    p.path = path_;
    p.write = dg;
    const Buffer& onchip = dg ? src : dst;
    Mem m;
    if (!sim::mem_of_scope(onchip.scope(), &m) || m == Mem::kGM) return;
    int mem_side = sim::mem_owner(m) == sim::CoreKind::kAIC ? kC : kV;
    p.side = scope_ >= 0 ? scope_ : mem_side;
    p.pipe = !p.write ? "mte2" : mem_is(src, Mem::kL0C) ? "fix" : "mte3";
    p.order = order_++;
    points[(dg ? dst : src).name()].push_back(std::move(p));
  }

 public:
  bool dynamic_user_ids = false;

 private:
  std::vector<Stmt> path_;
  int scope_ = -1;
  int order_ = 0;
};

Stmt flag_call(const std::string& op, std::vector<Expr> args, const Span& sp) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)), sp);
}

class Inserter : public StmtMutator {
 public:
  // Workspaces versioned by pipeline stage: name -> (stages, stage index expression).
  std::map<std::string, std::pair<int64_t, Expr>> staged;
  Stmt mutate_tile_op(const TileOpNode* op, const Stmt& s) override {
    std::vector<TileArg> args;
    bool changed = false;
    for (auto& a : op->args) {
      auto it = a.is_region() ? staged.find(a.region.buffer.name()) : staged.end();
      if (it == staged.end() || a.region.buffer.scope() != MemScope::kGlobal) {
        args.push_back(a);
        continue;
      }
      Buffer& nb = staged_bufs_[a.region.buffer.get()];  // one new buffer for all uses
      if (!nb.defined()) {
        std::vector<Expr> shape{make_int(it->second.first)};
        for (auto& e : a.region.buffer.shape()) shape.push_back(e);
        nb = a.region.buffer.with_shape(shape);
      }
      std::vector<Range> rr{Range(it->second.second, make_int(1))};
      for (auto& r : a.region.region) rr.push_back(r);
      args.emplace_back(BufferRegion(nb, rr));
      changed = true;
    }
    return changed ? make_tile_op(op->op, args, op->attrs, op->span) : s;
  }
  std::map<const StmtNode*, std::vector<Stmt>> before, after;
  Stmt mutate(const Stmt& s) override {
    Stmt r = StmtMutator::mutate(s);
    auto b = before.find(s.get());
    auto a = after.find(s.get());
    if (b == before.end() && a == after.end()) return r;
    std::vector<Stmt> seq;
    if (b != before.end()) seq.insert(seq.end(), b->second.begin(), b->second.end());
    seq.push_back(r);
    if (a != after.end()) seq.insert(seq.end(), a->second.begin(), a->second.end());
    return make_seq(seq, s.span());
  }
  using StmtMutator::mutate;

 private:
  std::map<const BufferNode*, Buffer> staged_bufs_;
};

bool in_scope_attr(const std::vector<Stmt>& path, size_t upto) {
  for (size_t i = 0; i < upto && i < path.size(); ++i)
    if (auto* a = path[i].as<AttrStmtNode>(); a && a->key == "scope") return true;
  return false;
}

}  // namespace

PrimFunc ascend_cross_sync(const PrimFunc& f, const PassContext& ctx) {
  std::set<std::string> workspaces;
  auto it = f.attrs().find("ascend.cv_workspaces");
  if (it != f.attrs().end() && it->second.kind() == Attr::kStrList)
    for (auto& n : it->second.as_str_list()) workspaces.insert(n);
  bool user = ctx.target.npuir || config_bool(ctx.configs, "tl.ascend_auto_cross_core_sync");
  if (workspaces.empty() && !user) return f;

  Collector col;
  col.visit(f.body());
  const sim::MachineModel& model = sim::machine_model(ctx.target.model);
  int next_id = col.user_ids.empty() ? 0 : static_cast<int>(*col.user_ids.rbegin()) + 1;
  Inserter ins;
  int inserted = 0;
  std::vector<std::string> pairs;
  auto new_id = [&](const std::string& what) {
    pairs.push_back(what);
    if (next_id >= model.cross_flag_ids || col.dynamic_user_ids) {
      std::ostringstream os;
      os << "automatic cross-core sync needs more cross-core flags than the " << model.cross_flag_ids
         << " ids of the machine";
      if (col.dynamic_user_ids) os << " (the kernel also sets flags with ids computed at run time)";
      os << "; the kernel's own flags use ids up to " << (col.user_ids.empty() ? -1 : *col.user_ids.rbegin())
         << ", and the data carried between the cores needs:";
      for (auto& p : pairs) os << "\n  " << p;
      os << "\nMove fewer buffers between the cube and vector cores (fuse the vector work, or use one buffer "
            "for several results).";
      throw ResourceError(os.str());
    }
    return next_id++;
  };

  for (auto& [name, pts] : col.points) {
    bool has[2][2] = {{false, false}, {false, false}};  // [side][write]
    for (auto& p : pts) has[p.side][p.write] = true;
    bool carries = (has[kC][1] && has[kV][0]) || (has[kV][1] && has[kC][0]);
    if (!carries) continue;
    if (!workspaces.count(name) && !user) continue;
    std::set<const TileOpNode*> paired_writes;
    for (const Point& r : pts) {
      if (r.write) continue;
      const Point* w = nullptr;
      for (const Point& c : pts)
        if (c.write && c.side != r.side && c.order < r.order) w = &c;
      if (!w) {
        bool later = false;
        for (const Point& c : pts) later |= c.write && c.side != r.side;
        if (!later) continue;  // only this core writes before it: no cross-core dependence
        throw_error<NotImplemented>(at(r.op->span), ": not implemented: automatic cross-core sync of GM tensor '", name,
                                    "': ", sim::describe_tile_op(*r.op), " on the ", r.side == kC ? "cube" : "vector",
                                    " core reads data that the other core writes only later in program order (a "
                                    "dependence through a loop back edge); write it before the read, or synchronise "
                                    "by hand with T.set_cross_flag / T.wait_cross_flag");
      }
      if (!paired_writes.insert(w->op).second)
        throw_error<NotImplemented>(at(r.op->span), ": not implemented: automatic cross-core sync of GM tensor '", name,
                                    "': the write ", sim::describe_tile_op(*w->op), " at ", at(w->op->span),
                                    " feeds several reads on the other core; read it once into a buffer");
      // Deepest common loop.
      size_t common = 0;
      while (common < w->path.size() && common < r.path.size() && w->path[common].same_as(r.path[common])) ++common;
      int loop = -1;
      for (size_t i = 0; i < common; ++i)
        if (auto* fl = w->path[i].as<ForNode>(); fl && fl->for_kind != ForKind::kParallel) loop = static_cast<int>(i);
      auto anchor = [&](const Point& p) -> size_t {
        for (size_t i = loop + 1; i + 1 < p.path.size(); ++i)
          if (p.path[i].as<ForNode>() || p.path[i].as<IfThenElseNode>()) return i;
        return p.path.size() - 1;
      };
      size_t aw = anchor(*w), ar = anchor(r);
      std::string desc = "'" + name + "': " + sim::describe_tile_op(*w->op) + " (" + at(w->op->span) + ") -> " +
                         sim::describe_tile_op(*r.op) + " (" + at(r.op->span) + ")";
      int fid = new_id(desc);
      auto scoped = [&](int side, Stmt s, const std::vector<Stmt>& path, size_t idx) {
        if (in_scope_attr(path, idx)) return s;
        return make_attr("scope", Attr(std::string(side == kC ? "C" : "V")), s, s.span());
      };
      const Span& sp = r.op->span;
      // The common loop: T.Pipelined (num_stages = k) versions the workspace k times, indexed by
      // iteration mod k, and pre-arms k back flags, so the writer runs up to k iterations ahead;
      // cross_interval = n (dividing k) then sets and waits once per group of n iterations.
      const ForNode* lf = loop >= 0 ? w->path[loop].as<ForNode>() : nullptr;
      int64_t stages = 1, interval = 1;
      if (lf && workspaces.count(name) && attr_bool(lf->annotations, "ascend_pipelined", false)) {
        stages = std::max<int64_t>(1, attr_int(lf->annotations, "num_stages", 1));
        interval = std::max<int64_t>(1, attr_int(lf->annotations, "cross_interval", 1));
        if (interval > stages || stages % interval != 0) interval = 1;  // documented: ignored
      }
      if (stages > model.cross_flag_max_pending)
        throw_error<NotImplemented>(at(lf->span), ": not implemented: T.Pipelined(num_stages=", stages,
                                    ") over cube/vector hand-offs: a cross-core flag counts at most ",
                                    model.cross_flag_max_pending, " pending sets");
      Expr it_in_group, group_end;
      if (interval > 1) {
        it_in_group = floormod(lf->var - lf->min, make_int(interval));
        group_end = eq(it_in_group, make_int(interval - 1)) || eq(lf->var, lf->min + lf->extent - make_int(1));
      }
      auto at_end = [&](Stmt s) { return interval > 1 ? make_if(group_end, s, Stmt(), s.span()) : s; };
      auto at_start = [&](Stmt s) { return interval > 1 ? make_if(eq(it_in_group, make_int(0)), s, Stmt(), s.span()) : s; };
      ins.after[w->path[aw].get()].push_back(scoped(
          w->side,
          at_end(flag_call("ascend.set_cross_flag", {make_string(w->pipe), make_int(fid), make_int(2)}, w->op->span)),
          w->path, aw));
      ins.before[r.path[ar].get()].push_back(
          scoped(r.side, at_start(flag_call("ascend.wait_cross_flag", {make_int(fid)}, sp)), r.path, ar));
      inserted += 2;
      if (loop >= 0) {
        int bid = new_id(desc + " (workspace reuse)");
        const Stmt& L = w->path[loop];
        if (stages > 1) ins.staged[name] = {stages, floormod(lf->var - lf->min, make_int(stages))};
        ins.after[r.path[ar].get()].push_back(scoped(
            r.side,
            at_end(flag_call("ascend.set_cross_flag", {make_string(r.pipe), make_int(bid), make_int(2)}, sp)),
            r.path, ar));
        ins.before[w->path[aw].get()].insert(
            ins.before[w->path[aw].get()].begin(),
            scoped(w->side, at_start(flag_call("ascend.wait_cross_flag", {make_int(bid)}, w->op->span)), w->path, aw));
        for (int64_t k = 0; k < stages / interval; ++k) {
          ins.before[L.get()].push_back(scoped(
              r.side, flag_call("ascend.set_cross_flag", {make_string(r.pipe), make_int(bid), make_int(2)}, sp),
              w->path, static_cast<size_t>(loop)));
          ins.after[L.get()].push_back(
              scoped(w->side, flag_call("ascend.wait_cross_flag", {make_int(bid)}, w->op->span), w->path,
                     static_cast<size_t>(loop)));
        }
        inserted += 2 + 2 * static_cast<int>(stages / interval);
      }
    }
  }
  if (inserted == 0) return f;
  Stmt body = ins.mutate(f.body());
  return f.with_body(body).with_attr("ascend.cross_syncs_inserted", Attr(int64_t(inserted)));
}

TL_REGISTER_PASS("ascend_cross_sync", ascend_cross_sync);

}  // namespace tl
