// Per-pass Before/Expected tests, compared structurally (names and spans do not matter):
//
//   #include "pass_test_util.h"
//   TEST(PlanMemory, ReusesDeadBuffer) {
//     tl::testing::expect_pass("plan_memory", R"(
//   func @main(A: global float32[64]) {
//     ...
//   })", R"(
//   func @main(A: global float32[64]) {
//     ...
//   })", "cuda");
//   }
//
// Both texts are parsed (docs/IR_TEXT.md) and verified; the registered pass runs through a
// PassRunner (which verifies its output); on a mismatch the failure shows the first difference
// (structural_diff) and the whole actual output, ready to paste as the new Expected.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/target.h"
#include "ir/verifier.h"
#include "transform/pass.h"
#include "transform/pass_config.h"

namespace tl::testing {

// Runs the registered pass `pass` over `before`; returns the output. Raises whatever the parser,
// verifier or pass raises (a missing pass is a ValueError naming the registered ones).
inline PrimFunc run_pass(const std::string& pass, const std::string& before, const std::string& target = "cpu",
                         const AttrMap& configs = {}) {
  const PassFn* fn = find_pass(pass);
  if (!fn) {
    std::string known;
    for (auto& p : registered_passes()) known += (known.empty() ? "" : ", ") + p;
    throw_error<ValueError>("pass '", pass, "' is not registered (TL_REGISTER_PASS); registered: ",
                            known.empty() ? "(none)" : known);
  }
  PrimFunc f = parse_func(before, "<before>");
  verify(f);
  PassContext ctx;
  ctx.target = Target::parse(target);
  ctx.configs = validate_pass_configs(configs);
  PassRunner runner(f, ctx);
  runner.run(pass, *fn);
  return runner.func();
}

// Expects `pass` to turn `before` into something structurally equal to `expected`.
inline void expect_pass(const std::string& pass, const std::string& before, const std::string& expected,
                        const std::string& target = "cpu", const AttrMap& configs = {}) {
  PrimFunc want, got;
  try {
    want = parse_func(expected, "<expected>");
  } catch (const Error& e) {
    ADD_FAILURE() << "cannot parse the Expected IR of pass '" << pass << "': " << e.what();
    return;
  }
  try {
    got = run_pass(pass, before, target, configs);
  } catch (const Error& e) {
    ADD_FAILURE() << "pass '" << pass << "' on target " << target << " raised: " << e.what();
    return;
  }
  std::string diff = structural_diff(got, want);
  if (!diff.empty())
    ADD_FAILURE() << "pass '" << pass << "' (target " << target << ") output differs from Expected (lhs = actual, "
                  << "rhs = expected)\n"
                  << diff << "\nactual output:\n"
                  << print_func(got);
}

// Expects `pass` on `before` to raise E whose message contains `message_part`.
template <typename E>
void expect_pass_error(const std::string& pass, const std::string& before, const std::string& message_part,
                       const std::string& target = "cpu", const AttrMap& configs = {}) {
  try {
    PrimFunc got = run_pass(pass, before, target, configs);
    ADD_FAILURE() << "pass '" << pass << "' was expected to raise, but produced:\n" << print_func(got);
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos)
        << "error message '" << e.what() << "' does not mention '" << message_part << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << "pass '" << pass << "' raised the wrong error type: " << e.what();
  }
}

}  // namespace tl::testing
