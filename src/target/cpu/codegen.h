// C++ source for a function lowered by lower_cpu, following include/tl/cpu/abi.h.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tl {

// Emits one self-contained C++17 translation unit: it includes only tl/cpu/kernel.h (our headers,
// which use <stdint.h>, <stdio.h>, <stdlib.h>, <stdarg.h>) and defines, per T.Kernel, a static
// block function taking the block index and, for the whole function,
//   extern "C" int32_t tl_kernel_entry(const TLArg* args, int32_t num_args, const TLRuntimeAPI* api)
// which unpacks the arguments (tensors, scalars, then dynamic variables), runs host code, and runs
// each grid through api->parallel_for (row-major over the grid dimensions: the last one varies
// fastest). Storage and numerics are described in docs/TARGET_CPU.md. Throws NotImplemented for
// constructs the cpu target does not support (naming them). `pack_reuse`: GEMMs whose B no statement
// writes pass the launch's token, so that B's pack is reused across the launch's GEMM calls
// (include/tl/cpu/gemm.h; off with the pass config tl.disable_cpu_gemm_pack_reuse).
std::string codegen_cpu(const PrimFunc& lowered, bool pack_reuse = true);

// Directory to pass with -I so that emitted code finds tl/cpu/*.h: $TILELANG_INCLUDE_DIR when set,
// else $TILELANG_SOURCE_DIR/include, else the include/ directory of the source tree this library
// was built from.
std::string cpu_include_dir();

// Flags for the system compiler (g++) building emitted code into a shared object, besides the
// input and `-o out.so`: C++17, -O2 with the dynamic vectorizer cost model, the ISA flags
// (`isa_flags`; by default those of the host's run-time ISA set capped by $TL_CPU_ISA,
// target/cpu/host_isa.h),
// -fPIC -shared, IEEE floating point (no -ffast-math unless `fast_math`, i.e. TL_ENABLE_FAST_MATH;
// fused multiply-add contraction allowed as on GPUs), no exceptions/RTTI, and -I cpu_include_dir().
// Chosen so that a cold compile of a GEMM kernel takes well under 1.5 s.
std::vector<std::string> cpu_compiler_flags(bool fast_math);
std::vector<std::string> cpu_compiler_flags(bool fast_math, const std::vector<std::string>& isa_flags);

}  // namespace tl
