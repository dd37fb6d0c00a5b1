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
#include "target/cpu/cpu_kernel_util.h"

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

inline bool has_objdump() { return std::system("objdump --version > /dev/null 2>&1") == 0; }

}  // namespace tl::test
