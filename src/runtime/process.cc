#include "runtime/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "ir/error.h"

extern char** environ;

namespace tl {

namespace {

// Closes a pipe end once, tolerating repeated calls.
void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw_error<Error>("cannot create a pipe: ", std::strerror(errno));
    read_end = fds[0];
    write_end = fds[1];
  }
  ~Pipe() {
    close_fd(read_end);
    close_fd(write_end);
  }
};

bool needs_quoting(const std::string& s) {
  if (s.empty()) return true;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,+@%", c))) return true;
  return false;
}

}  // namespace

std::string format_command(const std::vector<std::string>& argv) {
  std::string out;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i) out += ' ';
    if (!needs_quoting(argv[i])) {
      out += argv[i];
      continue;
    }
    out += '\'';
    for (char c : argv[i]) {
      if (c == '\'') out += "'\\''";
      else out += c;
    }
    out += '\'';
  }
  return out;
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) throw_error<Error>("run_process: empty argument vector");
  Pipe out_pipe, err_pipe, in_pipe;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe.read_end, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe.write_end, 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe.write_end, 2);
  if (!options.cwd.empty()) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
    posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
#else
#error "run_process needs posix_spawn_file_actions_addchdir_np (glibc >= 2.29)"
#endif
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A process group of its own, so a timeout kills the compiler's children (cc1plus, as) too;
  // default signal dispositions and an empty mask, whatever the embedding process installed.
  short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  posix_spawnattr_setflags(&attr, flags);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);

  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  pid_t pid = -1;
  int rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw_error<Error>("cannot run '", argv[0], "': ", std::strerror(rc), " (command: ", format_command(argv), ")");

  close_fd(out_pipe.write_end);
  close_fd(err_pipe.write_end);
  close_fd(in_pipe.read_end);

  ProcessResult result;
  // Feed stdin without blocking on a full pipe: non-blocking writes interleaved with reads.
  size_t stdin_written = 0;
  if (options.stdin_data.empty()) close_fd(in_pipe.write_end);
  else fcntl(in_pipe.write_end, F_SETFL, O_NONBLOCK);

  auto start = std::chrono::steady_clock::now();
  char chunk[65536];
  while (out_pipe.read_end >= 0 || err_pipe.read_end >= 0) {
    pollfd fds[3];
    int nfds = 0;
    int out_slot = -1, err_slot = -1, in_slot = -1;
    if (out_pipe.read_end >= 0) { fds[nfds] = {out_pipe.read_end, POLLIN, 0}; out_slot = nfds++; }
    if (err_pipe.read_end >= 0) { fds[nfds] = {err_pipe.read_end, POLLIN, 0}; err_slot = nfds++; }
    if (in_pipe.write_end >= 0) { fds[nfds] = {in_pipe.write_end, POLLOUT, 0}; in_slot = nfds++; }
    int wait_ms = -1;
    if (options.timeout_s > 0) {
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double left = options.timeout_s - elapsed;
      if (left <= 0) {
        result.timed_out = true;
        ::kill(-pid, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(left * 1000) + 1;
    }
    int n = ::poll(fds, nfds, wait_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::kill(-pid, SIGKILL);
      throw_error<Error>("poll failed while running '", argv[0], "': ", std::strerror(errno));
    }
    auto drain = [&](int slot, int& fd, std::string& sink) {
      if (slot < 0 || !(fds[slot].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t got = ::read(fd, chunk, sizeof(chunk));
      if (got > 0) sink.append(chunk, static_cast<size_t>(got));
      else if (got == 0 || (errno != EINTR && errno != EAGAIN)) close_fd(fd);
    };
    drain(out_slot, out_pipe.read_end, result.out);
    drain(err_slot, err_pipe.read_end, result.err);
    if (in_slot >= 0 && (fds[in_slot].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t put = ::write(in_pipe.write_end, options.stdin_data.data() + stdin_written,
                            options.stdin_data.size() - stdin_written);
      if (put > 0) stdin_written += static_cast<size_t>(put);
      if (put < 0 && errno != EAGAIN && errno != EINTR) close_fd(in_pipe.write_end);
      if (stdin_written == options.stdin_data.size()) close_fd(in_pipe.write_end);
    }
  }
  close_fd(in_pipe.write_end);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw_error<Error>("waitpid failed for '", argv[0], "': ", std::strerror(errno));
  }
  // Reap leftovers of the group (children that outlived a killed parent) best-effort.
  if (result.timed_out) ::kill(-pid, SIGKILL);
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = -1;
    result.signal = WTERMSIG(status);
  }
  return result;
}

ProcessResult run_compiler(const std::vector<std::string>& argv, const std::string& what,
                           const ProcessOptions& options, const std::string& generated_source) {
  ProcessResult r;
  try {
    r = run_process(argv, options);
  } catch (const Error& e) {
    throw_error<CompileError>(what, " failed: ", e.what());
  }
  if (r.ok()) return r;
  std::string reason;
  if (r.timed_out) reason = "timed out after " + std::to_string(options.timeout_s) + " s";
  else if (r.signal) reason = "was killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) + ")";
  else reason = "exited with status " + std::to_string(r.exit_code);
  std::string log = r.err;
  if (!r.out.empty()) log = r.out + (log.empty() ? "" : "\n") + log;
  constexpr size_t kMaxLog = 20000;
  if (log.size() > kMaxLog) log = log.substr(0, kMaxLog) + "\n... (log truncated)";
  bool in_generated = !generated_source.empty() && log.find(generated_source + ":") != std::string::npos;
  std::string blame =
      in_generated || generated_source.empty()
          ? "This is a bug in tilelang's code generation (or an incompatible flag in compile_flags)."
          : "The compiler did not get to the generated code: check the compiler (CXX), compile_flags, "
            "TILELANG_INCLUDE_DIR and the cache directory (TILELANG_CACHE_DIR) in the command and output below.";
  throw_error<CompileError>(what, ": the compiler ", reason, ". ", blame, "\ncommand: ", format_command(argv),
                            "\ncompiler output:\n", log);
}

}  // namespace tl
