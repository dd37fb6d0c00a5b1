// Compiling generated CUDA C++ with NVRTC, loaded at run time with dlopen (no link-time CUDA
// dependency: the compiler core builds and runs on machines without CUDA, and compile-only tests
// run on machines without a GPU).
//
// libnvrtc is searched in this order: $TILELANG_NVRTC_PATH (a file), the dynamic loader's path
// (libnvrtc.so, .so.13, .so.12), $CUDA_HOME / $CUDA_PATH / /usr/local/cuda (lib64), and the PyPI
// wheels (nvidia-cuda-nvrtc: site-packages/nvidia/{cu13,cuda_nvrtc}/lib) of the running Python,
// $VIRTUAL_ENV and $CONDA_PREFIX.
#pragma once

#include <string>
#include <vector>

namespace tl {

struct NvrtcOptions {
  // "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a": a cubin for exactly that architecture.
  std::string arch = "sm_80";
  bool fast_math = false;     // --use_fast_math (pass config TL_ENABLE_FAST_MATH)
  bool line_info = false;     // -lineinfo, for profilers
  bool want_ptx = false;      // also return the PTX (compiled separately for compute_XX)
  bool pch = true;            // NVRTC's automatic precompiled headers where supported (nvrtc.cc)
  std::vector<std::string> extra_flags;   // user compile_flags, passed through
  std::vector<std::string> include_dirs;  // in addition to cuda_include_dir()
};

// Register / memory use of the compiled kernel(s), from ptxas' report.
struct KernelResourceUsage {
  std::string function;
  int registers = 0;
  int stack_frame_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int static_smem_bytes = 0;
};

struct NvrtcResult {
  std::string cubin;  // binary image for cuModuleLoadData
  std::string ptx;    // only when NvrtcOptions::want_ptx
  std::string log;    // compiler messages (warnings, ptxas report)
  std::vector<KernelResourceUsage> usage;  // one entry per __global__ function
  double seconds = 0;
};

// True when libnvrtc can be loaded; otherwise `why` says where it was looked for.
bool nvrtc_available(std::string* why = nullptr);
// "13.0"; throws CompileError when NVRTC is missing.
std::string nvrtc_version();
// The libnvrtc file that was loaded ("" when none): diagnostics.
std::string nvrtc_library_path();
// Directory holding tl/cuda/*.h (the include/ of the source tree or of the installed package).
std::string cuda_include_dir();

// Compiles `source` (called `name` in messages, e.g. "main.cu") to a cubin for opts.arch.
// Throws CompileError with the compiler log and the offending source lines on failure, and
// CompileError saying how to install NVRTC when it is missing.
NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, const NvrtcOptions& opts);

// Parses ptxas' "-v" report (exposed for tests).
std::vector<KernelResourceUsage> parse_ptxas_report(const std::string& log);

// ptxas' note that it serialized a kernel's wgmma instructions ("(C7510) Potential Performance Loss:
// wgmma.mma_async instructions are serialized due to ..."), from the text after the code to the end of
// its line; "" when the log has none.
std::string wgmma_serialization_note(const std::string& log);

}  // namespace tl
