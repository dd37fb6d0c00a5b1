// The cpu target's loaded kernel: a shared object built from the emitted C++, entered through
// tl_kernel_entry (include/tl/cpu/abi.h) with the runtime's worker pool behind parallel_for.
#pragma once

#include <memory>
#include <string>

#include "runtime/backend.h"

namespace tl {

// dlopens `so_path` (RTLD_LOCAL) and checks its ABI version. `num_threads` caps the workers a
// launch uses (0: all cores). Throws tl::Error naming the file when it cannot be loaded.
std::unique_ptr<KernelModule> load_cpu_module(const std::string& so_path, const std::string& kernel_name,
                                              int num_threads);

}  // namespace tl
