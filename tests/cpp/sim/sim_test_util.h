// Helpers for building Ascend kernels with the IR builder in C++ tests, and for running them.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "ir/error.h"
#include "sim/program.h"
#include "sim/simulator.h"
#include "sim/tile_exec.h"

namespace tl::test {

// A float rounded to IEEE half and back, by the compiler's own _Float16 conversion: a reference
// independent of tl/common/float_formats.h, which the simulator uses.
inline double half_ref(float x) { return static_cast<double>(static_cast<float>(static_cast<_Float16>(x))); }

inline Span at(int line) {
  static auto file = std::make_shared<const std::string>("kernel.py");
  Span s;
  s.file = file;
  s.line = line;
  s.col = 5;
  return s;
}

inline Buffer buf(const std::string& name, std::vector<int64_t> shape, DataType dt, MemScope scope) {
  std::vector<Expr> sh;
  for (auto v : shape) sh.push_back(make_int(v));
  return Buffer(name, dt, sh, scope);
}

inline BufferRegion full(const Buffer& b) { return BufferRegion::full(b); }
inline BufferRegion region(const Buffer& b, std::vector<std::pair<Expr, int64_t>> r) {
  std::vector<Range> rr;
  for (auto& [m, e] : r) rr.emplace_back(m, make_int(e));
  return BufferRegion(b, rr);
}

inline Stmt copy(BufferRegion s, BufferRegion d, int line = 0, AttrMap attrs = {}) {
  return make_tile_op("copy", {s, d}, std::move(attrs), line ? at(line) : Span{});
}
inline Stmt op(const std::string& name, std::vector<TileArg> args, int line = 0, AttrMap attrs = {}) {
  return make_tile_op(name, std::move(args), std::move(attrs), line ? at(line) : Span{});
}
inline Stmt call(const std::string& name, std::vector<Expr> args, int line = 0) {
  return make_evaluate(make_call(DataType::Void(), name, std::move(args)), line ? at(line) : Span{});
}
inline Stmt set_flag(const std::string& s, const std::string& d, Expr id, int line = 0) {
  return call("ascend.set_flag", {make_string(s), make_string(d), id}, line);
}
inline Stmt wait_flag(const std::string& s, const std::string& d, Expr id, int line = 0) {
  return call("ascend.wait_flag", {make_string(s), make_string(d), id}, line);
}
inline Stmt pipe_barrier(const std::string& p, int line = 0) {
  return call("ascend.pipe_barrier", {make_string(p)}, line);
}
inline Stmt barrier_all(int line = 0) { return call("ascend.barrier_all", {}, line); }
inline Stmt set_cross(const std::string& p, Expr id, int mode = 2, int line = 0) {
  return call("ascend.set_cross_flag", {make_string(p), id, make_int(mode)}, line);
}
inline Stmt wait_cross(Expr id, int line = 0) { return call("ascend.wait_cross_flag", {id}, line); }
inline Stmt scope(const std::string& s, Stmt body) { return make_attr("scope", Attr(s), std::move(body)); }
inline Stmt serial(Var v, Expr n, Stmt body) { return make_for(v, make_int(0), n, ForKind::kSerial, std::move(body)); }

// A kernel `T.Kernel(n, is_npu=True) as (cid, vid)` around `body`, with `allocs` allocated inside.
inline PrimFunc npu_kernel(const std::string& name, std::vector<Buffer> params, int64_t blocks, Var cid, Var vid,
                           std::vector<Buffer> allocs, Stmt body, AttrMap fattrs = {}) {
  for (auto it = allocs.rbegin(); it != allocs.rend(); ++it) body = make_allocate(*it, body);
  AttrMap ka;
  ka["is_npu"] = Attr(true);
  ka["npu_vid"] = Attr(true);
  Stmt k = make_kernel({make_int(blocks), make_int(2)}, {cid, vid}, {}, {}, ka, body);
  std::vector<Param> ps;
  for (auto& b : params) ps.push_back(Param{b.name(), Var(), b});
  return PrimFunc(name, ps, k, fattrs);
}

// Host tensors.
struct HostTensor {
  DataType dt;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  int64_t numel() const {
    int64_t n = 1;
    for (auto v : shape) n *= v;
    return n;
  }
  double get(int64_t i) const { return sim::load_scalar(bytes.data() + i * dt.element_bytes(), dt); }
  void set(int64_t i, double v) { sim::store_scalar(bytes.data() + i * dt.element_bytes(), dt, v); }
};
inline HostTensor tensor(std::vector<int64_t> shape, DataType dt, uint32_t seed = 0, double lo = -1, double hi = 1) {
  HostTensor t{dt, shape, {}};
  t.bytes.assign(t.numel() * dt.element_bytes(), 0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  if (seed)
    for (int64_t i = 0; i < t.numel(); ++i) t.set(i, u(rng));
  return t;
}

inline sim::SimStats run(const PrimFunc& f, std::vector<HostTensor*> ts, sim::SimOptions opts = {},
                         const char* model = "A2") {
  auto prog = sim::compile_program(f, sim::machine_model(model));
  std::vector<TLArg> args;
  for (auto* t : ts) {
    TLArg a;
    a.ptr = t->bytes.data();
    args.push_back(a);
  }
  opts.print = [](const std::string&) {};
  return sim::simulate(*prog, args, opts);
}

// Runs and expects a SyncError whose message contains every piece of `parts`.
inline std::string expect_sync_error(const PrimFunc& f, std::vector<HostTensor*> ts,
                                     std::vector<std::string> parts) {
  try {
    run(f, ts);
  } catch (const SyncError& e) {
    std::string msg = e.what();
    for (auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in: " << msg;
    return msg;
  }
  ADD_FAILURE() << "expected a SyncError";
  return "";
}

}  // namespace tl::test
