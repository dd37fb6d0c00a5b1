// Where tilelang finds its own files at run time, and what identifies this build.
#pragma once

#include <string>

namespace tl {

// This package's version (CMakeLists.txt's project VERSION; pyproject.toml reads the same number).
const char* tl_version();

// The device-side headers emitted code includes (-I for the system / device compiler), as an
// absolute path holding `probe`. Looked up at run time — no path of the build machine is compiled
// in — in this order (docs/INSTALL.md):
//   1. $TILELANG_INCLUDE_DIR, which must hold `probe` (ValueError naming the variable otherwise);
//   2. $TILELANG_SOURCE_DIR/include;
//   3. the installed package: `include/` next to the binary holding this code
//      (site-packages/tilelang/_core*.so -> site-packages/tilelang/include);
//   4. a source checkout the binary was built into: python/tilelang/_core*.so -> ../../include,
//      build/tl_tests -> ../include.
// Throws tl::Error naming the tried paths when none has it.
std::string tl_include_dir(const std::string& probe = "tl/cpu/abi.h");

// The lookup above with its inputs given: `env_include` / `env_source` are the variables' values
// ("" when unset) and `library_dir` the directory of the binary ("" when unknown).
std::string find_include_dir(const std::string& probe, const std::string& env_include,
                             const std::string& env_source, const std::string& library_dir);

// Identifies this build of the compiler for cache keys: version, and the path, size and
// modification time of the binary holding this code, so a rebuilt or upgraded compiler never reuses
// stale kernels. build_identity(tl_version(), <that binary>).
const std::string& tl_build_identity();
std::string build_identity(const std::string& version, const std::string& binary_path);

// SHA-256 over every file under `dir` (names and contents, sorted); "" when it does not exist.
std::string hash_directory(const std::string& dir);

}  // namespace tl
