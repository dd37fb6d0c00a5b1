#include "runtime/process.h"

#include <gtest/gtest.h>

#include <chrono>

#include "ir/error.h"

namespace tl {

TEST(Process, CapturesOutputAndStatus) {
  ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Process, ArgumentsAreNotInterpretedByAShell) {
  ProcessResult r = run_process({"echo", "$HOME", "a b", "'q'", ";", "ls"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out, "$HOME a b 'q' ; ls\n");
}

TEST(Process, LargeOutputOnBothPipesDoesNotDeadlock) {
  // 1 MB on each of stdout and stderr: more than a pipe buffer, so both must be drained together.
  ProcessResult r = run_process({"sh", "-c", "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000000u);
  EXPECT_EQ(r.err.size(), 1000000u);
}

TEST(Process, StdinIsFed) {
  ProcessOptions o;
  o.stdin_data = std::string(300000, 'z');
  ProcessResult r = run_process({"wc", "-c"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(std::stoll(r.out), 300000);
}

TEST(Process, TimeoutKillsTheProcessGroup) {
  ProcessOptions o;
  o.timeout_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  // The child shell starts a grandchild; both must die.
  ProcessResult r = run_process({"sh", "-c", "sleep 30 & sleep 30; echo never"}, o);
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_LT(dt, 5.0);
  EXPECT_EQ(r.out.find("never"), std::string::npos);
}

TEST(Process, WorkingDirectory) {
  ProcessOptions o;
  o.cwd = "/";
  ProcessResult r = run_process({"pwd"}, o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out, "/\n");
}

TEST(Process, MissingProgramThrows) {
  try {
    run_process({"tl-no-such-program-xyz", "--version"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tl-no-such-program-xyz"), std::string::npos);
  }
}

TEST(Process, CompilerFailureIsCompileErrorWithCommandAndLog) {
  try {
    run_compiler({"sh", "-c", "echo 'kernel.cc:3: error: expected ;' >&2; exit 1", "sh"}, "building kernel 'k'");
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("building kernel 'k'"), std::string::npos) << m;
    EXPECT_NE(m.find("exited with status 1"), std::string::npos) << m;
    EXPECT_NE(m.find("command: sh -c"), std::string::npos) << m;
    EXPECT_NE(m.find("kernel.cc:3: error: expected ;"), std::string::npos) << m;
  }
  EXPECT_THROW(run_compiler({"tl-no-such-compiler-xyz"}, "x"), CompileError);
}

TEST(Process, FormatCommandQuotes) {
  EXPECT_EQ(format_command({"g++", "-O2", "a b.cc", "it's"}), "g++ -O2 'a b.cc' 'it'\\''s'");
}

}  // namespace tl
