// The cpu part of an exported library (export_library, docs/AOT.md).
#pragma once

#include <string>

namespace tl {

// C++ appended to the kernel source (codegen_cpu) in an exported library: a small thread pool
// behind TLRuntimeAPI (include/tl/cpu/abi.h) and `static int32_t tl_aot_launch(const TLArg*,
// int32_t, void*)`, which runs tl_kernel_entry on it, plus `symbol`_set_num_threads. Uses
// tl_aot_set_error from the entry source (src/runtime/export_library.cc), which follows it.
std::string aot_cpu_launch_source(const std::string& symbol);

}  // namespace tl
