// Running external programs (the system C++ compiler, `--version` probes) from an argument
// vector. There is no shell in between, so paths with spaces or quotes need no escaping.
#pragma once

#include <string>
#include <vector>

namespace tl {

struct ProcessResult {
  int exit_code = -1;    // the program's exit status, or -1 when it was killed by a signal
  int signal = 0;        // the signal that ended it (0 if it exited)
  bool timed_out = false;
  std::string out;       // captured stdout
  std::string err;       // captured stderr
  bool ok() const { return exit_code == 0 && !timed_out && signal == 0; }
};

struct ProcessOptions {
  double timeout_s = 0;    // 0: no limit. On timeout the whole process group is killed.
  std::string cwd;         // empty: the current directory
  std::string stdin_data;  // written to the program's stdin, which is then closed
};

// Runs argv[0] (looked up in PATH when it has no '/') with the given arguments and waits for it.
// Throws tl::Error if the program cannot be started (not found, not executable).
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// The argument vector as a copy-pasteable shell command line (for error messages and logs).
std::string format_command(const std::vector<std::string>& argv);

// Runs a compiler; on failure throws tl::CompileError carrying the command line and its log.
// `what` names the job for the message ("building kernel 'main' for cpu"). The message blames
// tilelang's code generation only when the compiler's output points into `generated_source` (the
// emitted file); otherwise the failure is in the set-up (the compiler, its flags, the include
// directory, the output directory), and the message says so.
ProcessResult run_compiler(const std::vector<std::string>& argv, const std::string& what,
                           const ProcessOptions& options = {}, const std::string& generated_source = "");

}  // namespace tl
