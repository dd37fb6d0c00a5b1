// Synchronisation semantics of the simulator (ASCEND_MODEL.md): binary intra-core flags with
// double-set detection, counting cross-core flags in modes 0/1/2, and the all-core sync_all.
#include <algorithm>
#include <sstream>

#include "ir/error.h"
#include "sim/engine.h"

namespace tl::sim {

static std::string flag_text(Pipe s, Pipe d, int64_t id) {
  std::ostringstream os;
  os << "(\"" << pipe_user_name(s) << "\", \"" << pipe_user_name(d) << "\", " << id << ")";
  return os.str();
}

int64_t Engine::check_flag_id(int64_t id, const BInstr* site, bool cross) const {
  int64_t n = cross ? model_.cross_flag_ids : model_.flag_ids;
  if (id < 0 || id >= n)
    throw_error<SyncError>(where(site), ": ", cross ? "cross-core flag" : "event", " id ", id, " is out of range [0, ",
                           n, ")");
  return id;
}

void Engine::set_flag(Core& c, Pipe src, Pipe dst, int64_t id, double t, const VClock& snap, const BInstr* site) {
  FlagState& f = c.flags[int(src)][int(dst)][id];
  if (f.set)
    throw_error<SyncError>("double set: T.set_flag", flag_text(src, dst, id), " at ", where(site), " on ", core_name(c),
                           ": the flag is still set by the T.set_flag at ", where(f.set_site),
                           " and has not been waited (flags are binary; the first set would be lost). Wait it first "
                           "or use another event id.");
  if (opts_.check && f.waited && snap.c[clock_index(c.core_in_block, dst)] < f.wait_epoch)
    throw_error<SyncError>("double set (race): T.set_flag", flag_text(src, dst, id), " at ", where(site), " on ",
                           core_name(c), " is not ordered after the T.wait_flag at ", where(f.wait_site),
                           " that consumed the previous set (T.set_flag at ", where(f.set_site), "), so on hardware it can arrive while the flag is still "
                           "set. Order pipe ", pipe_name(src), " after that wait (a flag from ", pipe_name(dst),
                           " back to ", pipe_name(src), ") or alternate between two event ids.");
  f.set = true;
  f.set_time = t;
  f.vc = snap;
  f.set_site = site;
  if (dst == Pipe::kS) {
    if (c.fe == FeState::kWaitFlag && c.wait_src == src && c.wait_id == id) {
      c.fe = FeState::kRun;
      schedule_fe(c, std::max(c.s_time, t));
    }
    return;
  }
  PipeState& dp = c.pipes[int(dst)];
  if (dp.blocked && !dp.q.empty()) {
    const Instr& h = dp.q.front();
    if (h.kind == BOp::kWaitFlag && h.p0 == src && h.id == id) {
      dp.blocked = false;
      schedule_pipe(c, dst, std::max(t, dp.free));
    }
  }
}

bool Engine::try_wait_flag(Core& c, Pipe src, Pipe dst, int64_t id, double t, const BInstr* site, double* done,
                           VClock* joined) {
  FlagState& f = c.flags[int(src)][int(dst)][id];
  if (!f.set) return false;
  *done = std::max(t, f.set_time);
  *joined = f.vc;
  f.set = false;
  f.waited = true;
  PipeState& dp = c.pipes[int(dst)];
  uint32_t e = ++dp.counter;
  f.wait_epoch = e;
  f.wait_site = site;
  if (dst != Pipe::kV) dp.vc.c[clock_index(c.core_in_block, dst)] = e;
  return true;
}

static void push_cross(Core& c, int64_t id, const CrossEntry& e, int max_pending, const std::string& where_set,
                       const std::string& name) {
  if (static_cast<int>(c.cross_avail[id].size()) >= max_pending)
    throw_error<SyncError>("cross-core flag ", id, " overflow on ", name, ": more than ", max_pending,
                           " T.set_cross_flag without a T.wait_cross_flag (last set at ", where_set, ")");
  c.cross_avail[id].push_back(e);
}

void Engine::set_cross(Core& c, int64_t id, int64_t mode, double t, const VClock& snap, const BInstr* site) {
  CrossEntry e{snap, t, site};
  int nv = prog_.vector_cores;
  auto wake = [&](Core& w) {
    if (w.fe == FeState::kWaitCross && w.wait_id == id) {
      w.fe = FeState::kRun;
      schedule_fe(w, std::max(w.s_time, t));
    }
  };
  // Records this vector core's set; once every vector core of the block has one pending, takes
  // one from each into `joined` (their clocks joined, the latest time) and returns true.
  auto gather = [&](CrossEntry& joined) {
    c.cross_partial[id].push_back(e);
    for (int k = 1; k <= nv; ++k)
      if (core_at(c.slot, k).cross_partial[id].empty()) return false;
    joined = CrossEntry{VClock{}, 0, site};
    for (int k = 1; k <= nv; ++k) {
      auto& q = core_at(c.slot, k).cross_partial[id];
      joined.vc.join(q.front().vc);
      joined.time = std::max(joined.time, q.front().time);
      q.pop_front();
    }
    return true;
  };
  std::string wh = where(site);
  if (mode == 2) {
    if (c.kind == CoreKind::kAIC) {
      for (int k = 1; k <= nv; ++k) {
        Core& v = core_at(c.slot, k);
        push_cross(v, id, e, model_.cross_flag_max_pending, wh, core_name(v));
        wake(v);
      }
      return;
    }
    // A vector core's set reaches the cube core once every vector core of the block has set.
    CrossEntry j;
    if (!gather(j)) return;
    Core& cube = core_at(c.slot, 0);
    push_cross(cube, id, j, model_.cross_flag_max_pending, wh, core_name(cube));
    wake(cube);
    return;
  }
  if (mode == 1) {
    if (c.kind == CoreKind::kAIC)
      throw_error<SyncError>(wh, ": T.set_cross_flag mode 1 synchronises the two vector cores of a block; the cube "
                             "core must use mode 2 (cube <-> vector) or mode 0 (all cube cores)");
    CrossEntry j;
    if (!gather(j)) return;
    for (int k = 1; k <= nv; ++k) {
      Core& v = core_at(c.slot, k);
      push_cross(v, id, j, model_.cross_flag_max_pending, wh, core_name(v));
      wake(v);
    }
    return;
  }
  if (mode != 0)
    throw_error<SyncError>(wh, ": T.set_cross_flag mode ", mode, " is not one of 0 (all cores of a kind), 1 (the two "
                           "vector cores of a block), 2 (cube <-> vector cores of a block)");
  // Mode 0: a barrier over every core of this kind in the grid.
  if (grid_ > num_slots_)
    throw_error<SyncError>("deadlock: T.set_cross_flag mode 0 at ", wh, " waits for all ", grid_,
                           " blocks, but only ", num_slots_, " run at once (later blocks start when earlier ones end)");
  c.cross_partial[id].push_back(e);
  std::vector<Core*> members;
  for (auto& o : cores_)
    if (o.used && o.block >= 0 && o.kind == c.kind && o.fe != FeState::kIdle) members.push_back(&o);
  int64_t expected = grid_ * (c.kind == CoreKind::kAIC ? 1 : nv);
  if (static_cast<int64_t>(members.size()) < expected) return;
  for (Core* m : members)
    if (m->cross_partial[id].empty()) return;
  uint32_t gen = ++kind_gen_[int(c.kind)];
  double tmax = 0;
  uint32_t sync_gen = 0;
  for (Core* m : members) {
    tmax = std::max(tmax, m->cross_partial[id].front().time);
    sync_gen = std::max(sync_gen, m->cross_partial[id].front().vc.sync_gen);
  }
  barrier_log_.snaps.resize(std::max<size_t>(barrier_log_.snaps.size(), size_t(grid_) * kCoresPerBlock));
  std::vector<CrossEntry> fronts;
  for (Core* m : members) {
    fronts.push_back(m->cross_partial[id].front());
    m->cross_partial[id].pop_front();
    barrier_log_.snaps[size_t(m->block) * kCoresPerBlock + m->core_in_block].push_back(fronts.back().vc);
  }
  for (size_t i = 0; i < members.size(); ++i) {
    Core* m = members[i];
    // Within a block the clocks join; across blocks only the barrier generation is shared.
    CrossEntry r{VClock{}, tmax, site};
    for (size_t k = 0; k < members.size(); ++k)
      if (members[k]->block == m->block) r.vc.join(fronts[k].vc);
    r.vc.sync_gen = std::max(r.vc.sync_gen, sync_gen);
    r.vc.kind_gen[int(c.kind)] = gen;
    push_cross(*m, id, r, model_.cross_flag_max_pending, wh, core_name(*m));
    wake(*m);
  }
}

bool Engine::try_wait_cross(Core& c, int64_t id, double* t, VClock* joined) {
  if (c.cross_avail[id].empty()) return false;
  CrossEntry e = c.cross_avail[id].front();
  c.cross_avail[id].pop_front();
  *t = std::max(*t, e.time);
  *joined = e.vc;
  return true;
}

void Engine::arrive_sync_all(Core& c, const BInstr& b) {
  if (grid_ > num_slots_)
    throw_error<SyncError>("deadlock: T.sync_all at ", where(&b), " waits for all ", grid_, " blocks, but only ",
                           num_slots_, " run at once (later blocks start when earlier ones end); launch at most ",
                           num_slots_, " blocks and loop over the work (T.Persistent)");
  if (sync_all_.arrived == 0) sync_all_.mask = b.sync_participants;
  if (sync_all_.mask != b.sync_participants)
    throw_error<SyncError>("T.sync_all at ", where(&b), " on ", core_name(c),
                           " is a different barrier (cube/vector participants) from the one other cores wait in");
  int per_block = ((sync_all_.mask & 1) ? 1 : 0) + ((sync_all_.mask & 2) ? prog_.vector_cores : 0);
  int64_t expected = grid_ * per_block;
  ++sync_all_.arrived;
  sync_all_.waiting.push_back(&c);
  sync_all_.last = std::max(sync_all_.last, c.s_time);
  if (sync_all_.arrived < expected) return;
  uint32_t gen = ++sync_all_.gen;
  double release = sync_all_.last + model_.sync_all_cycles;
  for (Core* w : sync_all_.waiting) {
    w->sync_passed = gen;
    for (auto& ps : w->pipes) ps.vc.sync_gen = gen;
    w->issue_vc.sync_gen = gen;
    w->s_time = release;
    ++w->pc;
    w->fe = FeState::kRun;
    schedule_fe(*w, release);
  }
  sync_all_.arrived = 0;
  sync_all_.waiting.clear();
  sync_all_.last = 0;
}

SimStats simulate(const Program& prog, const std::vector<TLArg>& args, const SimOptions& opts) {
  Engine e(prog, args, opts);
  return e.run();
}

}  // namespace tl::sim
