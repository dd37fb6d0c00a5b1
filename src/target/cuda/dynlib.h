// Finding and opening the CUDA libraries at run time (dlopen), shared by nvrtc.cc and driver.cc.
#pragma once

#include <string>
#include <vector>

namespace tl {

// Toolkit roots to look in: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
std::vector<std::string> cuda_toolkit_roots();
// site-packages directories of the running Python (from /proc/self/exe), $VIRTUAL_ENV and
// $CONDA_PREFIX, where PyPI's nvidia-* wheels put their libraries.
std::vector<std::string> python_site_packages_dirs();
// Files matching a glob pattern, sorted (newest versions last in lexical order).
std::vector<std::string> glob_files(const std::string& pattern);
// dlopen()s the first loadable candidate; returns null and lists what was tried otherwise.
void* open_first_library(const std::vector<std::string>& candidates, std::string* opened, std::string* tried);
// Directory of the shared object (or executable) containing `address`; "" when unknown.
std::string shared_object_dir(void* address);

// Diagnostics: on SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGABRT, prints the native backtrace (with the
// shared object of every frame, so a crash inside libcuda or libnvrtc is told apart from one in
// tilelang) to stderr, then hands the signal to the previous handler (Python's faulthandler).
// Idempotent. Used by scripts/cuda_smoke.py; never installed implicitly.
void install_fatal_signal_backtrace();

}  // namespace tl
