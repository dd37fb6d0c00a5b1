// The CUDA driver API, loaded at run time from libcuda.so.1 (no link-time dependency). Every
// failure is a tl::RuntimeError naming the CUDA error (CUDA_ERROR_...), the call and what we were
// doing. Contexts: kernels run in the device's primary context, the one PyTorch and the CUDA
// runtime use, so pointers and streams from those frameworks are valid in our launches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tl {

struct CudaDeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_smem_per_block = 0;        // without opt-in (48 KiB)
  int max_smem_per_block_optin = 0;  // what cuFuncSetAttribute may raise a kernel to
  int max_smem_per_sm = 0;
  int max_regs_per_block = 0;
  int l2_bytes = 0;
  // "sm_80", "sm_86", "sm_89", "sm_90" (the plain architecture of the device).
  std::string arch() const;
};

// True when libcuda.so.1 loads and cuInit succeeds; otherwise `why` explains.
bool cuda_driver_available(std::string* why = nullptr);
// Which libcuda was loaded, the CUDA version it supports (e.g. 13000) and how its entry points
// were resolved ("cuGetProcAddress_v2" or "dlsym"); empty/0 without a driver. Diagnostics.
struct CudaDriverFacts {
  std::string path;
  int version = 0;
  std::string resolution;
};
CudaDriverFacts cuda_driver_facts();
// Number of CUDA devices; 0 when there is no driver or no device.
int cuda_device_count();
// Facts about one device (cached). Throws RuntimeError for a bad ordinal.
const CudaDeviceInfo& cuda_device_info(int device);
// Makes the device's primary context current on this thread (retained once per device).
void cuda_set_device(int device);
// The device holding `ptr` (device or managed memory), or -1 for host memory / unknown pointers.
int cuda_pointer_device(const void* ptr);

// Device memory and copies (used by tests, the runtime's output allocation for non-torch inputs,
// and the device-error slot). Sizes in bytes; `device` selects the context.
void* cuda_malloc(size_t bytes, int device);
void cuda_free(void* ptr, int device);
void cuda_memcpy_htod(void* dst, const void* src, size_t bytes, int device);
void cuda_memcpy_dtoh(void* dst, const void* src, size_t bytes, int device);
void cuda_memset(void* dst, int byte, size_t bytes, int device);
void cuda_stream_synchronize(void* stream, int device);
// Writes `value` to the 32-bit word at device address `addr` when `stream` reaches this point
// (cuStreamWriteValue32, after a system-wide fence: the stream's earlier work, copies included, is
// visible to an observer of the value). No SM is used. Throws RuntimeError when the driver lacks it.
void cuda_stream_write_value32(void* stream, void* addr, uint32_t value, int device);
// Copies `bytes` from `src` to `dst` in `stream`'s order (cuMemcpyAsync: unified addresses, so either
// side may be a peer GPU's memory mapped into this process; the copy engines move it, no SM).
void cuda_memcpy_async(void* dst, const void* src, size_t bytes, void* stream, int device);
void cuda_device_synchronize(int device);

// What device_assert recorded (include/tl/cuda/debug.h, TLDeviceErrorSlot: same layout).
struct DeviceErrorRecord {
  uint32_t flag;
  int32_t line;
  uint32_t block[3];
  uint32_t thread[3];
  char file[128];
  char message[240];
};

struct LaunchDims {
  uint32_t x = 1, y = 1, z = 1;
};

// Checks that `image` is a well-formed cubin (64-bit ELF for EM_CUDA with its header tables
// inside the image), a fatbin, or NUL-terminated PTX text, so that nothing malformed reaches the
// driver. Throws ValueError naming `what`.
void validate_module_image(const std::string& image, const std::string& what);

// A module (cubin or PTX image) loaded on one device. Not copyable.
class CudaModule {
 public:
  CudaModule(const std::string& image, int device, const std::string& what);
  ~CudaModule();
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  int device() const { return device_; }
  // A __global__ function by (unmangled) name; throws RuntimeError when absent.
  void* function(const std::string& name) const;
  // Allows `fn` to use `bytes` of dynamic shared memory (raising the 48 KiB default when needed).
  // Throws ResourceError naming the kernel when the device cannot provide it.
  void set_dynamic_smem(void* fn, int bytes, const std::string& kernel_name) const;
  // Number of registers / local (spill) bytes per thread of `fn`.
  int num_registers(void* fn) const;
  int local_bytes(void* fn) const;
  // Launches `fn` on `stream` (null = the legacy default stream) with kernelParams `args`.
  void launch(void* fn, LaunchDims grid, LaunchDims block, int dynamic_smem, void* stream, void** args,
              const std::string& kernel_name) const;
  // Copies `bytes` into the module global `name`; false when the module has no such global.
  // Throws RuntimeError when its size differs.
  bool write_global(const std::string& name, const void* data, size_t bytes) const;
  // True when the module defines the device_assert slot (kernels that use T.device_assert).
  bool has_error_slot() const { return error_slot_ != 0; }
  // Waits for `stream`, then raises RuntimeError if a device_assert failed (and clears the slot).
  void check_device_errors(void* stream, const std::string& kernel_name) const;

 private:
  void* module_ = nullptr;
  int device_ = 0;
  uint64_t error_slot_ = 0;  // CUdeviceptr of tl_device_error
  size_t error_slot_size_ = 0;
};

// CUDA IPC (the symmetric heaps of tilelang.distributed): the 64-byte handle of an allocation made
// by cuda_malloc, and the mapping of a peer's allocation into this process (peer access enabled).
std::string cuda_ipc_get_handle(void* ptr, int device);
void* cuda_ipc_open_handle(const std::string& handle, int device);
void cuda_ipc_close_handle(void* ptr, int device);

// Encodes a TMA tensor map (cuTensorMapEncodeTiled) into `out` (128 bytes, 64-byte aligned):
// `rank` dimensions innermost first, `strides` in bytes for dimensions 1 .. rank-1, a box of
// `box` elements, swizzle 0/32/64/128 bytes, zero fill outside the tensor, L2 promotion 256 B.
// Throws RuntimeError naming `what` when the driver refuses.
void cuda_encode_tensor_map(void* out, int dtype, int rank, void* ptr, const uint64_t* dims, const uint64_t* strides,
                            const uint32_t* box, int swizzle_bytes, const std::string& what);

// Formats a recorded device failure: "device_assert failed at kernel.py:12 in block (0, 1, 0),
// thread (5, 0, 0): message".
std::string format_device_error(const DeviceErrorRecord& rec, const std::string& kernel_name);

}  // namespace tl
