// Running passes: the context a pipeline runs in, IR dumps after every pass (TL_DUMP_IR=dir),
// a per-pass time table (TL_PASS_TIMING=1), and the by-name registry tl-opt uses.
//
// A pass is one free function `PrimFunc name(const PrimFunc&, const PassContext&)` declared in its
// own header under src/transform/ (or src/target/<t>/). A pass that tl-opt should reach registers
// itself in its .cc with TL_REGISTER_PASS(name, function).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/target.h"

namespace tl {

struct PassContext {
  Target target;
  AttrMap configs;  // validated pass configs
  bool verbose = false;
  // Filled by PassRunner: the IR after each pass, in order (kept for Kernel.get_ir(stage)).
  std::vector<std::pair<std::string, PrimFunc>> stages;
};

using PassFn = std::function<PrimFunc(const PrimFunc&, const PassContext&)>;

// Runs passes one by one over a function, recording each stage, dumping and timing as asked by
// the environment (TL_DUMP_IR, TL_PASS_TIMING) or the configs (tl.enable_dump_ir).
class PassRunner {
 public:
  PassRunner(PrimFunc f, PassContext& ctx);
  ~PassRunner();
  // Applies `fn`, then verifies the result (ir/verifier.h) so a broken pass is caught where it ran.
  PassRunner& run(const std::string& name, const PassFn& fn);
  const PrimFunc& func() const { return func_; }

 private:
  PrimFunc func_;
  PassContext& ctx_;
  std::string dump_dir_;
  bool timing_ = false;
  int index_ = 0;
  std::vector<std::pair<std::string, double>> times_;
};

// Registry for tl-opt and tests.
void register_pass(const std::string& name, PassFn fn);
const PassFn* find_pass(const std::string& name);
std::vector<std::string> registered_passes();

struct PassRegistration {
  PassRegistration(const char* name, PassFn fn) { register_pass(name, std::move(fn)); }
};
#define TL_PASS_CONCAT2(a, b) a##b
#define TL_PASS_CONCAT(a, b) TL_PASS_CONCAT2(a, b)
#define TL_REGISTER_PASS(name, fn) \
  static ::tl::PassRegistration TL_PASS_CONCAT(tl_pass_reg_, __LINE__)(name, fn)

}  // namespace tl
