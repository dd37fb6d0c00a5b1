// export_library: a compiled kernel as a standalone shared library plus a C header whose entry
// point takes plain pointers, sizes and (cuda) a stream, and needs neither Python nor tilelang at
// run time (docs/AOT.md). The driver here checks the request, names the C arguments, writes the
// header and the target-neutral entry source; the target's backend (TargetBackend::export_library)
// adds the launch code and compiles, through build_aot_library below.
#pragma once

#include <string>
#include <vector>

#include "runtime/compile.h"

namespace tl {

struct ExportedLibrary {
  std::string library_path;  // absolute
  std::string header_path;   // next to it: <stem>.h
  std::string symbol;        // the entry function
};

// Writes `path` (must end in .so; its directory must exist and be writable) and its header.
// `symbol` names the entry function; empty: the file's stem without a leading "lib".
// ValueError for a bad path or symbol; NotImplemented for kernels the export does not cover
// (ascend, T.alloc_global workspaces, and per target what docs/AOT.md lists).
ExportedLibrary export_library(const CompiledKernel& kernel, const std::string& path, const std::string& symbol);

// For backends: compiles `source` with the system C++ compiler ($CXX, else g++) and `compile_flags`,
// links it with only `symbol` and `symbol`_* visible, and moves the result into req.library_path.
void build_aot_library(const std::string& source, const AotRequest& req,
                       const std::vector<std::string>& compile_flags);

}  // namespace tl
