// The cpu target's loaded kernel: a shared object built from the emitted C++, entered through
// tl_kernel_entry (include/tl/cpu/abi.h) with the runtime's worker pool behind parallel_for.
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.h"

namespace tl {

// dlopens `so_path` (RTLD_LOCAL) and checks its ABI version. `num_threads` caps the workers a
// launch uses (0: all cores). Throws tl::Error naming the file when it cannot be loaded.
// dlopens `load_path` (e.g. /proc/self/fd/N of a verified descriptor); `display_path` is the file's
// name in messages and in info()["library"].
std::unique_ptr<KernelModule> load_cpu_module(const std::string& load_path, const std::string& display_path,
                                              const std::string& kernel_name, int num_threads);

}  // namespace tl
