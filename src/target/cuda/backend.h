// The cuda TargetBackend: lower_cuda -> codegen_cuda -> NVRTC (kernel.cubin in the artifact
// directory, with kernel.meta describing the launch and kernel.cu for reference) -> a driver
// module loaded on first use on each device, launched on the stream of the LaunchEnv.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "target/cuda/codegen.h"
#include "target/cuda/driver.h"

namespace tl {

// The architecture to compile for: the target's -arch, else the visible device's (sm_90 -> sm_90a,
// whose cubins run on every sm_90 device and allow its own instructions), else sm_80.
std::string cuda_compile_arch(const Target& target);

// Splits the launch description that codegen appends to the source ("/* tl-launch ... */").
std::string extract_launch_info(const std::string& source);

class CudaKernelModule : public KernelModule {
 public:
  CudaKernelModule(std::string cubin, CudaLaunchInfo info, size_t num_params, size_t num_dyn);
  ~CudaKernelModule() override;
  void launch(const std::vector<TLArg>& args, const LaunchEnv& env) override;
  AttrMap info() const override;
  const CudaLaunchInfo& launch_info() const { return info_; }

 private:
  struct PerDevice {
    std::unique_ptr<CudaModule> module;
    std::vector<void*> fns;  // one per launch, in order
    uint64_t dist_generation = 0;  // distributed kernels: the context generation in tl_dist_ctx
  };
  PerDevice& on_device(int device);

  // How one kernel parameter is passed, resolved from the launch description once at load.
  struct ParamPlan {
    enum Kind : uint8_t { kPtr, kInt64, kInt32, kInt16, kInt8, kBool, kFloat64, kFloat32, kTensorMap, kUnsupported };
    Kind kind = kUnsupported;
    size_t slot = 0;  // the TLArg it reads (kTensorMap: the tensor map's index)
  };
  // A TMA tensor map of the kernel (CudaLaunchInfo::tensor_maps), with the last encoding.
  struct TensorMapState {
    std::vector<Expr> dims, strides;  // over slot_vars_
    bool constant = false;            // dims and strides are constants (const_dims, const_strides)
    uint64_t const_dims[5] = {0}, const_strides[5] = {0};
    bool valid = false;
    void* ptr = nullptr;
    uint64_t last_dims[5] = {0}, last_strides[5] = {0};
    alignas(64) unsigned char map[128];
  };
  // One __global__ of the function (a T.Kernel block), prepared at load.
  struct Launch {
    CudaLaunchInfo info;                // without `then`
    std::vector<ParamPlan> param_plan;  // one per info.params entry
    std::vector<Expr> grid;
    bool static_grid = false;  // every grid extent is a constant (static_extents)
    int64_t static_extents[3] = {1, 1, 1};
    std::vector<std::unique_ptr<TensorMapState>> tensor_maps;  // one per info.tensor_maps entry
  };
  void launch_one(size_t index, const std::vector<TLArg>& args, const LaunchEnv& env);

  std::string cubin_;
  CudaLaunchInfo info_;
  size_t num_params_, num_dyn_;
  std::vector<Launch> launches_;  // the function's kernels in launch order
  std::vector<Var> slot_vars_;    // param_i / dyn_j, in TLArg order
  std::mutex mutex_;
  std::mutex tmap_mutex_;  // guards every Launch's tensor_maps
  std::vector<std::unique_ptr<PerDevice>> devices_;
};

class CudaBackend : public TargetBackend {
 public:
  PrimFunc lower(const PrimFunc& f, PassContext& ctx) override;
  std::string codegen(const PrimFunc& lowered, const PassContext& ctx, std::string* host_source) override;
  void build(const std::string& kernel_source, const std::string& dir, const CompileOptions& opts) override;
  void export_library(const AotRequest& req) override;
  std::unique_ptr<KernelModule> load(const ArtifactFiles& files, const PrimFunc& original, const PrimFunc* lowered,
                                     const CompileOptions& opts) override;
  std::vector<std::string> artifact_files() const override;
  // NVRTC's version, the architecture built for and a hash of include/tl/cuda (cache key part).
  std::string compiler_version(const CompileOptions& opts) override;
};

}  // namespace tl
