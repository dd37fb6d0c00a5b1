// Scalar expression evaluation, scalar memory accesses and instruction issue of the simulator.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "ir/error.h"
#include "ir/scalar_ops.h"
#include "sim/engine.h"

namespace tl::sim {

namespace {

[[noreturn]] void op_error(scalar::Status s, const char* what, bool is_float) {
  if (s == scalar::Status::kBadType && is_float)
    throw_error<TypeError>("operator '", what, "' is not defined on floating-point values");
  if (s == scalar::Status::kDivByZero)
    throw_error<RuntimeError>("integer division by zero in a scalar expression of the kernel");
  throw_error<RuntimeError>(scalar::status_message(s), " in operator '", what, "' of a scalar expression of the kernel");
}

}  // namespace

// The operators' meaning is the one table of ir/scalar_ops.h; this loop only runs the compiled program.
Value Engine::eval(Core& c, int32_t idx) {
  const XNode& n = prog_.exprs[idx];
  Value r;
  switch (n.op) {
    case XOp::kIntConst: r.i = n.ival; return r;
    case XOp::kFloatConst: r.f = n.fval; return r;
    case XOp::kSlot: return c.frame[n.a];
    case XOp::kBinary: {
      const XNode& xa = prog_.exprs[n.a];
      const XNode& xb = prog_.exprs[n.b];
      Value a = eval(c, n.a), b = eval(c, n.b);
      if (xa.is_float || xb.is_float) {
        double x = xa.is_float ? a.f : double(a.i), y = xb.is_float ? b.f : double(b.i), v = 0;
        scalar::Status s = scalar::float_binary(n.bop, x, y, &v);
        if (s != scalar::Status::kOk || binop_is_logical(n.bop))
          op_error(scalar::Status::kBadType, binop_name(n.bop), true);
        if (scalar::gives_bool(n.bop)) r.i = v != 0;
        else r.f = round_float_via_f32(v, n.dtype);
        return r;
      }
      // Comparisons compare in the operands' type (n.dtype is bool there).
      DataType t = scalar::gives_bool(n.bop) ? xa.dtype : n.dtype;
      scalar::Status s = scalar::int_binary(n.bop, a.i, b.i, t, &r.i);
      if (s != scalar::Status::kOk) op_error(s, binop_name(n.bop), false);
      return r;
    }
    case XOp::kUnary: {
      const XNode& xa = prog_.exprs[n.a];
      Value a = eval(c, n.a);
      if (xa.is_float) {
        double v = 0;
        if (scalar::float_unary(n.uop, a.f, &v) != scalar::Status::kOk)
          op_error(scalar::Status::kBadType, unop_name(n.uop), true);
        if (n.uop == UnOp::kNot) r.i = v != 0;
        else r.f = v;
        return r;
      }
      scalar::Status s = scalar::int_unary(n.uop, a.i, n.uop == UnOp::kNot ? xa.dtype : n.dtype, &r.i);
      if (s != scalar::Status::kOk) op_error(s, unop_name(n.uop), false);
      return r;
    }
    case XOp::kSelect: {
      const XNode& xc = prog_.exprs[n.a];
      Value cv = eval(c, n.a);
      bool t = xc.is_float ? cv.f != 0 : cv.i != 0;
      int32_t pick = t ? n.b : n.c;
      Value v = eval(c, pick);
      if (n.is_float && !prog_.exprs[pick].is_float) v.f = double(v.i);
      if (!n.is_float && prog_.exprs[pick].is_float) v.i = int64_t(v.f);
      return v;
    }
    case XOp::kCast: {
      const XNode& xa = prog_.exprs[n.a];
      Value a = eval(c, n.a);
      if (n.is_float) r.f = round_float_via_f32(xa.is_float ? a.f : scalar::int_to_double(a.i, xa.dtype), n.dtype);
      else if (xa.is_float) scalar::float_to_int(a.f, n.dtype, &r.i);  // out of range: saturates
      else r.i = scalar::int_to_int(a.i, n.dtype);
      return r;
    }
    case XOp::kLoad: {
      const SimBuffer& sb = prog_.buffers[n.buffer];
      if (sb.is_local) {
        int64_t off = 0, mul = 1;
        for (size_t d = n.args.size(); d-- > 0;) {
          int64_t dim = sb.shape.size() == n.args.size() ? eval_int(c, sb.shape[d]) : sb.local_size;
          off += eval_int(c, n.args[d]) * mul;
          mul *= dim;
        }
        if (off < 0 || off >= sb.local_size)
          throw_error<RuntimeError>("index ", off, " out of bounds of local buffer '", sb.name, "' (", sb.local_size,
                                    " elements)");
        return c.locals[sb.local_offset + off];
      }
      return scalar_access(c, n.buffer, n.args, false, Value{0}, nullptr);
    }
    case XOp::kCall: {
      auto arg = [&](size_t i) {
        const XNode& x = prog_.exprs[n.args.at(i)];
        Value v = eval(c, n.args[i]);
        return x.is_float ? v.f : double(v.i);
      };
      const std::string& f = n.call;
      double v = 0;
      if (f == "ascend.use_swizzle") {
        // use_swizzle(idx, M, N, K, block_M, block_N, off=1, in_loop=0): remaps a linear tile index so that
        // consecutive indices walk `off` rows of tiles column by column (L2 reuse of the B panel).
        int64_t idx = int64_t(arg(0)), M = int64_t(arg(1)), N = int64_t(arg(2));
        int64_t bm = int64_t(arg(4)), bn = int64_t(arg(5));
        int64_t off = n.args.size() > 6 ? int64_t(arg(6)) : 1;
        int64_t mt = (M + bm - 1) / bm, nt = (N + bn - 1) / bn;
        if (off <= 0) off = 1;
        int64_t total = mt * nt;
        if (idx >= total || total == 0) {
          r.i = idx;
          return r;
        }
        int64_t group = off * nt;
        int64_t g = idx / group, in_g = idx % group;
        int64_t rows = std::min(off, mt - g * off);
        int64_t m = g * off + in_g % rows, nn = in_g / rows;
        r.i = n.is_float ? 0 : m * nt + nn;
        return r;
      }
      double xs[3] = {0, 0, 0};
      for (size_t k = 0; k < n.args.size() && k < 3; ++k) xs[k] = arg(k);
      if (n.args.size() > 3 || !scalar::math_call(f, xs, n.args.size(), &v))
        throw_error<NotImplemented>("not implemented: builtin '", f, "' in the ascend simulator");
      if (n.is_float) r.f = round_float_via_f32(v, n.dtype);
      else r.i = int64_t(v);
      return r;
    }
  }
  return r;
}

Engine::BufferView Engine::buffer_view(Core& c, const SimBuffer& sb) {
  BufferView v;
  if (sb.workspace) {
    for (int32_t e : sb.shape) v.shape.push_back(eval_int(c, e));
    v.strides.assign(v.shape.size(), 1);
    for (size_t d = v.shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * v.shape[d];
    v.base = ws_[c.slot].data() + sb.workspace_offset;
    v.addr0 = int64_t(reinterpret_cast<intptr_t>(v.base));
    return v;
  }
  if (sb.mem == Mem::kGM) {
    const GmInfo& g = gm_[sb.param_index];
    v.shape = g.shape;
    v.strides = g.strides;
    v.base = g.ptr;
    v.addr0 = int64_t(reinterpret_cast<intptr_t>(g.ptr));
    return v;
  }
  for (int32_t e : sb.shape) v.shape.push_back(eval_int(c, e));
  v.strides.assign(v.shape.size(), 1);
  for (size_t d = v.shape.size(); d-- > 1;) v.strides[d - 1] = v.strides[d] * v.shape[d];
  v.base = c.mem[int(sb.mem)].data() + sb.address;
  v.addr0 = sb.address;
  return v;
}

Value Engine::scalar_access(Core& c, int32_t buffer, const std::vector<int32_t>& indices, bool write, Value v,
                            const BInstr* site) {
  const SimBuffer& sb = prog_.buffers[buffer];
  if (sb.mem != Mem::kGM && mem_owner(sb.mem) != c.kind)
    throw_error<RuntimeError>("the ", core_kind_name(c.kind), " core cannot access ", mem_name(sb.mem), " buffer '",
                              sb.name, "'");
  auto [shape, strides, base, addr0] = buffer_view(c, sb);
  int64_t off = 0;
  if (indices.size() == 1 && shape.size() != 1) {
    off = eval_int(c, indices[0]);
    int64_t total = 1;
    for (int64_t s : shape) total *= s;
    if (off < 0 || off >= total)
      throw_error<RuntimeError>(where(site), ": flat index ", off, " out of bounds of '", sb.name, "' (", total,
                                " elements) on ", core_name(c));
  } else {
    for (size_t d = 0; d < indices.size(); ++d) {
      int64_t i = eval_int(c, indices[d]);
      if (i < 0 || (d < shape.size() && i >= shape[d]))
        throw_error<RuntimeError>(where(site), ": index ", i, " out of bounds of dimension ", d, " (extent ",
                                  d < shape.size() ? shape[d] : 0, ") of '", sb.name, "' on ", core_name(c));
      off += i * (d < strides.size() ? strides[d] : 1);
    }
  }
  int64_t eb = sb.dtype.element_bytes();
  uint8_t* p = base + off * eb;
  if (opts_.check) {
    PipeState& sp = c.pipes[int(Pipe::kS)];
    AccessInfo a;
    a.mem = sb.mem;
    a.space = sb.workspace ? c.slot * kCoresPerBlock : sb.mem == Mem::kGM ? -1 : c.index;
    int64_t one = 1;
    a.box = make_box(addr0 + off * eb, eb, 1, &one, &one);
    a.write = write;
    a.block = c.block;
    a.core = c.core_in_block;
    a.kind = c.kind;
    a.pipe = Pipe::kS;
    a.epoch = ++sp.counter;
    a.sync_passed = c.sync_passed;
    a.seq = ++c.seq;
    // A load inside an expression has no site of its own: it is the running instruction's.
    if (!site) site = fe_instr_;
    auto it = scalar_sites_.find({site, write});
    if (it == scalar_sites_.end()) {
      AccessSite s;
      if (site) s.span = site->span;
      s.text = std::string(write ? "scalar store to " : "scalar load of ") + sb.name;
      it = scalar_sites_.emplace(std::make_pair(site, write), s).first;
    }
    a.site = &it->second;
    a.buffer = sb.name;
    a.buffer_base = addr0;
    checker_.access(a, sp.vc);
    sp.vc.c[clock_index(c.core_in_block, Pipe::kS)] = a.epoch;
  }
  Value out{0};
  if (write) {
    if (opts_.compute_values) {
      if (sb.dtype.is_float()) store_scalar(p, sb.dtype, v.f);
      else store_int(p, sb.dtype, v.i);
    }
  } else {
    if (sb.dtype.is_float()) out.f = load_scalar(p, sb.dtype);
    else out.i = load_int(p, sb.dtype);
  }
  return out;
}

void Engine::resolve_operand(Core& c, const OperandTemplate& ot, Operand* o, const InstrTemplate& t) {
  const SimBuffer& sb = prog_.buffers[ot.buffer];
  o->buf = &sb;
  o->mem = sb.mem;
  o->dt = sb.dtype;
  size_t n = ot.min.size();
  std::vector<int64_t> mins(n), exts(n);
  for (size_t d = 0; d < n; ++d) {
    mins[d] = eval_int(c, ot.min[d]);
    exts[d] = eval_int(c, ot.extent[d]);
  }
  auto [shape, strides, base, addr0] = buffer_view(c, sb);
  if (shape.size() != n)
    throw_error<Error>(t.span.str(), ": ", t.text, ": region of '", sb.name, "' has ", n, " dimensions, the buffer ",
                       shape.size());
  int64_t off = 0;
  std::vector<int64_t> valid(n);
  bool partial = false, empty = false;
  for (size_t d = 0; d < n; ++d) {
    if (mins[d] < 0 || exts[d] < 0)
      throw_error<RuntimeError>(t.span.str(), ": ", t.text, ": region of '", sb.name, "' starts at ", mins[d],
                                " in dimension ", d, " on ", core_name(c));
    if (sb.mem == Mem::kGM) {
      valid[d] = std::clamp<int64_t>(shape[d] - mins[d], 0, exts[d]);
      if (valid[d] < exts[d]) partial = true;
      if (valid[d] == 0) empty = true;
    } else {
      if (mins[d] + exts[d] > shape[d])
        throw_error<RuntimeError>(t.span.str(), ": ", t.text, ": region [", mins[d], ", ", mins[d] + exts[d],
                                  ") of dimension ", d, " is outside on-chip buffer '", sb.name, "' (extent ", shape[d],
                                  ") on ", core_name(c));
      valid[d] = exts[d];
    }
    off += mins[d] * strides[d];
  }
  // Keep at most 4 dimensions: drop unit ones from the outside.
  std::vector<size_t> keep;
  for (size_t d = 0; d < n; ++d) keep.push_back(d);
  while (keep.size() > 4) {
    auto it = std::find_if(keep.begin(), keep.end(), [&](size_t d) { return exts[d] == 1; });
    if (it == keep.end())
      throw_error<NotImplemented>(t.span.str(), ": not implemented: tile regions with more than 4 non-unit dimensions");
    keep.erase(it);
  }
  o->nd = static_cast<int>(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) {
    o->ext[i] = exts[keep[i]];
    o->stride[i] = strides[keep[i]];
    o->valid[i] = valid[keep[i]];
  }
  int64_t eb = sb.dtype.element_bytes();
  o->partial = partial;
  o->empty = empty;
  o->ptr = base + off * eb;
  o->addr = addr0 + off * eb;
}

Instr Engine::make_instr(Core& c, const BInstr& b) {
  Instr in;
  in.kind = BOp::kIssue;
  in.t = &prog_.templates[b.tmpl];
  in.site = &b;
  const InstrTemplate& t = *in.t;
  for (auto& a : t.args) {
    if (a.is_region) {
      if (in.nops >= 4) throw_error<NotImplemented>(t.span.str(), ": not implemented: tile ops with more than 4 buffers");
      resolve_operand(c, t.regions[a.index], &in.ops[in.nops++], t);
    } else if (!in.has_scalar) {
      Value v = eval(c, a.index);
      in.scalar = prog_.exprs[a.index].is_float ? v.f : double(v.i);
      in.has_scalar = true;
    }
  }
  if (t.init >= 0) {
    Value v = eval(c, t.init);
    in.init = prog_.exprs[t.init].is_float ? v.f != 0 : v.i != 0;
  }
  if (t.pad_value >= 0) {
    Value v = eval(c, t.pad_value);
    in.has_pad = true;
    in.pad = prog_.exprs[t.pad_value].is_float ? v.f : double(v.i);
  }
  in.issue_time = c.s_time;
  in.issue_vc = c.issue_vc;
  // Scalar operands are loaded by the scalar unit before it can issue the instruction.
  if (!prog_.templates[b.tmpl].args.empty())
    for (auto& a : t.args)
      if (!a.is_region) {
        uint32_t& e = in.issue_vc.c[clock_index(c.core_in_block, Pipe::kS)];
        e = std::max(e, c.pipes[int(Pipe::kS)].counter);
        break;
      }
  in.seq = ++c.seq;
  if (opts_.lenient) {
    InFlight f;
    f.seq = in.seq;
    f.pipe = t.cls.pipe;
    for (int i = 0; i < in.nops; ++i) {
      const bool w = t.regions[i].write;
      const Operand& o = in.ops[i];
      int64_t st[4];
      for (int d = 0; d < o.nd; ++d) st[d] = o.stride[d];
      Box box = make_box(o.addr, o.dt.element_bytes(), o.nd, o.valid, st);
      f.touches.push_back({t.regions[i].buffer, o.mem, box, w});
    }
    // Drop finished entries, then depend on every conflicting earlier one of another pipe.
    while (!c.inflight.empty() && c.inflight.front().started && c.inflight.front().end <= c.s_time)
      c.inflight.pop_front();
    for (auto& e : c.inflight) {
      if (e.pipe == f.pipe || (e.started && e.end <= c.s_time)) continue;
      bool conflict = false;
      for (auto& a : e.touches)
        for (auto& b2 : f.touches) {
          int64_t lo, hi;
          if (a.mem == b2.mem && (a.write || b2.write) && box_overlap(a.box, b2.box, &lo, &hi)) conflict = true;
        }
      if (conflict) in.deps.push_back(e.seq);
    }
    c.inflight.push_back(std::move(f));
  }
  return in;
}

bool Engine::lenient_wait_fe(Core& c, const BInstr& b, double now) {
  // The scalar unit's own memory accesses wait for conflicting in-flight instructions of its core.
  std::vector<std::pair<int32_t, bool>> touch;
  auto scan = [&](int32_t x) {
    if (x < 0) return;
    std::vector<int32_t> stack{x};
    while (!stack.empty()) {
      const XNode& n = prog_.exprs[stack.back()];
      stack.pop_back();
      if (n.op == XOp::kLoad && !prog_.buffers[n.buffer].is_local) touch.emplace_back(n.buffer, false);
      for (int32_t ch : {n.a, n.b, n.c})
        if (ch >= 0) stack.push_back(ch);
      for (int32_t ch : n.args) stack.push_back(ch);
    }
  };
  scan(b.x0);
  scan(b.x1);
  for (int32_t i : b.indices) scan(i);
  if (b.op == BOp::kStoreMem) touch.emplace_back(b.buffer, true);
  if (b.op == BOp::kIssue) {
    const InstrTemplate& t = prog_.templates[b.tmpl];
    // Scalar operands and region bounds are evaluated by the scalar unit when it issues.
    for (auto& a : t.args)
      if (!a.is_region) scan(a.index);
    for (auto& r : t.regions) {
      for (int32_t x : r.min) scan(x);
      for (int32_t x : r.extent) scan(x);
    }
    if (t.cls.cls == InstrClass::kDebug)
      for (auto& r : t.regions) touch.emplace_back(r.buffer, false);
  }
  if (touch.empty()) return false;
  double t = c.s_time;
  for (auto& e : c.inflight)
    for (auto& tt : e.touches)
      for (auto& [buf, w] : touch)
        if (tt.buffer == buf && (tt.write || w)) {
          if (!e.started) {
            c.fe = FeState::kLenient;
            c.wait_site = &b;
            return true;
          }
          t = std::max(t, e.end);
        }
  if (t > now) {
    c.s_time = t;
    schedule_fe(c, t);
    return true;
  }
  return false;
}

void Engine::report_deadlock() {
  std::ostringstream os;
  os << "deadlock: no core can make progress (at cycle " << static_cast<int64_t>(now_) << ", " << blocks_done_
     << " of " << grid_ << " blocks finished)";
  int lines = 0;
  for (auto& c : cores_) {
    if (!c.used || c.fe == FeState::kDone || c.block < 0 || lines >= 8) continue;
    for (int p = 1; p < kNumPipes && lines < 8; ++p) {
      const PipeState& ps = c.pipes[p];
      if (ps.q.empty() || !ps.blocked) continue;
      const Instr& h = ps.q.front();
      if (h.kind == BOp::kWaitFlag) {
        os << "\n  " << core_name(c) << ": pipe " << pipe_name(Pipe(p)) << " waits T.wait_flag(\""
           << pipe_user_name(h.p0) << "\", \"" << pipe_user_name(h.p1) << "\", " << h.id << ") at " << where(h.site)
           << ", but no T.set_flag(\"" << pipe_user_name(h.p0) << "\", \"" << pipe_user_name(h.p1) << "\", " << h.id
           << ") can still reach it";
        ++lines;
      }
    }
    if (lines >= 8) break;
    switch (c.fe) {
      case FeState::kWaitFlag:
        os << "\n  " << core_name(c) << ": scalar unit waits T.wait_flag(\"" << pipe_user_name(c.wait_src)
           << "\", \"s\", " << c.wait_id << ") at " << where(c.wait_site) << ", which is never set";
        ++lines;
        break;
      case FeState::kWaitCross:
        os << "\n  " << core_name(c) << ": waits T.wait_cross_flag(" << c.wait_id << ") at " << where(c.wait_site)
           << ", but no matching T.set_cross_flag reaches this core";
        ++lines;
        break;
      case FeState::kSyncAll:
        os << "\n  " << core_name(c) << ": waits in T.sync_all at " << where(c.wait_site) << " (" << sync_all_.arrived
           << " cores arrived)";
        ++lines;
        break;
      case FeState::kQueueFull:
        os << "\n  " << core_name(c) << ": scalar unit stalls because the queue of pipe " << pipe_name(c.full_pipe)
           << " is full (" << model_.pipe_queue_depth << " entries)";
        ++lines;
        break;
      case FeState::kDrain:
        os << "\n  " << core_name(c) << ": scalar unit waits for its pipes to drain at " << where(c.wait_site);
        ++lines;
        break;
      default: break;
    }
  }
  throw SyncError(os.str());
}

}  // namespace tl::sim
