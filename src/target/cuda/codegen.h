// CUDA C++ for a function lowered by lower_cuda (src/target/cuda/pipeline.h).
//
// The source includes only "tl/cuda/all.h" and defines one `extern "C" __global__` kernel per
// T.Kernel. Its parameters follow the PrimFunc: a pointer per tensor, a value per scalar, then an
// `int` (the variable's type) per dynamic dimension that is not itself a scalar parameter, in
// PrimFunc::dynamic_vars() order. Global tensors are indexed through their strides; shared
// buffers point into one `extern __shared__` block at the offsets plan_shared_memory chose.
// The implementation is split by concern: codegen_impl.h lists its files.
#pragma once

#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tl {

// How to launch the emitted kernel: everything the host side needs, in a form that can be
// written to the cache and read back (expressions as textual IR over the parameter names).
struct CudaLaunchInfo {
  std::string kernel_name;             // the __global__ function
  std::vector<std::string> grid;       // grid extents (x, y, z) as IR expression text
  std::vector<int64_t> block = {1, 1, 1};
  int64_t dyn_smem_bytes = 0;
  bool has_device_assert = false;
  // The module defines tl_dist_ctx (include/tl/cuda/dist.h), filled by the runtime before a launch.
  bool distributed = false;
  // A persistent kernel (warp_specialize): grid x is its number of tiles; the launch runs
  // min(tiles, SM count) CTAs, which loop over the tiles (cuda.num_ctas() = gridDim.x).
  bool persistent = false;
  // Kernel parameters in order: ("ptr"|"i32"|"i64"|"u32"|"u64"|"f32"|"f64"|"f16"|"bf16"|"bool"|..., name, source)
  // where source is "param:<index>" (a PrimFunc parameter) or "dyn:<index>" (a dynamic variable).
  struct Param {
    std::string kind;
    std::string name;
    std::string source;
  };
  std::vector<Param> params;
  // The function's further T.Kernel blocks, launched after this one in order (same arguments).
  std::vector<CudaLaunchInfo> then;
  // TMA tensor maps (parameters of kind "tmap", source "tmap:<index>"): the launcher encodes each
  // with cuTensorMapEncodeTiled from the pointer of tensor parameter `param`, its dims and byte
  // strides (IR expression text over the argument slots, innermost first; strides from the second
  // dimension on), and the box (innermost first).
  struct TensorMap {
    std::string name;
    size_t param = 0;
    int dtype = 0;    // CUtensorMapDataType
    int swizzle = 0;  // bytes: 0, 32, 64, 128
    std::vector<int64_t> box;
    std::vector<std::string> dims, strides;
  };
  std::vector<TensorMap> tensor_maps;

  std::string serialize() const;
  static CudaLaunchInfo parse(const std::string& text);
};

// Emits the kernel source: one __global__ per T.Kernel, `info` describes the first and (in `then`)
// the others. Throws NotImplemented for IR the cuda target cannot express (statements outside
// T.Kernel, vector types).
std::string codegen_cuda(const PrimFunc& lowered, CudaLaunchInfo* info);

}  // namespace tl
