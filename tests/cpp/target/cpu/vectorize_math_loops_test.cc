#include "target/cpu/vectorize_math_loops.h"

#include "pass_test_util.h"

namespace tl {
namespace {

std::string nest(const std::string& inner_header, const std::string& body) {
  return std::string(R"(
func @f(M: global float32[64], G: global float32[4096]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc S: fragment float32[4096]
    alloc O: fragment float32[4096]
    alloc I: fragment int32[4096]
    for i: int32 in serial(0, 64) {
      )") + inner_header + R"( {
        )" + body + R"(
      }
    }
  }
})";
}

// Flash attention's exp2 nest after fusion (the P cast already moved out by convert_bf16_rows): the
// scores and the rescaled output, both element-wise in place, with per-row scalars. The rescale of
// O by a factor free of j, which no other statement names, leaves as a loop of its own guarded by
// factor != 1 (x * 1 == x: rows whose running maximum did not change skip their pass over O).
TEST(VectorizeMathLoops, FlashExp2NestIsMarkedAndItsRescaleGuarded) {
  const std::string exp2 = "S[i * 64 + j] = exp2(S[i * 64 + j] * 0.5f32 - M[i] * 0.5f32)";
  const std::string scale = "O[i * 64 + j] = O[i * 64 + j] * M[i]";
  tl::testing::expect_pass("vectorize_math_loops", nest("for j: int32 in vectorized(0, 64)", exp2 + "\n        " + scale),
                           nest("if (M[i] != 1f32) {\n        for j: int32 in vectorized(0, 64) {cpu.vector_lanes = 16} {\n"
                                "          " + scale + "\n        }\n      }\n      for j: int32 in vectorized(0, 64) "
                                "{cpu.vector_lanes = 16}",
                                exp2));
  // O also read by another statement: the rescale stays in the nest.
  const std::string shared = exp2 + "\n        " + scale + "\n        G[i * 64 + j] = O[i * 64 + j]";
  tl::testing::expect_pass("vectorize_math_loops", nest("for j: int32 in vectorized(0, 64)", shared),
                           nest("for j: int32 in vectorized(0, 64) {cpu.vector_lanes = 16}", shared));
}

// The rescale as a loop of its own (score rows shorter than the output rows): marked and guarded too.
TEST(VectorizeMathLoops, RescaleLoopAloneIsGuarded) {
  const std::string scale = "O[i * 64 + j] = M[i] * O[i * 64 + j]";
  tl::testing::expect_pass("vectorize_math_loops", nest("for j: int32 in vectorized(0, 64)", scale),
                           nest("if (M[i] != 1f32) {\n        for j: int32 in vectorized(0, 64) {cpu.vector_lanes = 16}",
                                scale + "\n        }"));
  for (const char* other : {"O[i * 64 + j] = O[i * 64 + j] * O[i]", "O[i * 64 + j] = O[i * 64 + j + 1] * M[i]",
                            "O[i * 64 + j] = O[i * 64 + j] + M[i]"}) {
    const std::string src = nest("for j: int32 in vectorized(0, 64)", other);
    tl::testing::expect_pass("vectorize_math_loops", src, src);
  }
}

// exp over a tail-length loop starting past 0 (codegen runs the last iterations scalar); a store of a
// value free of the loop variable is admitted next to it (a broadcast).
TEST(VectorizeMathLoops, ExpWithOffsetAndInvariantStoreIsMarked) {
  const std::string body = "G[i * 64 + j + 3] = exp(S[i * 64 + j] / M[i]) + 1f32\n"
                           "        O[i * 64 + j] = M[i] * 2f32";
  tl::testing::expect_pass("vectorize_math_loops", nest("for j: int32 in vectorized(3, 50)", body),
                           nest("for j: int32 in vectorized(3, 50) {cpu.vector_lanes = 16}", body));
}

// fuse_elementwise_loops' scalar for a buffer used inside one iteration (T[0]), written and then
// read in the same iteration, is admitted.
TEST(VectorizeMathLoops, PerIterationTemporaryIsMarked) {
  const std::string body = "T[0] = exp(S[i * 64 + j] - M[i])\n"
                           "        S[i * 64 + j] = T[0] * 2f32\n"
                           "        O[i * 64 + j] = T[0]";
  auto with_t = [](std::string src) {
    return src.replace(src.find("    alloc I:"), 0, "    alloc T: local.var float32[1]\n");
  };
  tl::testing::expect_pass("vectorize_math_loops", with_t(nest("for j: int32 in vectorized(0, 64)", body)),
                           with_t(nest("for j: int32 in vectorized(0, 64) {cpu.vector_lanes = 16}", body)));
  for (const char* carried : {
           "T[0] = T[0] + exp(S[i * 64 + j])",                           // a sum across iterations
           "S[i * 64 + j] = exp(T[0])\n        T[0] = S[i * 64 + j]",   // read before this iteration writes it
           "T[0] = exp(S[i * 64 + j])\n        T[j] = 1f32",            // also stored element-wise
       }) {
    const std::string src = with_t(nest("for j: int32 in vectorized(0, 64)", carried));
    tl::testing::expect_pass("vectorize_math_loops", src, src);
  }
}

// int64 indices (dynamic shapes, or buffers past 2^31 elements): the loop variable appears widened.
TEST(VectorizeMathLoops, WidenedLoopVariableIsUnitStride) {
  const std::string body = "S[cast<int64>(i) * 64i64 + cast<int64>(j)] = exp2(O[cast<int64>(i) * 64i64 + cast<int64>(j)])";
  tl::testing::expect_pass("vectorize_math_loops", nest("for j: int32 in vectorized(0, 64)", body),
                           nest("for j: int32 in vectorized(0, 64) {cpu.vector_lanes = 16}", body));
}

// Loops the vector code does not cover stay as they are.
TEST(VectorizeMathLoops, OtherLoopsStay) {
  for (const char* body : {
           "S[i * 64 + j] = S[i * 64 + j] * 2f32",                               // no exp2 / exp
           "S[i * 64 + j] = exp2(cast<float32>(I[i * 64 + j]))",                 // a cast
           "S[i * 64 + j] = exp2(cast<float32>(j))",                             // the loop variable as a value
           "S[i * 64 + j] = exp2(O[i * 64 + 2 * j])",                            // not unit stride
           "S[i + 64 * j] = exp2(O[i * 64 + j])",                                // a strided store
           "S[i * 64 + j] = exp2(S[i * 64 + j + 1])",                            // reads another element it writes
           "S[i * 64 + j] = exp2(O[i * 64 + j])\n        O[i * 64 + j] = S[i]",  // an invariant read of a stored buffer
           "I[i * 64 + j] = cast<int32>(exp2(O[i * 64 + j]))",                   // an int32 store
           "S[i * 64 + j] = max(exp2(O[i * 64 + j]), 1f32)",                     // max
       }) {
    const std::string src = nest("for j: int32 in vectorized(0, 64)", body);
    tl::testing::expect_pass("vectorize_math_loops", src, src);
  }
  const std::string serial = nest("for j: int32 in serial(0, 64)", "S[i * 64 + j] = exp2(O[i * 64 + j])");
  tl::testing::expect_pass("vectorize_math_loops", serial, serial);
}

TEST(VectorizeMathLoops, PassConfigTurnsItOff) {
  const std::string src = nest("for j: int32 in vectorized(0, 64)", "S[i * 64 + j] = exp2(O[i * 64 + j])");
  tl::testing::expect_pass("vectorize_math_loops", src, src, "cpu", {{"tl.disable_cpu_vector_math", true}});
}

}  // namespace
}  // namespace tl
