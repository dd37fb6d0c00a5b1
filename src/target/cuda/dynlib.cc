#include "target/cuda/dynlib.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <glob.h>
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tl {

std::vector<std::string> cuda_toolkit_roots() {
  std::vector<std::string> roots;
  for (const char* v : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"})
    if (const char* p = std::getenv(v); p && *p) roots.push_back(p);
  roots.push_back("/usr/local/cuda");
  return roots;
}

std::vector<std::string> glob_files(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

std::vector<std::string> python_site_packages_dirs() {
  std::vector<std::string> prefixes;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    // <prefix>/bin/python3.x -> <prefix>
    std::string path(exe, static_cast<size_t>(n));
    auto slash = path.rfind('/');
    if (slash != std::string::npos) {
      std::string bin = path.substr(0, slash);
      auto slash2 = bin.rfind('/');
      if (slash2 != std::string::npos) prefixes.push_back(bin.substr(0, slash2));
    }
  }
  for (const char* v : {"VIRTUAL_ENV", "CONDA_PREFIX", "TILELANG_PYTHON_PREFIX"})
    if (const char* p = std::getenv(v); p && *p) prefixes.push_back(p);
  std::vector<std::string> out;
  for (const std::string& p : prefixes) {
    for (const std::string& d : glob_files(p + "/lib/python3*/site-packages")) out.push_back(d);
    for (const std::string& d : glob_files(p + "/lib/python3*/dist-packages")) out.push_back(d);
  }
  return out;
}

void* open_first_library(const std::vector<std::string>& candidates, std::string* opened, std::string* tried) {
  for (const std::string& c : candidates) {
    if (tried) *tried += (tried->empty() ? "" : ", ") + c;
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      if (opened) *opened = c;
      return h;
    }
  }
  return nullptr;
}

std::string shared_object_dir(void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  if (path.find('/') == std::string::npos) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) return "";
    path.assign(exe, static_cast<size_t>(n));
  }
  auto slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction g_previous[sizeof(kFatalSignals) / sizeof(kFatalSignals[0])];

void write_str(const char* s) {
  ssize_t ignored = write(2, s, std::strlen(s));
  (void)ignored;
}

void fatal_signal_handler(int sig, siginfo_t* info, void* ucontext) {
  char line[160];
  std::snprintf(line, sizeof(line), "\n[tilelang] fatal signal %d (%s) at address %p; native backtrace:\n", sig,
                strsignal(sig), info ? info->si_addr : nullptr);
  write_str(line);
  void* frames[64];
  int n = backtrace(frames, 64);
  for (int i = 0; i < n; ++i) {
    Dl_info d{};
    if (dladdr(frames[i], &d) && d.dli_fname) {
      std::snprintf(line, sizeof(line), "  #%d %s+0x%lx (%s)\n", i, d.dli_sname ? d.dli_sname : "?",
                    static_cast<unsigned long>(static_cast<char*>(frames[i]) -
                                               static_cast<char*>(d.dli_sname ? d.dli_saddr : d.dli_fbase)),
                    d.dli_fname);
    } else {
      std::snprintf(line, sizeof(line), "  #%d %p\n", i, frames[i]);
    }
    write_str(line);
  }
  // Chain to the previous handler (faulthandler prints the Python stack, then re-raises).
  for (size_t i = 0; i < sizeof(kFatalSignals) / sizeof(kFatalSignals[0]); ++i) {
    if (kFatalSignals[i] != sig) continue;
    const struct sigaction& prev = g_previous[i];
    if (prev.sa_flags & SA_SIGINFO) {
      if (prev.sa_sigaction) return prev.sa_sigaction(sig, info, ucontext);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN && prev.sa_handler) {
      return prev.sa_handler(sig);
    }
    sigaction(sig, &prev, nullptr);
    raise(sig);
    return;
  }
}

}  // namespace

void install_fatal_signal_backtrace() {
  static std::once_flag once;
  std::call_once(once, [] {
    void* warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not inside the handler
    for (size_t i = 0; i < sizeof(kFatalSignals) / sizeof(kFatalSignals[0]); ++i) {
      struct sigaction sa {};
      sa.sa_sigaction = fatal_signal_handler;
      sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
      sigemptyset(&sa.sa_mask);
      sigaction(kFatalSignals[i], &sa, &g_previous[i]);
    }
  });
}

}  // namespace tl
