// The simulator's event loop, the scalar front end of each core and expression evaluation.
#include "sim/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "ir/error.h"
#include "ir/printf_format.h"
#include "tl/common/float_formats.h"

namespace tl::sim {

SimOptions SimOptions::from_env() {
  SimOptions o;
  auto on = [](const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::string(v) != "0" && std::string(v) != "false";
  };
  o.lenient = on("TL_ASCEND_SIM_LENIENT");
  o.strict_waw = on("TL_ASCEND_SIM_STRICT");
  o.compute_values = !on("TL_ASCEND_SIM_TIMING_ONLY");
  if (const char* t = std::getenv("TL_ASCEND_TRACE"); t && *t) o.trace_path = t;
  return o;
}

bool L2Model::access(uint64_t key, int64_t bytes) {
  auto it = map_.find(key);
  if (it != map_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);
    return true;
  }
  if (bytes > capacity_) return false;
  lru_.emplace_front(key, bytes);
  map_[key] = lru_.begin();
  used_ += bytes;
  while (used_ > capacity_) {
    auto& back = lru_.back();
    used_ -= back.second;
    map_.erase(back.first);
    lru_.pop_back();
  }
  return false;
}

Engine::Engine(const Program& p, const std::vector<TLArg>& args, const SimOptions& o)
    : prog_(p), model_(*p.model), opts_(o), args_(args), checker_(&barrier_log_), l2_(p.model->l2_bytes) {
  if (opts_.lenient) opts_.check = false;
  num_slots_ = model_.num_cube_cores;
  cores_.resize(static_cast<size_t>(num_slots_) * kCoresPerBlock);
  for (int s = 0; s < num_slots_; ++s)
    for (int k = 0; k < kCoresPerBlock; ++k) {
      Core& c = core_at(s, k);
      c.index = s * kCoresPerBlock + k;
      c.slot = s;
      c.core_in_block = k;
      c.kind = k == 0 ? CoreKind::kAIC : CoreKind::kAIV;
    }
  slot_cores_left_.assign(num_slots_, 0);
  hbm_.bytes_per_cycle = model_.hbm_bytes_per_s / model_.clock_hz;
  l2_link_.bytes_per_cycle = model_.l2_bytes_per_s / model_.clock_hz;

  size_t expected = prog_.params.size() + prog_.dynamic_slots.size();
  if (args_.size() < expected)
    throw_error<ArgumentError>("kernel '", prog_.func.name(), "' expects ", expected, " arguments (",
                               prog_.params.size(), " parameters + ", prog_.dynamic_slots.size(),
                               " dynamic dimensions), got ", args_.size());
  base_frame_.assign(prog_.num_slots, Value{0});
  for (size_t i = 0; i < prog_.params.size(); ++i) {
    auto& pi = prog_.params[i];
    if (pi.is_buffer) continue;
    if (pi.dtype.is_float()) base_frame_[pi.slot].f = args_[i].f64;
    else base_frame_[pi.slot].i = args_[i].i64;
  }
  for (size_t i = 0; i < prog_.dynamic_slots.size(); ++i)
    base_frame_[prog_.dynamic_slots[i]].i = args_[prog_.params.size() + i].i64;
  // Resolve GM tensors: pointer, shape and strides.
  Core& tmp = cores_[0];
  tmp.frame = base_frame_;
  gm_.resize(prog_.params.size());
  for (size_t i = 0; i < prog_.params.size(); ++i) {
    auto& pi = prog_.params[i];
    if (!pi.is_buffer) continue;
    const SimBuffer& b = prog_.buffers[pi.buffer];
    GmInfo g;
    g.ptr = static_cast<uint8_t*>(args_[i].ptr);
    for (int32_t e : b.shape) g.shape.push_back(eval_int(tmp, e));
    if (!b.strides.empty()) {
      for (int32_t e : b.strides) g.strides.push_back(eval_int(tmp, e));
    } else {
      g.strides.assign(g.shape.size(), 1);
      for (size_t d = g.shape.size(); d-- > 1;) g.strides[d - 1] = g.strides[d] * g.shape[d];
    }
    gm_[i] = std::move(g);
  }
  grid_ = eval_int(tmp, prog_.grid_expr);
  if (prog_.workspace_bytes > 0) ws_.assign(num_slots_, std::vector<uint8_t>(prog_.workspace_bytes, 0));
  sites_.resize(prog_.templates.size());
  for (size_t i = 0; i < prog_.templates.size(); ++i) sites_[i] = AccessSite{prog_.templates[i].span, prog_.templates[i].text};
}

std::string Engine::core_name(const Core& c) const {
  std::ostringstream os;
  os << "block " << c.block << " " << (c.core_in_block == 0 ? "AIC" : c.core_in_block == 1 ? "AIV0" : "AIV1");
  return os.str();
}

std::string Engine::where(const BInstr* b) const {
  if (!b || !b->span.defined()) return "<unknown location>";
  return b->span.str();
}

void Engine::schedule_fe(Core& c, double t) {
  c.fe_scheduled = true;
  heap_.push(Event{t, event_seq_++, c.index, kNumPipes, ++c.fe_token});
}

void Engine::schedule_pipe(Core& c, Pipe p, double t) {
  PipeState& ps = c.pipes[int(p)];
  ps.scheduled = true;
  heap_.push(Event{t, event_seq_++, c.index, int(p), ++ps.token});
}

void Engine::start_block(int slot, int block, double t) {
  int ncores = 1 + prog_.vector_cores;
  double start = t + model_.block_launch_cycles;
  for (int k = 0; k < ncores; ++k) {
    Core& c = core_at(slot, k);
    c.used = true;
    c.block = block;
    if (c.kind == CoreKind::kAIC) {
      for (Mem m : {Mem::kL1, Mem::kL0A, Mem::kL0B, Mem::kL0C})
        if (c.mem[int(m)].empty()) c.mem[int(m)].assign(model_.mem_bytes[int(m)], 0);
    } else if (c.mem[int(Mem::kUB)].empty()) {
      c.mem[int(Mem::kUB)].assign(model_.mem_bytes[int(Mem::kUB)], 0);
    }
    c.pc = 0;
    c.frame = base_frame_;
    c.locals.assign(prog_.local_values, Value{0});
    c.frame[prog_.cid_slot].i = block;
    if (prog_.vid_slot >= 0) c.frame[prog_.vid_slot].i = k == 0 ? 0 : k - 1;
    c.s_time = start;
    c.fe = FeState::kRun;
    for (auto& ps : c.pipes) {
      ps.q.clear();
      ps.free = start;
      ps.last_end = -1;
      ps.blocked = false;
      ps.vc = VClock{};
      ps.counter = 0;
    }
    c.issue_vc = VClock{};
    for (auto& a : c.flags)
      for (auto& b : a)
        for (auto& f : b) f = FlagState{};
    for (auto& q : c.cross_avail) q.clear();
    for (auto& q : c.cross_partial) q.clear();
    c.inflight.clear();
    c.seq = 0;
    checker_.reset_space(c.index);
    schedule_fe(c, start);
  }
  slot_cores_left_[slot] = ncores;
  ++stats_.blocks;
}

SimStats Engine::run() {
  auto wall0 = std::chrono::steady_clock::now();
  if (grid_ < 0) throw_error<ArgumentError>("kernel '", prog_.func.name(), "': negative block count ", grid_);
  int used_slots = static_cast<int>(std::min<int64_t>(grid_, num_slots_));
  for (int s = 0; s < used_slots; ++s) start_block(s, s, 0);
  next_block_ = used_slots;
  while (!heap_.empty()) {
    Event ev = heap_.top();
    heap_.pop();
    Core& c = cores_[ev.core];
    if (ev.agent == kNumPipes) {
      if (ev.token != c.fe_token || !c.fe_scheduled) continue;
      c.fe_scheduled = false;
      now_ = ev.t;
      run_fe(c, ev.t);
    } else {
      PipeState& ps = c.pipes[ev.agent];
      if (ev.token != ps.token || !ps.scheduled) continue;
      ps.scheduled = false;
      now_ = ev.t;
      run_pipe(c, static_cast<Pipe>(ev.agent), ev.t);
    }
  }
  if (blocks_done_ < grid_) report_deadlock();
  stats_.cycles = makespan_;
  stats_.ms = model_.cycles_to_ms(makespan_);
  for (int s = 0; s < std::min<int64_t>(grid_, num_slots_); ++s) {
    ++stats_.cube_cores_used;
    stats_.vector_cores_used += prog_.vector_cores;
  }
  for (auto& c : cores_) {
    if (!c.used) continue;
    for (int p = 0; p < kNumPipes; ++p) stats_.busy[int(c.kind)][p] += c.pipes[p].busy;
  }
  for (int k = 0; k < 2; ++k) {
    int n = k == 0 ? stats_.cube_cores_used : stats_.vector_cores_used;
    for (int p = 0; p < kNumPipes; ++p)
      stats_.utilisation[k][p] = makespan_ > 0 && n > 0 ? stats_.busy[k][p] / (makespan_ * n) : 0;
  }
  if (!opts_.trace_path.empty()) write_trace();
  stats_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return stats_;
}

void Engine::finish_core(Core& c) {
  // Flags left set leak into the next kernel on this core.
  for (int s = 0; s < kNumPipes; ++s)
    for (int d = 0; d < kNumPipes; ++d)
      for (int i = 0; i < 8; ++i) {
        const FlagState& f = c.flags[s][d][i];
        if (f.set)
          throw_error<SyncError>("flag left set at kernel end: T.set_flag(\"", pipe_user_name(Pipe(s)), "\", \"",
                                 pipe_user_name(Pipe(d)), "\", ", i, ") at ", where(f.set_site), " on ", core_name(c),
                                 " is never waited; add the matching T.wait_flag before the kernel ends (a pre-armed "
                                 "flag must be drained after its loop)");
      }
  for (int i = 0; i < 16; ++i) {
    if (!c.cross_avail[i].empty())
      throw_error<SyncError>("cross-core flag ", i, " left set at kernel end on ", core_name(c), ": ",
                             c.cross_avail[i].size(), " T.set_cross_flag (first at ", where(c.cross_avail[i].front().site),
                             ") never met a T.wait_cross_flag(", i, ") on this core");
  }
  c.fe = FeState::kDone;
  c.done_time = c.s_time;
  for (auto& ps : c.pipes) c.done_time = std::max(c.done_time, ps.free);
  makespan_ = std::max(makespan_, c.done_time);
  if (--slot_cores_left_[c.slot] == 0) {
    // A vector core's mode-1/2 set waits for its partner; at block end nothing can complete it.
    for (int k = 1; k <= prog_.vector_cores; ++k)
      for (int i = 0; i < 16; ++i) {
        const Core& v = core_at(c.slot, k);
        if (!v.cross_partial[i].empty())
          throw_error<SyncError>("cross-core flag ", i, " set by ", core_name(v), " at ",
                                 where(v.cross_partial[i].front().site),
                                 " never took effect: with mode 1/2 a vector core's set counts only when every vector "
                                 "core of the block has set the same flag");
      }
    ++blocks_done_;
    double t = 0;
    for (int k = 0; k < 1 + prog_.vector_cores; ++k) t = std::max(t, core_at(c.slot, k).done_time);
    if (next_block_ < grid_) start_block(c.slot, static_cast<int>(next_block_++), t);
  }
}

void Engine::check_drain(Core& c) {
  if (c.fe != FeState::kDrain) return;
  double t = c.s_time;
  for (int p = 1; p < kNumPipes; ++p) {
    if (!c.pipes[p].q.empty()) return;
    t = std::max(t, c.pipes[p].free);
  }
  c.s_time = t;
  switch (c.drain) {
    case DrainFor::kBarrierAll: {
      VClock j;
      for (int p = 0; p < kNumPipes; ++p) j.join(pipe_snapshot(c, Pipe(p)));
      for (auto& ps : c.pipes) ps.vc = j;
      c.issue_vc.join(j);
      ++c.pc;
      c.fe = FeState::kRun;
      schedule_fe(c, t);
      return;
    }
    case DrainFor::kSyncAll:
      c.fe = FeState::kSyncAll;
      arrive_sync_all(c, *c.wait_site);
      return;
    case DrainFor::kEnd:
      finish_core(c);
      return;
  }
}

void Engine::run_fe(Core& c, double now) {
  const std::vector<BInstr>& code = prog_.code[int(c.kind)];
  c.s_time = std::max(c.s_time, now);
  for (;;) {
    const BInstr& b = code[c.pc];
    fe_instr_ = &b;
    if (b.visible && c.s_time > now) {
      schedule_fe(c, c.s_time);
      return;
    }
    if (opts_.lenient && b.visible && lenient_wait_fe(c, b, now)) return;
    switch (b.op) {
      case BOp::kLet:
        c.frame[b.slot] = eval(c, b.x0);
        c.s_time += model_.scalar_op_cycles;
        ++c.pc;
        break;
      case BOp::kStoreLocal: {
        const SimBuffer& sb = prog_.buffers[b.buffer];
        int64_t off = 0, mul = 1;
        for (size_t d = b.indices.size(); d-- > 0;) {
          int64_t dim = sb.shape.size() == b.indices.size() ? eval_int(c, sb.shape[d]) : sb.local_size;
          off += eval_int(c, b.indices[d]) * mul;
          mul *= dim;
        }
        if (off < 0 || off >= sb.local_size)
          throw_error<RuntimeError>(where(&b), ": index ", off, " out of bounds of local buffer '", sb.name, "' (",
                                    sb.local_size, " elements)");
        Value v = eval(c, b.x0);
        bool vf = prog_.exprs[b.x0].is_float;
        Value& dst = c.locals[sb.local_offset + off];
        if (sb.dtype.is_float()) dst.f = vf ? v.f : double(v.i);
        else dst.i = vf ? int64_t(v.f) : v.i;
        if (sb.dtype.code == DataType::kFloat && sb.dtype.bits == 16)
          dst.f = ff::half_bits_to_float(ff::float_to_half_bits(float(dst.f)));
        c.s_time += model_.scalar_op_cycles;
        ++c.pc;
        break;
      }
      case BOp::kStoreMem: {
        Value v = eval(c, b.x0);
        const SimBuffer& sb = prog_.buffers[b.buffer];
        bool vf = prog_.exprs[b.x0].is_float;
        Value conv;
        if (sb.dtype.is_float()) conv.f = vf ? v.f : double(v.i);
        else conv.i = vf ? int64_t(v.f) : v.i;
        scalar_access(c, b.buffer, b.indices, true, conv, &b);
        c.s_time += sb.mem == Mem::kGM ? model_.scalar_gm_access_cycles : model_.scalar_local_access_cycles;
        ++c.pc;
        break;
      }
      case BOp::kEval:
        eval(c, b.x0);
        ++c.pc;
        break;
      case BOp::kJump: c.pc = b.target; break;
      case BOp::kBranchFalse: {
        Value v = eval(c, b.x0);
        bool t = prog_.exprs[b.x0].is_float ? v.f != 0 : v.i != 0;
        c.pc = t ? c.pc + 1 : b.target;
        c.s_time += model_.scalar_op_cycles;
        break;
      }
      case BOp::kForInit:
        c.frame[b.slot].i = eval_int(c, b.x0);
        c.frame[b.slot2].i = c.frame[b.slot].i + eval_int(c, b.x1);
        ++c.pc;
        break;
      case BOp::kForTest: c.pc = c.frame[b.slot].i < c.frame[b.slot2].i ? c.pc + 1 : b.target; break;
      case BOp::kForNext:
        ++c.frame[b.slot].i;
        c.s_time += model_.scalar_op_cycles;
        c.pc = b.target;
        break;
      case BOp::kIssue: {
        const InstrTemplate& t = prog_.templates[b.tmpl];
        if (t.cls.cls == InstrClass::kDebug) {
          // print / dump_tensor: the scalar unit reads the tile now.
          Instr in = make_instr(c, b);
          PipeState& sp = c.pipes[int(Pipe::kS)];
          uint32_t epoch = ++sp.counter;
          if (opts_.check) check_accesses(c, Pipe::kS, in, sp.vc, epoch, true);
          sp.vc.c[clock_index(c.core_in_block, Pipe::kS)] = epoch;
          std::ostringstream os;
          os << "[" << core_name(c) << "] " << attr_str(t.node->attrs, "msg", t.dumps_tensor ? "dump" : "")
             << " " << in.ops[0].buf->name << " =";
          int64_t n = in.ops[0].elements();
          std::vector<int64_t> offs;
          int64_t eb = in.ops[0].dt.element_bytes();
          int64_t limit = t.dumps_tensor ? attr_int(t.node->attrs, "size", n) : n;
          int64_t printed = 0;
          int64_t ext[4] = {1, 1, 1, 1}, st[4] = {0, 0, 0, 0};
          for (int d = 0; d < in.ops[0].nd; ++d) {
            ext[4 - in.ops[0].nd + d] = in.ops[0].ext[d];
            st[4 - in.ops[0].nd + d] = in.ops[0].stride[d];
          }
          for (int64_t a = 0; a < ext[0]; ++a)
            for (int64_t bb = 0; bb < ext[1]; ++bb)
              for (int64_t cc = 0; cc < ext[2]; ++cc)
                for (int64_t dd = 0; dd < ext[3] && printed < limit; ++dd, ++printed)
                  os << " " << load_scalar(in.ops[0].ptr + (a * st[0] + bb * st[1] + cc * st[2] + dd * st[3]) * eb,
                                           in.ops[0].dt);
          os << "\n";
          stats_.output += os.str();
          if (opts_.print) opts_.print(os.str());
          else std::cout << os.str() << std::flush;
          c.s_time += model_.scalar_local_access_cycles * double(n);
          ++c.pc;
          break;
        }
        Pipe p = t.cls.pipe;
        PipeState& ps = c.pipes[int(p)];
        if (static_cast<int>(ps.q.size()) >= model_.pipe_queue_depth) {
          c.fe = FeState::kQueueFull;
          c.full_pipe = p;
          return;
        }
        Instr in = make_instr(c, b);
        double ready = std::max(ps.free, in.issue_time);
        ps.q.push_back(std::move(in));
        if (!ps.scheduled && !ps.blocked) schedule_pipe(c, p, ready);
        c.s_time += model_.issue_cycles;
        ++c.pc;
        break;
      }
      case BOp::kSetFlag:
      case BOp::kWaitFlag:
      case BOp::kPipeBarrier:
      case BOp::kSetCross: {
        Instr in;
        in.kind = b.op;
        in.site = &b;
        in.p0 = b.p0;
        in.p1 = b.p1;
        if (b.x0 >= 0) in.id = check_flag_id(eval_int(c, b.x0), &b, b.op == BOp::kSetCross);
        if (b.x1 >= 0) in.mode = eval_int(c, b.x1);
        in.issue_time = c.s_time;
        in.issue_vc = c.issue_vc;
        Pipe runs_on = b.op == BOp::kWaitFlag ? b.p1 : b.p0;
        if (runs_on != Pipe::kS && static_cast<int>(c.pipes[int(runs_on)].q.size()) >= model_.pipe_queue_depth) {
          c.fe = FeState::kQueueFull;
          c.full_pipe = runs_on;
          return;
        }
        if (runs_on == Pipe::kS) {
          PipeState& sp = c.pipes[int(Pipe::kS)];
          if (b.op == BOp::kSetFlag) {
            set_flag(c, Pipe::kS, b.p1, in.id, c.s_time + model_.flag_cycles, pipe_snapshot(c, Pipe::kS), &b);
          } else if (b.op == BOp::kSetCross) {
            set_cross(c, in.id, in.mode, c.s_time + model_.flag_cycles, pipe_snapshot(c, Pipe::kS), &b);
          } else if (b.op == BOp::kWaitFlag) {
            double done;
            VClock j;
            if (!try_wait_flag(c, b.p0, Pipe::kS, in.id, c.s_time, &b, &done, &j)) {
              c.fe = FeState::kWaitFlag;
              c.wait_site = &b;
              c.wait_src = b.p0;
              c.wait_id = in.id;
              return;
            }
            sp.vc.join(j);
            c.issue_vc.join(j);
            // Instructions issued after a blocking wait of the scalar unit come after it.
            c.issue_vc.c[clock_index(c.core_in_block, Pipe::kS)] = sp.counter;
            c.s_time = done;
          }
          c.s_time += b.op == BOp::kPipeBarrier ? 0 : model_.flag_cycles;
          ++c.pc;
          break;
        }
        PipeState& ps = c.pipes[int(runs_on)];
        double ready = std::max(ps.free, in.issue_time);
        ps.q.push_back(std::move(in));
        if (!ps.scheduled && !ps.blocked) schedule_pipe(c, runs_on, ready);
        c.s_time += model_.issue_cycles;
        ++c.pc;
        break;
      }
      case BOp::kBarrierAll:
      case BOp::kSyncAll:
      case BOp::kEnd:
        c.drain = b.op == BOp::kBarrierAll ? DrainFor::kBarrierAll : b.op == BOp::kSyncAll ? DrainFor::kSyncAll
                                                                                              : DrainFor::kEnd;
        c.fe = FeState::kDrain;
        c.wait_site = &b;
        check_drain(c);
        return;
      case BOp::kWaitCross: {
        int64_t id = check_flag_id(eval_int(c, b.x0), &b, true);
        double t = c.s_time;
        VClock j;
        if (!try_wait_cross(c, id, &t, &j)) {
          c.fe = FeState::kWaitCross;
          c.wait_site = &b;
          c.wait_id = id;
          return;
        }
        c.pipes[int(Pipe::kS)].vc.join(j);
        c.issue_vc.join(j);
        c.s_time = t + model_.flag_cycles;
        ++c.pc;
        break;
      }
      case BOp::kPrintf: {
        std::vector<PrintfValue> values;
        for (int32_t x : b.indices) {
          Value v = eval(c, x);
          PrintfValue pv;
          pv.is_float = prog_.exprs[x].is_float;
          if (pv.is_float) pv.f = v.f;
          else pv.i = v.i;
          values.push_back(pv);
        }
        std::string s = render_printf(b.text, values);  // b.text was checked by check_printf_format
        if (s.empty() || s.back() != '\n') s += "\n";
        stats_.output += s;
        if (opts_.print) opts_.print(s);
        else std::cout << s << std::flush;
        ++c.pc;
        break;
      }
      case BOp::kAssert: {
        Value v = eval(c, b.x0);
        bool ok = prog_.exprs[b.x0].is_float ? v.f != 0 : v.i != 0;
        if (!ok)
          throw_error<RuntimeError>("device assert failed at ", where(&b), " on ", core_name(c),
                                    b.text.empty() ? "" : ": ", b.text);
        ++c.pc;
        break;
      }
    }
  }
}

}  // namespace tl::sim
