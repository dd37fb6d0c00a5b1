// Test support: compile a C++ source that includes the cpu headers with the kernels' own flags
// (cpu_compiler_flags: -march=native, ...) into a shared object, and read back its disassembly.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "target/cpu/codegen.h"

namespace tl::test {

// Builds `source` (plus `extra_flags`, e.g. "-mno-avx512f") into a fresh .so and returns its path;
// "" after a gtest failure carrying the compiler's log.
inline std::string build_shared_object(const std::string& source, const std::string& extra_flags = "") {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() /
                 ("tl_cpu_jit_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir);
  std::ofstream(dir / "unit.cc") << source;
  std::string cmd = "g++";
  for (auto& f : cpu_compiler_flags(false)) cmd += " '" + f + "'";
  cmd += " " + extra_flags + " '" + (dir / "unit.cc").string() + "' -o '" + (dir / "unit.so").string() + "' > '" +
         (dir / "log.txt").string() + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(dir / "log.txt");
    std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    ADD_FAILURE() << "g++ failed: " << text.substr(0, 4000);
    return "";
  }
  return (dir / "unit.so").string();
}

// objdump -d of one function of a shared object (its symbol starts with `symbol`); "" when objdump
// is not installed.
inline std::string disassemble(const std::string& so, const std::string& symbol) {
  std::string cmd = "objdump -d --no-show-raw-insn -C '" + so + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string all;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) all.append(buf, n);
  pclose(p);
  size_t at = all.find("<" + symbol);
  if (at == std::string::npos) return "";
  at = all.rfind('\n', at);
  size_t end = all.find("\n\n", at + 1);
  return all.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

inline bool has_objdump() { return std::system("objdump --version > /dev/null 2>&1") == 0; }

// Number of instructions of `text` (a disassembly) that use a 256- or 512-bit register.
inline int wide_vector_instructions(const std::string& text) {
  int n = 0;
  for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; ++at) {
    size_t end = text.find('\n', at + 1);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.find("%zmm") != std::string::npos || line.find("%ymm") != std::string::npos) ++n;
  }
  return n;
}

}  // namespace tl::test
