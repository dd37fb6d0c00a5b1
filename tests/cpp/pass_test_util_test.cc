// Proves the per-pass Before/Expected harness with passes registered only in this test.
#include "pass_test_util.h"

#include <gtest/gtest-spi.h>

#include "ir/functor.h"

namespace tl {
namespace {

PrimFunc identity(const PrimFunc& f, const PassContext&) { return f; }

// Doubles every float constant: a real rewrite for the harness to compare.
class DoubleFloats : public StmtMutator {
 protected:
  Expr mutate_float(const Expr& e) override {
    auto* n = e.as<FloatImmNode>();
    return make_float(n->value * 2, n->dtype);
  }
};
PrimFunc double_floats(const PrimFunc& f, const PassContext&) { return f.with_body(DoubleFloats().mutate(f.body())); }

// Records the target it ran for, and refuses cuda.
std::string last_target;
PrimFunc target_probe(const PrimFunc& f, const PassContext& ctx) {
  last_target = ctx.target.kind_name();
  if (ctx.target.is_cuda()) throw_error<NotImplemented>("not implemented: target_probe on target cuda");
  return f;
}

// Produces IR that fails verification (a store to a buffer nobody allocated).
PrimFunc broken(const PrimFunc& f, const PassContext&) {
  Buffer ghost("ghost", DataType::Float32(), {make_int(4)}, MemScope::kShared);
  return f.with_body(make_seq({f.body(), make_store(ghost, {0}, make_float(1.0))}));
}

TL_REGISTER_PASS("test.identity", identity);
TL_REGISTER_PASS("test.double_floats", double_floats);
TL_REGISTER_PASS("test.target_probe", target_probe);
TL_REGISTER_PASS("test.broken", broken);

const char* kBefore = R"(func @f(A: global float32[8]) {
  for i: int32 in serial(0, 8) {
    A[i] = A[i] * 1.5f32
  }
})";

TEST(PassHarness, IdentityMatchesItsInputUnderOtherNames) {
  testing::expect_pass("test.identity", kBefore, R"(func @f(X: global float32[8]) {
  for k: int32 in serial(0, 8) {
    X[k] = X[k] * 1.5f32
  }
})");
}

TEST(PassHarness, RewriteMatchesExpected) {
  testing::expect_pass("test.double_floats", kBefore, R"(func @f(A: global float32[8]) {
  for i: int32 in serial(0, 8) {
    A[i] = A[i] * 3.0f32
  }
})");
}

TEST(PassHarness, MismatchFailsWithDiffAndActualOutput) {
  EXPECT_NONFATAL_FAILURE(testing::expect_pass("test.double_floats", kBefore, kBefore),
                          "mismatch at body.for.body.store.value.b: float constants differ");
  EXPECT_NONFATAL_FAILURE(testing::expect_pass("test.double_floats", kBefore, kBefore), "A[i] = A[i] * 3.0f32");
}

TEST(PassHarness, TargetReachesThePass) {
  testing::expect_pass("test.target_probe", kBefore, kBefore, "ascend");
  EXPECT_EQ(last_target, "ascend");
  testing::expect_pass_error<NotImplemented>("test.target_probe", kBefore, "target_probe on target cuda", "cuda");
}

TEST(PassHarness, ReportsUnknownPassesBadTextAndBrokenOutput) {
  EXPECT_NONFATAL_FAILURE(testing::expect_pass("test.nope", kBefore, kBefore), "is not registered");
  EXPECT_NONFATAL_FAILURE(testing::expect_pass("test.identity", kBefore, "func @f( {"), "<expected>:1:10");
  EXPECT_NONFATAL_FAILURE(testing::expect_pass("test.identity", "func @f() {\n  y = 1\n}", kBefore), "<before>:2:3");
  // The PassRunner verifies the output, so a pass that breaks the IR fails where it ran.
  testing::expect_pass_error<VerifyError>("test.broken", kBefore, "buffer 'ghost' (shared) is used outside");
}

}  // namespace
}  // namespace tl
