// Where tilelang finds its own files at run time, and what identifies this build.
#pragma once

#include <string>

namespace tl {

// The device-side headers emitted code includes (-I for the system / device compiler), as an
// absolute path holding `probe`: $TILELANG_INCLUDE_DIR — which must hold it (ValueError naming the
// variable otherwise) — else $TILELANG_SOURCE_DIR/include, else the source tree this library was
// built from, else the installed package next to the extension. Throws tl::Error naming the tried
// paths when none has it.
std::string tl_include_dir(const std::string& probe = "tl/cpu/abi.h");

// Identifies this build of the compiler for cache keys: version, and the size and modification
// time of the binary holding this code, so a rebuilt compiler never reuses stale kernels.
const std::string& tl_build_identity();

// SHA-256 over every file under `dir` (names and contents, sorted); "" when it does not exist.
std::string hash_directory(const std::string& dir);

}  // namespace tl
