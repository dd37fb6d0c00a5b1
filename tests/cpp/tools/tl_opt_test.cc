// Runs the built tl-opt binary (TL_TOOLS_DIR) on files and stdin.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"

namespace tl {
namespace {

struct Result {
  int status = -1;
  std::string out, err;
};

class TlOpt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tl_opt_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // Runs `tl-opt <args>` (optionally with stdin from a file), capturing stdout and stderr.
  Result run(const std::string& args, const std::string& stdin_file = "") {
    std::string cmd = std::string(TL_TOOLS_DIR) + "/tl-opt " + args + " > " + (dir_ / "out").string() + " 2> " +
                      (dir_ / "err").string();
    if (!stdin_file.empty()) cmd += " < " + stdin_file;
    int rc = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(dir_ / "out");
    r.err = slurp(dir_ / "err");
    return r;
  }

  std::filesystem::path dir_;
};

const char* kInput = R"(// input
func @main dyn[n: int32](A: global float32[n], B: global float32[n]) {
  kernel(grid=[floordiv(n + 127, 128)], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    for i: int32 in parallel(0, 128) {
      if (bx * 128 + i < n) {
        B[bx * 128 + i] = A[bx * 128 + i] * 2.0f32
      }
    }
  }
}
)";

TEST_F(TlOpt, PrintsParsedInput) {
  Result r = run(write("in.tir", kInput));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  PrimFunc want = parse_func(kInput);
  EXPECT_EQ(r.out, print_func(want));
}

TEST_F(TlOpt, ReadsStdin) {
  Result r = run("-", write("in.tir", kInput));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(structural_equal(parse_func(r.out), parse_func(kInput)));
}

TEST_F(TlOpt, RunsPassesAndPrintsAfterEach) {
  Result r = run(write("in.tir", kInput) + " --pass identity --pass identity --print-after-each --target cuda");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string one = "// after identity\n" + print_func(parse_func(kInput)) + "\n";
  EXPECT_EQ(r.out, one + one);
  Result list = run("--list-passes");
  ASSERT_EQ(list.status, 0);
  EXPECT_NE(list.out.find("identity\n"), std::string::npos) << list.out;
}

TEST_F(TlOpt, CanonicalOutput) {
  Result r = run(write("in.tir", kInput) + " --canonical");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, canonical_text(parse_func(kInput)));
  EXPECT_NE(r.out.find("b0: global float32[v0]"), std::string::npos) << r.out;
}

TEST_F(TlOpt, ConfigsAreValidated) {
  Result ok = run(write("in.tir", kInput) + " --pass identity --config tl.disable_tma_lower=true --config "
                  "tl.config_index_bitwidth=64 --config tl.dump_ir_path=" + (dir_ / "dump").string());
  EXPECT_EQ(ok.status, 0) << ok.err;
  Result bad = run(write("in.tir", kInput) + " --config tl.no_such_key=1");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("unknown pass config 'tl.no_such_key'"), std::string::npos) << bad.err;
  Result typed = run(write("in.tir", kInput) + " --config tl.config_index_bitwidth=wide");
  EXPECT_EQ(typed.status, 1);
  EXPECT_NE(typed.err.find("expects an int"), std::string::npos) << typed.err;
}

TEST_F(TlOpt, ErrorsGoToStderrWithExitCode1) {
  std::string bad = write("bad.tir", "func @f(A: global float32[4]) {\n  A[0] = x\n}\n");
  Result r = run(bad);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(bad + ":2:10: undefined variable 'x'"), std::string::npos) << r.err;

  Result unverified = run(write("loose.tir", "func @f(A: global int32[4]) {\n  break\n}\n"));
  EXPECT_EQ(unverified.status, 1);
  EXPECT_NE(unverified.err.find(":2:3: IR verification failed"), std::string::npos) << unverified.err;

  Result no_pass = run(write("in.tir", kInput) + " --pass no_such_pass");
  EXPECT_EQ(no_pass.status, 1);
  EXPECT_NE(no_pass.err.find("unknown pass 'no_such_pass'; registered passes: "), std::string::npos) << no_pass.err;

  Result no_file = run((dir_ / "missing.tir").string());
  EXPECT_EQ(no_file.status, 1);
  EXPECT_NE(no_file.err.find("cannot read input file"), std::string::npos) << no_file.err;

  Result bad_target = run(write("in.tir", kInput) + " --target tpu");
  EXPECT_EQ(bad_target.status, 1);
  EXPECT_NE(bad_target.err.find("tpu"), std::string::npos) << bad_target.err;

  Result bad_flag = run("--frobnicate");
  EXPECT_EQ(bad_flag.status, 1);
  EXPECT_NE(bad_flag.err.find("unknown option '--frobnicate'"), std::string::npos) << bad_flag.err;

  Result no_input = run("");
  EXPECT_EQ(no_input.status, 1);
  EXPECT_NE(no_input.err.find("no input file"), std::string::npos) << no_input.err;

  Result garbage = run("-", write("garbage.tir", std::string("\x01\xff\x00 func", 7)));
  EXPECT_EQ(garbage.status, 1);
  EXPECT_NE(garbage.err.find("<stdin>:1:1: "), std::string::npos) << garbage.err;
}

}  // namespace
}  // namespace tl
