// The cuda part of an exported library (export_library, docs/AOT.md).
#pragma once

#include <string>

#include "target/cuda/codegen.h"

namespace tl {

// C++ (host code, built by the system compiler; no CUDA toolkit needed) appended after
// `#include "tl/cpu/kernel.h"` in an exported cuda library: the cubin and the PTX as bytes (the PTX
// is loaded when the device cannot run the cubin), the driver API
// through dlopen("libcuda.so.1"), one module per CUDA context, and `static int32_t
// tl_aot_launch(const TLArg*, int32_t, void* stream)` launching the kernels `info` describes with
// their grids computed from the argument slots (num_params parameters, then num_dyn dynamic
// variables). Throws NotImplemented for launches the export does not cover (TMA tensor maps,
// T.device_assert, 16-bit float scalars).
std::string aot_cuda_launch_source(const CudaLaunchInfo& info, const std::string& cubin, const std::string& ptx,
                                   const std::string& arch,
                                   size_t num_params, size_t num_dyn);

}  // namespace tl
