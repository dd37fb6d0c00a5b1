// Pipe execution of the simulator: starting instructions in order, their cost (the timing model of
// ASCEND_MODEL.md), their effects (tile_exec.h) and their checks (race_checker.h); Chrome traces.
#include <algorithm>
#include <cmath>
#include <fstream>

#include "ir/error.h"
#include "sim/engine.h"

namespace tl::sim {

VClock Engine::pipe_snapshot(const Core& c, Pipe p) const {
  VClock s = c.pipes[int(p)].vc;
  s.c[clock_index(c.core_in_block, p)] = c.pipes[int(p)].counter;
  return s;
}

void Engine::run_pipe(Core& c, Pipe p, double now) {
  PipeState& ps = c.pipes[int(p)];
  if (ps.q.empty()) return;
  Instr& h = ps.q.front();
  double start = std::max({now, ps.free, h.issue_time});
  if (start > now) {
    schedule_pipe(c, p, start);
    return;
  }
  switch (h.kind) {
    case BOp::kIssue: {
      if (!h.deps.empty()) {
        // Lenient mode: wait for earlier conflicting instructions of other pipes.
        for (uint64_t dep : h.deps)
          for (auto& e : c.inflight)
            if (e.seq == dep) {
              if (!e.started) {
                ps.blocked = true;
                return;
              }
              start = std::max(start, e.end);
            }
        if (start > now) {
          schedule_pipe(c, p, start);
          return;
        }
      }
      exec_instr(c, p, h, start);
      if (opts_.lenient) {
        for (auto& e : c.inflight)
          if (e.seq == h.seq) {
            e.started = true;
            e.end = ps.free;
          }
        if (c.fe == FeState::kLenient) {
          c.fe = FeState::kRun;
          schedule_fe(c, now);
        }
        for (int q = 1; q < kNumPipes; ++q) {
          PipeState& o = c.pipes[q];
          if (q != int(p) && o.blocked && !o.q.empty() && o.q.front().kind == BOp::kIssue) {
            o.blocked = false;
            schedule_pipe(c, Pipe(q), now);
          }
        }
      }
      break;
    }
    case BOp::kSetFlag: {
      ps.vc.join(h.issue_vc);
      set_flag(c, p, h.p1, h.id, start + model_.flag_cycles, pipe_snapshot(c, p), h.site);
      ps.free = start + model_.flag_cycles;
      if (!opts_.trace_path.empty()) {
        static const std::string n = "set_flag";
        record_trace(c, p, start, model_.flag_cycles, &n);
      }
      break;
    }
    case BOp::kWaitFlag: {
      double done;
      VClock j;
      if (!try_wait_flag(c, h.p0, p, h.id, start, h.site, &done, &j)) {
        ps.blocked = true;
        return;
      }
      ps.blocked = false;
      ps.vc.join(j);
      ps.vc.join(h.issue_vc);
      ps.free = done + model_.flag_cycles;
      if (!opts_.trace_path.empty() && done > start) {
        static const std::string n = "wait_flag";
        record_trace(c, p, start, done - start + model_.flag_cycles, &n);
      }
      break;
    }
    case BOp::kPipeBarrier: {
      ps.vc.join(h.issue_vc);
      double cost = p == Pipe::kV ? model_.v_barrier_cycles : model_.other_barrier_cycles;
      // A pipelined pipe (V) orders its later instructions after the earlier ones only here.
      ps.vc.c[clock_index(c.core_in_block, p)] = ps.counter;
      ps.free = start + cost;
      ps.busy += cost;
      break;
    }
    case BOp::kSetCross: {
      ps.vc.join(h.issue_vc);
      set_cross(c, h.id, h.mode, start + model_.flag_cycles, pipe_snapshot(c, p), h.site);
      ps.free = start + model_.flag_cycles;
      break;
    }
    default: break;
  }
  ps.q.pop_front();
  if (c.fe == FeState::kQueueFull && c.full_pipe == p) {
    c.fe = FeState::kRun;
    schedule_fe(c, std::max(c.s_time, now));
  }
  if (ps.q.empty()) {
    check_drain(c);
    return;
  }
  schedule_pipe(c, p, std::max(ps.free, ps.q.front().issue_time));
}

void Engine::check_accesses(Core& c, Pipe p, const Instr& in, const VClock& vc, uint32_t epoch, bool debug) {
  const InstrTemplate& t = *in.t;
  AccessInfo acc[8];
  int n = 0;
  // Reads first, so a read-modify-write reports the RAW rather than the WAW.
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < in.nops; ++i) {
      const Operand& o = in.ops[i];
      if (o.empty) continue;
      const bool r = t.regions[i].read, w = t.regions[i].write;  // TileOp::effects, resolved at compile time
      if (pass == 0 ? !(r && !w) : !w) continue;
      AccessInfo& a = acc[n++];
      a.mem = o.mem;
      // A core group's workspace is its own: forgotten with its private memories when a block ends.
      a.space = o.buf->workspace ? c.slot * kCoresPerBlock : o.mem == Mem::kGM ? -1 : c.index;
      int64_t st[4];
      for (int d = 0; d < o.nd; ++d) st[d] = o.stride[d];
      a.box = make_box(o.addr, o.dt.element_bytes(), o.nd, o.valid, st);
      a.write = w;
      a.atomic = t.cls.cls == InstrClass::kAtomicAdd && i == 0;
      a.block = c.block;
      a.core = c.core_in_block;
      a.kind = c.kind;
      a.pipe = p;
      a.epoch = epoch;
      a.sync_passed = c.sync_passed;
      a.seq = in.seq;
      a.site = &sites_[in.site->tmpl];
      a.buffer = o.buf->name;
      a.buffer_base = o.buf->workspace ? int64_t(reinterpret_cast<intptr_t>(ws_[c.slot].data() + o.buf->workspace_offset))
                    : o.mem == Mem::kGM ? int64_t(reinterpret_cast<intptr_t>(gm_[o.buf->param_index].ptr))
                                        : o.buf->address;
    }
  if (debug) {
    std::vector<RaceChecker::DeferredWaw> found;
    for (int i = 0; i < n; ++i) checker_.check(acc[i], vc, &found, true);
    for (auto& x : found)
      if (waw_warned_.insert({x.first.site, x.second.site}).second)
        stats_.warnings.push_back("a debug read may print stale values (not an error: it cannot change results): " +
                                  checker_.describe(x.first, x.second, x.lo, x.hi));
    return;
  }
  for (int i = 0; i < n; ++i) checker_.check(acc[i], vc, &waw_);
  for (int i = 0; i < n; ++i) checker_.record(acc[i], vc);
}

double Engine::gm_transfer(double start, double latency, int64_t bytes, double core_bpc, const Operand& gm,
                           bool write) {
  // The L2 is modelled per copy footprint: a read of a region read (or written) before, and not
  // evicted since, hits and shares the L2 bandwidth; everything else streams through HBM.
  uint64_t key = static_cast<uint64_t>(gm.addr) * 0x9E3779B97F4A7C15ull;
  for (int d = 0; d < gm.nd; ++d) key = (key ^ uint64_t(gm.ext[d] * 131 + gm.stride[d])) * 0x100000001B3ull;
  bool hit = l2_.access(key, bytes) && !write;
  SharedLink& link = hit ? l2_link_ : hbm_;
  double t0 = start + latency;
  double core_end = t0 + double(bytes) / core_bpc;
  double s = std::max(t0, link.free);
  link.free = s + double(bytes) / link.bytes_per_cycle;
  stats_.gm_bytes += bytes;
  if (hit) stats_.l2_hit_bytes += bytes;
  return std::max(core_end, link.free) - start;
}

double Engine::instr_cost(Core& c, Pipe p, const Instr& in, double start) {
  const InstrTemplate& t = *in.t;
  const PipeState& ps = c.pipes[int(p)];
  switch (t.cls.cls) {
    case InstrClass::kCopy:
    case InstrClass::kAtomicAdd: {
      const Operand& s = t.cls.cls == InstrClass::kAtomicAdd ? in.ops[1] : in.ops[0];
      const Operand& d = t.cls.cls == InstrClass::kAtomicAdd ? in.ops[0] : in.ops[1];
      CopyPath path = t.cls.path;
      double lat = model_.copy_start_cycles[int(path)];
      double bpc = model_.bytes_per_cycle(path);
      if (s.mem == Mem::kGM) {
        int64_t bytes = s.valid_elements() * s.dt.element_bytes();
        return gm_transfer(start, lat, bytes, bpc, s, false);
      }
      if (d.mem == Mem::kGM) {
        int64_t bytes = d.valid_elements() * d.dt.element_bytes();
        return gm_transfer(start, lat, bytes, bpc, d, true);
      }
      int64_t bytes = std::max(s.elements() * s.dt.element_bytes(), d.elements() * d.dt.element_bytes());
      return lat + double(bytes) / bpc;
    }
    case InstrClass::kMma: {
      auto sq = [](const Operand& o, int64_t* r, int64_t* cc) {
        std::vector<int64_t> e;
        for (int i = 0; i < o.nd; ++i)
          if (o.ext[i] != 1) e.push_back(o.ext[i]);
        *r = e.size() >= 2 ? e[e.size() - 2] : 1;
        *cc = e.empty() ? 1 : e.back();
        if (e.size() == 1 && o.ext[o.nd - 1] == 1) {
          *r = e[0];
          *cc = 1;
        }
      };
      int64_t m, k, k2, n;
      sq(in.ops[0], &m, &k);
      sq(in.ops[1], &k2, &n);
      if (t.transpose_a) std::swap(m, k);
      if (t.transpose_b) std::swap(k2, n);
      int bits = in.ops[0].dt.bits;
      int64_t k0 = bits >= 32 ? 8 : bits == 8 ? 32 : 16;
      double per = bits >= 32 ? model_.mmad_cycles_per_fractal_b32
                   : bits == 8 ? model_.mmad_cycles_per_fractal_b8 : model_.mmad_cycles_per_fractal_b16;
      double fractals = double((m + 15) / 16) * double((k + k0 - 1) / k0) * double((n + 15) / 16);
      bool idle = ps.last_end < start;
      return fractals * per + (idle ? model_.mmad_startup_cycles : 0);
    }
    case InstrClass::kVector: {
      const VectorCost& vc = model_.vector_cost(t.name);
      int64_t bytes = 0, eb = 1;
      for (int i = 0; i < in.nops; ++i) {
        bytes = std::max(bytes, in.ops[i].elements() * in.ops[i].dt.element_bytes());
        eb = std::max<int64_t>(eb, in.ops[i].dt.element_bytes());
      }
      double repeats = std::ceil(double(bytes) / double(model_.vector_repeat_bytes));
      return vc.startup + (eb >= 4 ? vc.slope_b32 : vc.slope_b16) * repeats;
    }
    case InstrClass::kFill: {
      int64_t bytes = in.ops[0].elements() * in.ops[0].dt.element_bytes();
      return 8 + double(bytes) / double(model_.vector_repeat_bytes);
    }
    default: return 1;
  }
}

// The bytes of a box (GM boxes hold host addresses), row after row.
static std::string box_bytes(const Box& b) {
  std::string out;
  int64_t idx[3] = {0, 0, 0};
  for (;;) {
    int64_t off = b.base;
    for (int d = 0; d < b.nd; ++d) off += idx[d] * b.stride[d];
    out.append(reinterpret_cast<const char*>(static_cast<intptr_t>(off)), static_cast<size_t>(b.row_bytes));
    int d = b.nd - 1;
    while (d >= 0 && ++idx[d] == b.ext[d]) idx[d--] = 0;
    if (d < 0) return out;
  }
}

void Engine::exec_instr(Core& c, Pipe p, Instr& in, double start) {
  PipeState& ps = c.pipes[int(p)];
  const InstrTemplate& t = *in.t;
  ps.vc.join(in.issue_vc);
  uint32_t epoch = ++ps.counter;
  waw_.clear();
  if (opts_.check) check_accesses(c, p, in, ps.vc, epoch);
  // A write racing with another block's write on GM is allowed, with a warning, when it leaves the
  // bytes as they were (both wrote the same values); anything else is the race.
  std::string waw_before;
  if (!waw_.empty()) {
    if (opts_.strict_waw || !opts_.compute_values)
      checker_.report(waw_.front().first, waw_.front().second, waw_.front().lo, waw_.front().hi);
    waw_before = box_bytes(waw_.front().second.box);
  }
  // In-order pipes order their later instructions after this one; the vector pipe overlaps
  // consecutive instructions and needs T.pipe_barrier("v") for that.
  if (p != Pipe::kV) ps.vc.c[clock_index(c.core_in_block, p)] = epoch;
  double cost = instr_cost(c, p, in, start);
  if (opts_.compute_values) {
    std::string where = t.span.prefix() + t.text + ": ";
    switch (t.cls.cls) {
      case InstrClass::kCopy:
        if (!in.ops[0].empty && !in.ops[1].empty)
          exec_copy(in.ops[0], in.ops[1], t.transpose, t.relu, in.has_pad, in.pad, where);
        break;
      case InstrClass::kMma: exec_mma(in.ops[0], in.ops[1], in.ops[2], in.init, t.transpose_a, t.transpose_b, where); break;
      case InstrClass::kVector: exec_vector(t, in.ops, in.nops, in.has_scalar, in.scalar, where); break;
      case InstrClass::kFill: exec_fill(in.ops[0], in.scalar, where); break;
      case InstrClass::kAtomicAdd:
        if (!in.ops[0].empty) exec_atomic_add(in.ops[0], in.ops[1], where);
        break;
      default: break;
    }
  }
  if (!waw_.empty()) {
    std::vector<RaceChecker::DeferredWaw> w;
    w.swap(waw_);
    if (box_bytes(w.front().second.box) != waw_before) checker_.report(w.front().first, w.front().second, w.front().lo, w.front().hi);
    for (auto& x : w)
      if (waw_warned_.insert({x.first.site, x.second.site}).second)
        stats_.warnings.push_back("byte-identical write-after-write (allowed: both writes stored the same bytes; "
                                  "TL_ASCEND_SIM_STRICT=1 or pass config tl.ascend_sim_strict makes it an error): " +
                                  checker_.describe(x.first, x.second, x.lo, x.hi));
  }
  ps.free = start + cost;
  ps.last_end = start + cost;
  ps.busy += cost;
  ++stats_.instructions;
  if (!opts_.trace_path.empty()) record_trace(c, p, start, cost, &t.name);
}

void Engine::record_trace(const Core& c, Pipe p, double start, double dur, const std::string* name) {
  trace_.push_back(TraceEvent{c.index, p, start, dur, c.block, name});
}

void Engine::write_trace() {
  std::ofstream os(opts_.trace_path);
  if (!os)
    throw_error<RuntimeError>("cannot write the Ascend trace to '", opts_.trace_path,
                              "' (TL_ASCEND_TRACE): check the directory exists and is writable");
  double us = 1e6 / model_.clock_hz;
  os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&]() {
    if (!first) os << ",\n";
    first = false;
  };
  for (auto& c : cores_) {
    if (!c.used) continue;
    sep();
    os << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << c.index << ",\"args\":{\"name\":\"core "
       << c.slot << " " << (c.core_in_block == 0 ? "AIC" : c.core_in_block == 1 ? "AIV0" : "AIV1") << "\"}}";
    for (int p = 0; p < kNumPipes; ++p) {
      sep();
      os << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << c.index << ",\"tid\":" << p
         << ",\"args\":{\"name\":\"" << pipe_name(Pipe(p)) << "\"}}";
    }
  }
  for (auto& e : trace_) {
    sep();
    os << "{\"name\":\"" << *e.name << "\",\"ph\":\"X\",\"pid\":" << e.core << ",\"tid\":" << int(e.pipe)
       << ",\"ts\":" << e.start * us << ",\"dur\":" << e.dur * us << ",\"args\":{\"block\":" << e.block << "}}";
  }
  os << "\n]}\n";
}

}  // namespace tl::sim
