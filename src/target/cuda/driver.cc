#include "target/cuda/driver.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <type_traits>

#include "ir/error.h"
#include "runtime/cuda_probe.h"
#include "target/cuda/dynlib.h"

namespace tl {

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxSmemPerBlock = 8;
constexpr int kAttrMaxRegsPerBlock = 12;
constexpr int kAttrSmCount = 16;
constexpr int kAttrL2Size = 38;
constexpr int kAttrCcMajor = 75;
constexpr int kAttrCcMinor = 76;
constexpr int kAttrMaxSmemPerSm = 81;
constexpr int kAttrMaxSmemPerBlockOptin = 97;
constexpr int kFuncAttrLocalSize = 3;
constexpr int kFuncAttrNumRegs = 4;
constexpr int kFuncAttrMaxDynamicSmem = 8;
constexpr int kPointerAttrMemoryType = 2;
constexpr int kPointerAttrDeviceOrdinal = 9;
constexpr int kMemoryTypeDevice = 2;
constexpr int kMemoryTypeUnified = 4;
constexpr CUresult kErrorNotFound = 500;
constexpr CUresult kErrorNoBinaryForGpu = 209;
constexpr int kJitInfoLogBuffer = 3;
constexpr int kJitInfoLogBufferSize = 4;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;

struct DriverApi {
  void* handle = nullptr;
  std::string path;   // the libcuda file that was loaded
  std::string error;  // why the driver is unusable
  std::string resolution;  // "cuGetProcAddress_v2" or "dlsym"
  int version = 0;    // cuDriverGetVersion, e.g. 13000
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*driver_get_version)(int*) = nullptr;
  CUresult (*get_error_name)(CUresult, const char**) = nullptr;
  CUresult (*get_error_string)(CUresult, const char**) = nullptr;
  CUresult (*device_get_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_get_attribute)(int*, int, CUdevice) = nullptr;
  CUresult (*device_get_name)(char*, int, CUdevice) = nullptr;
  CUresult (*primary_ctx_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*ctx_get_current)(CUcontext*) = nullptr;
  CUresult (*ctx_set_current)(CUcontext) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*module_load_data_ex)(CUmodule*, const void*, unsigned, int*, void**) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*module_get_global)(CUdeviceptr*, size_t*, CUmodule, const char*) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, int, int) = nullptr;
  CUresult (*func_get_attribute)(int*, int, CUfunction) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                            CUstream, void**, void**) = nullptr;
  CUresult (*stream_synchronize)(CUstream) = nullptr;
  CUresult (*mem_alloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*mem_free)(CUdeviceptr) = nullptr;
  CUresult (*memcpy_htod)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*memset_d8)(CUdeviceptr, unsigned char, size_t) = nullptr;
  CUresult (*pointer_get_attribute)(void*, int, CUdeviceptr) = nullptr;
  // Optional (resolved when present; only TMA kernels need it).
  CUresult (*tensor_map_encode_tiled)(void*, int, unsigned, void*, const unsigned long long*, const unsigned long long*,
                                      const unsigned*, const unsigned*, int, int, int, int) = nullptr;
  // Optional (tilelang.distributed's symmetric heaps).
  CUresult (*ipc_get_mem_handle)(void*, CUdeviceptr) = nullptr;  // CUipcMemHandle: 64 bytes
  CUresult (*ipc_open_mem_handle)(CUdeviceptr*, const void*, unsigned) = nullptr;
  CUresult (*ipc_close_mem_handle)(CUdeviceptr) = nullptr;
  // Optional (tilelang.distributed's copy-engine all-gather: a chunk's ready flag, in stream order).
  CUresult (*stream_write_value32)(CUstream, CUdeviceptr, unsigned, unsigned) = nullptr;
  CUresult (*memcpy_async)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
};

// TILELANG_CUDA_TRACE=1 logs every driver call and its result to stderr (flushed), so a crash
// inside the driver is located by the last line printed.
bool trace_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("TILELANG_CUDA_TRACE");
    return v && *v && std::string(v) != "0";
  }();
  return on;
}

template <typename Fn, typename... Args>
CUresult cu_call(const char* name, Fn fn, Args... args) {
  if (trace_enabled()) {
    std::fprintf(stderr, "[tl.cuda] %s ...\n", name);
    std::fflush(stderr);
  }
  CUresult r = fn(args...);
  if (trace_enabled()) {
    std::fprintf(stderr, "[tl.cuda] %s -> %d\n", name, r);
    std::fflush(stderr);
  }
  return r;
}

// The ABI version we were written against: the signatures above are those of the CUDA 12.0
// headers. cuGetProcAddress_v2 hands out exactly those entry points (e.g. cuMemAlloc_v2 for
// "cuMemAlloc"), also from newer drivers whose default symbols may change behind a macro.
constexpr int kAbiCudaVersion = 12000;

DriverApi& api() {
  static DriverApi a;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("TILELANG_CUDA_DRIVER_PATH"); p && *p) candidates.push_back(p);
    candidates.push_back("libcuda.so.1");
    candidates.push_back("libcuda.so");
    a.handle = open_first_library(candidates, &a.path, &tried);
    if (!a.handle) {
      const char* err = dlerror();
      a.error = "the CUDA driver (libcuda.so.1) is not installed or not on the loader path" +
                (err ? std::string(": ") + err : std::string());
      return;
    }
    auto fail = [&](std::string why) {
      a.error = std::move(why);
      dlclose(a.handle);
      a.handle = nullptr;
    };
    // Error names, cuInit and the version come from dlsym (they have one ABI version).
    std::string missing;
    auto dl = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(a.handle, name));
      if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
    };
    dl(a.init, "cuInit");
    dl(a.driver_get_version, "cuDriverGetVersion");
    dl(a.get_error_name, "cuGetErrorName");
    dl(a.get_error_string, "cuGetErrorString");
    if (!missing.empty()) return fail("the CUDA driver " + a.path + " is too old (missing " + missing + ")");
    if (std::string sopath = shared_object_dir(reinterpret_cast<void*>(a.init)); !sopath.empty())
      a.path = sopath + "/" + a.path.substr(a.path.rfind('/') + 1);
    CUresult r = cu_call("cuInit", a.init, 0u);
    if (r != 0) {
      const char* name = nullptr;
      a.get_error_name(r, &name);
      return fail(std::string("cuInit failed with ") + (name ? name : std::to_string(r)) +
                  " (no usable GPU, or the driver does not match the kernel module)");
    }
    note_cuda_initialized();
    cu_call("cuDriverGetVersion", a.driver_get_version, &a.version);
    if (a.version < kAbiCudaVersion)
      return fail("the CUDA driver is too old: it supports CUDA " + std::to_string(a.version / 1000) + "." +
                  std::to_string(a.version % 1000 / 10) + ", tilelang needs 12.0 or newer");

    using GetProc = CUresult (*)(const char*, void**, int, unsigned long long, int*);
    auto get_proc = reinterpret_cast<GetProc>(dlsym(a.handle, "cuGetProcAddress_v2"));
    a.resolution = get_proc ? "cuGetProcAddress_v2" : "dlsym";
    // `base` is the API name, `versioned` the symbol the 12.0 headers bind it to.
    auto sym = [&](auto& fn, const char* base, const char* versioned) {
      void* p = nullptr;
      if (get_proc) {
        int status = 0;
        if (get_proc(base, &p, kAbiCudaVersion, 0, &status) != 0 || status != 0) p = nullptr;
      }
      if (!p) p = dlsym(a.handle, versioned);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
      if (!fn) missing += std::string(missing.empty() ? "" : ", ") + versioned;
    };
    sym(a.device_get_count, "cuDeviceGetCount", "cuDeviceGetCount");
    sym(a.device_get, "cuDeviceGet", "cuDeviceGet");
    sym(a.device_get_attribute, "cuDeviceGetAttribute", "cuDeviceGetAttribute");
    sym(a.device_get_name, "cuDeviceGetName", "cuDeviceGetName");
    sym(a.primary_ctx_retain, "cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain");
    sym(a.ctx_get_current, "cuCtxGetCurrent", "cuCtxGetCurrent");
    sym(a.ctx_set_current, "cuCtxSetCurrent", "cuCtxSetCurrent");
    sym(a.ctx_synchronize, "cuCtxSynchronize", "cuCtxSynchronize");
    sym(a.module_load_data_ex, "cuModuleLoadDataEx", "cuModuleLoadDataEx");
    sym(a.module_unload, "cuModuleUnload", "cuModuleUnload");
    sym(a.module_get_function, "cuModuleGetFunction", "cuModuleGetFunction");
    sym(a.module_get_global, "cuModuleGetGlobal", "cuModuleGetGlobal_v2");
    sym(a.func_set_attribute, "cuFuncSetAttribute", "cuFuncSetAttribute");
    sym(a.func_get_attribute, "cuFuncGetAttribute", "cuFuncGetAttribute");
    sym(a.launch_kernel, "cuLaunchKernel", "cuLaunchKernel");
    sym(a.stream_synchronize, "cuStreamSynchronize", "cuStreamSynchronize");
    sym(a.mem_alloc, "cuMemAlloc", "cuMemAlloc_v2");
    sym(a.mem_free, "cuMemFree", "cuMemFree_v2");
    sym(a.memcpy_htod, "cuMemcpyHtoD", "cuMemcpyHtoD_v2");
    sym(a.memcpy_dtoh, "cuMemcpyDtoH", "cuMemcpyDtoH_v2");
    sym(a.memset_d8, "cuMemsetD8", "cuMemsetD8_v2");
    sym(a.pointer_get_attribute, "cuPointerGetAttribute", "cuPointerGetAttribute");
    if (!missing.empty()) return fail("the CUDA driver " + a.path + " lacks " + missing);
    sym(a.tensor_map_encode_tiled, "cuTensorMapEncodeTiled", "cuTensorMapEncodeTiled");
    sym(a.ipc_get_mem_handle, "cuIpcGetMemHandle", "cuIpcGetMemHandle");
    sym(a.ipc_close_mem_handle, "cuIpcCloseMemHandle", "cuIpcCloseMemHandle");
    sym(a.stream_write_value32, "cuStreamWriteValue32", "cuStreamWriteValue32_v2");
    sym(a.memcpy_async, "cuMemcpyAsync", "cuMemcpyAsync");
    {
      // cuIpcOpenMemHandle takes the 64-byte handle by value; resolved as a raw symbol and called
      // through a struct of that size.
      sym(a.ipc_open_mem_handle, "cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2");
    }
    missing.clear();  // optional entry points: an error only when used
    if (trace_enabled()) {
      std::fprintf(stderr, "[tl.cuda] driver %s, CUDA %d, entry points via %s\n", a.path.c_str(), a.version,
                   a.resolution.c_str());
      std::fflush(stderr);
    }
  });
  return a;
}

DriverApi& require_api() {
  check_cuda_usable_after_fork();  // before touching a driver state inherited through fork()
  DriverApi& a = api();
  if (!a.handle) throw_error<RuntimeError>("cannot run on cuda: ", a.error);
  return a;
}

std::string error_name(CUresult r) {
  DriverApi& a = api();
  const char* name = nullptr;
  const char* text = nullptr;
  if (a.get_error_name) a.get_error_name(r, &name);
  if (a.get_error_string) a.get_error_string(r, &text);
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void check(CUresult r, const char* call, const std::string& what) {
  if (r != 0) throw_error<RuntimeError>(error_name(r), " in ", call, " while ", what);
}

struct DeviceState {
  CUcontext ctx = nullptr;
  CudaDeviceInfo info;
  bool info_ready = false;
};

std::mutex g_mutex;
std::map<int, DeviceState>& devices() {
  static std::map<int, DeviceState> d;
  return d;
}

// Contexts already retained, read without the lock on the launch path (a context, once retained,
// stays for the life of the process).
constexpr int kCachedDevices = 64;
std::atomic<CUcontext> g_context_cache[kCachedDevices];

CUcontext primary_context(int device) {
  check_cuda_usable_after_fork();  // the cached contexts are the parent's
  if (device >= 0 && device < kCachedDevices) {
    if (CUcontext c = g_context_cache[device].load(std::memory_order_acquire)) return c;
  }
  DriverApi& a = require_api();
  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceState& st = devices()[device];
  if (!st.ctx) {
    int count = 0;
    check(cu_call("cuDeviceGetCount", a.device_get_count, &count), "cuDeviceGetCount", "counting devices");
    if (device < 0 || device >= count)
      throw_error<RuntimeError>("cuda device ", device, " does not exist (", count, " device(s) visible)");
    CUdevice dev = 0;
    check(cu_call("cuDeviceGet", a.device_get, &dev, device), "cuDeviceGet", "opening device " + std::to_string(device));
    check(cu_call("cuDevicePrimaryCtxRetain", a.primary_ctx_retain, &st.ctx, dev), "cuDevicePrimaryCtxRetain",
          "retaining the primary context of device " + std::to_string(device));
  }
  if (device < kCachedDevices) g_context_cache[device].store(st.ctx, std::memory_order_release);
  return st.ctx;
}

}  // namespace

std::string CudaDeviceInfo::arch() const { return "sm_" + std::to_string(cc_major * 10 + cc_minor); }

bool cuda_driver_available(std::string* why) {
  DriverApi& a = api();
  if (!a.handle && why) *why = a.error;
  return a.handle != nullptr;
}

CudaDriverFacts cuda_driver_facts() {
  DriverApi& a = api();
  CudaDriverFacts f;
  if (!a.handle) return f;
  f.path = a.path;
  f.version = a.version;
  f.resolution = a.resolution;
  return f;
}

int cuda_device_count() {
  DriverApi& a = api();
  if (!a.handle) return 0;
  int n = 0;
  if (cu_call("cuDeviceGetCount", a.device_get_count, &n) != 0) return 0;
  return n;
}

void cuda_set_device(int device) {
  DriverApi& a = require_api();
  CUcontext want = primary_context(device);
  CUcontext cur = nullptr;
  // Called before every launch: the messages are built only on failure.
  if (CUresult r = cu_call("cuCtxGetCurrent", a.ctx_get_current, &cur); r != 0)
    check(r, "cuCtxGetCurrent", "selecting device " + std::to_string(device));
  if (cur == want) return;
  if (CUresult r = cu_call("cuCtxSetCurrent", a.ctx_set_current, want); r != 0)
    check(r, "cuCtxSetCurrent", "selecting device " + std::to_string(device));
}

const CudaDeviceInfo& cuda_device_info(int device) {
  DriverApi& a = require_api();
  primary_context(device);  // validates the ordinal
  std::lock_guard<std::mutex> lock(g_mutex);
  DeviceState& st = devices()[device];
  if (!st.info_ready) {
    CUdevice dev = 0;
    check(cu_call("cuDeviceGet", a.device_get, &dev, device), "cuDeviceGet", "querying device " + std::to_string(device));
    CudaDeviceInfo& i = st.info;
    i.ordinal = device;
    char name[256] = {0};
    check(cu_call("cuDeviceGetName", a.device_get_name, name, sizeof(name) - 1, dev), "cuDeviceGetName", "querying the device name");
    i.name = name;
    auto attr = [&](int which, int* out) {
      check(cu_call("cuDeviceGetAttribute", a.device_get_attribute, out, which, dev), "cuDeviceGetAttribute", "querying device attributes");
    };
    attr(kAttrCcMajor, &i.cc_major);
    attr(kAttrCcMinor, &i.cc_minor);
    attr(kAttrSmCount, &i.sm_count);
    attr(kAttrMaxThreadsPerBlock, &i.max_threads_per_block);
    attr(kAttrMaxSmemPerBlock, &i.max_smem_per_block);
    attr(kAttrMaxSmemPerBlockOptin, &i.max_smem_per_block_optin);
    attr(kAttrMaxSmemPerSm, &i.max_smem_per_sm);
    attr(kAttrMaxRegsPerBlock, &i.max_regs_per_block);
    attr(kAttrL2Size, &i.l2_bytes);
    st.info_ready = true;
  }
  return st.info;
}

int cuda_pointer_device(const void* ptr) {
  DriverApi& a = api();
  if (!a.handle || !ptr) return -1;
  unsigned int mem_type = 0;
  if (cu_call("cuPointerGetAttribute", a.pointer_get_attribute, &mem_type, kPointerAttrMemoryType, reinterpret_cast<CUdeviceptr>(ptr)) != 0)
    return -1;
  if (mem_type != kMemoryTypeDevice && mem_type != kMemoryTypeUnified) return -1;
  int ordinal = -1;
  if (cu_call("cuPointerGetAttribute", a.pointer_get_attribute, &ordinal, kPointerAttrDeviceOrdinal, reinterpret_cast<CUdeviceptr>(ptr)) != 0)
    return -1;
  return ordinal;
}

void* cuda_malloc(size_t bytes, int device) {
  DriverApi& a = require_api();
  cuda_set_device(device);
  CUdeviceptr p = 0;
  check(cu_call("cuMemAlloc", a.mem_alloc, &p, bytes ? bytes : 1), "cuMemAlloc",
        "allocating " + std::to_string(bytes) + " bytes on device " + std::to_string(device));
  return reinterpret_cast<void*>(p);
}

void cuda_free(void* ptr, int device) {
  if (!ptr) return;
  DriverApi& a = require_api();
  cuda_set_device(device);
  check(cu_call("cuMemFree", a.mem_free, reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree", "freeing device memory");
}

namespace {
struct IpcHandle {
  char reserved[64];
};
}  // namespace

std::string cuda_ipc_get_handle(void* ptr, int device) {
  DriverApi& a = require_api();
  if (!a.ipc_get_mem_handle) throw_error<RuntimeError>("the CUDA driver ", a.path, " has no cuIpcGetMemHandle");
  cuda_set_device(device);
  IpcHandle h{};
  check(cu_call("cuIpcGetMemHandle", a.ipc_get_mem_handle, static_cast<void*>(&h), reinterpret_cast<CUdeviceptr>(ptr)),
        "cuIpcGetMemHandle", "exporting a symmetric heap of device " + std::to_string(device));
  return std::string(h.reserved, sizeof h.reserved);
}

void* cuda_ipc_open_handle(const std::string& handle, int device) {
  DriverApi& a = require_api();
  if (!a.ipc_open_mem_handle) throw_error<RuntimeError>("the CUDA driver ", a.path, " has no cuIpcOpenMemHandle");
  if (handle.size() != sizeof(IpcHandle))
    throw_error<ValueError>("a CUDA IPC handle has ", sizeof(IpcHandle), " bytes, got ", handle.size());
  cuda_set_device(device);
  IpcHandle h{};
  std::memcpy(h.reserved, handle.data(), sizeof h.reserved);
  using OpenByValue = CUresult (*)(CUdeviceptr*, IpcHandle, unsigned);
  auto open = reinterpret_cast<OpenByValue>(a.ipc_open_mem_handle);
  CUdeviceptr p = 0;
  constexpr unsigned kLazyEnablePeerAccess = 1;
  check(cu_call("cuIpcOpenMemHandle", open, &p, h, kLazyEnablePeerAccess), "cuIpcOpenMemHandle",
        "mapping a peer's symmetric heap on device " + std::to_string(device) +
            " (the GPUs must be able to access each other: same node, peer access)");
  return reinterpret_cast<void*>(p);
}

void cuda_ipc_close_handle(void* ptr, int device) {
  DriverApi& a = require_api();
  if (!a.ipc_close_mem_handle || !ptr) return;
  cuda_set_device(device);
  check(cu_call("cuIpcCloseMemHandle", a.ipc_close_mem_handle, reinterpret_cast<CUdeviceptr>(ptr)),
        "cuIpcCloseMemHandle", "unmapping a peer's symmetric heap");
}

bool CudaModule::write_global(const std::string& name, const void* data, size_t bytes) const {
  DriverApi& a = require_api();
  cuda_set_device(device_);
  CUdeviceptr slot = 0;
  size_t size = 0;
  CUresult r = cu_call("cuModuleGetGlobal", a.module_get_global, &slot, &size, module_, name.c_str());
  if (r == kErrorNotFound) return false;
  check(r, "cuModuleGetGlobal", "looking up " + name);
  if (size != bytes)
    throw_error<RuntimeError>("the module global ", name, " has ", size, " bytes, expected ", bytes,
                              " (device headers and runtime disagree)");
  check(cu_call("cuMemcpyHtoD", a.memcpy_htod, slot, data, bytes), "cuMemcpyHtoD", "writing " + name);
  return true;
}

void cuda_memcpy_htod(void* dst, const void* src, size_t bytes, int device) {
  DriverApi& a = require_api();
  cuda_set_device(device);
  check(cu_call("cuMemcpyHtoD", a.memcpy_htod, reinterpret_cast<CUdeviceptr>(dst), src, bytes), "cuMemcpyHtoD", "copying to the device");
}

void cuda_memcpy_dtoh(void* dst, const void* src, size_t bytes, int device) {
  DriverApi& a = require_api();
  cuda_set_device(device);
  check(cu_call("cuMemcpyDtoH", a.memcpy_dtoh, dst, reinterpret_cast<CUdeviceptr>(src), bytes), "cuMemcpyDtoH", "copying from the device");
}

void cuda_memset(void* dst, int byte, size_t bytes, int device) {
  DriverApi& a = require_api();
  cuda_set_device(device);
  check(cu_call("cuMemsetD8", a.memset_d8, reinterpret_cast<CUdeviceptr>(dst), static_cast<unsigned char>(byte), bytes), "cuMemsetD8",
        "filling device memory");
}

void cuda_stream_write_value32(void* stream, void* addr, uint32_t value, int device) {
  DriverApi& a = require_api();
  if (!a.stream_write_value32) throw_error<RuntimeError>("the CUDA driver ", a.path, " has no cuStreamWriteValue32");
  if (reinterpret_cast<uintptr_t>(addr) % 4)
    throw_error<ValueError>("cuda_stream_write_value32: the address must be 4-byte aligned");
  cuda_set_device(device);
  // Flags 0 (CU_STREAM_WRITE_VALUE_DEFAULT): the write is preceded by a system-wide memory fence,
  // so the stream's earlier copies are visible to whoever observes the value.
  check(cu_call("cuStreamWriteValue32", a.stream_write_value32, static_cast<CUstream>(stream),
                reinterpret_cast<CUdeviceptr>(addr), value, 0u),
        "cuStreamWriteValue32", "setting a ready flag in stream order (device " + std::to_string(device) + ")");
}

void cuda_memcpy_async(void* dst, const void* src, size_t bytes, void* stream, int device) {
  DriverApi& a = require_api();
  if (!a.memcpy_async) throw_error<RuntimeError>("the CUDA driver ", a.path, " has no cuMemcpyAsync");
  cuda_set_device(device);
  check(cu_call("cuMemcpyAsync", a.memcpy_async, reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src),
                bytes, static_cast<CUstream>(stream)),
        "cuMemcpyAsync", "copying " + std::to_string(bytes) + " bytes in stream order (device " + std::to_string(device) + ")");
}

void cuda_stream_synchronize(void* stream, int device) {
  DriverApi& a = require_api();
  cuda_set_device(device);
  check(cu_call("cuStreamSynchronize", a.stream_synchronize, stream), "cuStreamSynchronize", "waiting for the stream");
}

void cuda_device_synchronize(int device) {
  DriverApi& a = require_api();
  cuda_set_device(device);
  check(cu_call("cuCtxSynchronize", a.ctx_synchronize), "cuCtxSynchronize", "waiting for device " + std::to_string(device));
}

// ---------------------------------------------------------------------------------------------
namespace {

uint64_t read_le(const std::string& s, size_t off, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[off + i]);
  return v;
}

}  // namespace

void validate_module_image(const std::string& image, const std::string& what) {
  auto bad = [&](const std::string& why) {
    throw_error<ValueError>("cannot load ", what, ": ", why, " (", image.size(), " bytes)");
  };
  if (image.size() >= 4 && image.compare(0, 4, "\x7f" "ELF") == 0) {
    // A cubin: a 64-bit little-endian ELF for EM_CUDA whose header tables lie inside the image
    // (a truncated or foreign image would otherwise reach the driver).
    if (image.size() < 64) bad("truncated ELF header");
    if (image[4] != 2 || image[5] != 1) bad("not a 64-bit little-endian ELF");
    constexpr uint64_t kEmCuda = 190;
    if (read_le(image, 18, 2) != kEmCuda) bad("an ELF file that is not a CUDA cubin");
    uint64_t phoff = read_le(image, 32, 8), shoff = read_le(image, 40, 8);
    uint64_t phentsize = read_le(image, 54, 2), phnum = read_le(image, 56, 2);
    uint64_t shentsize = read_le(image, 58, 2), shnum = read_le(image, 60, 2);
    if (phoff + phentsize * phnum > image.size() || shoff + shentsize * shnum > image.size())
      bad("truncated cubin (its section or program headers lie past the end)");
    return;
  }
  if (image.size() >= 4 && read_le(image, 0, 4) == 0xBA55ED50u) return;  // fatbin
  // PTX text: must be NUL-terminated for the driver.
  if (image.find(".version") == std::string::npos || image.find(".target") == std::string::npos)
    bad("neither a cubin, a fatbin nor PTX text");
  if (image.back() != '\0') bad("PTX text must end with a NUL byte");
}

CudaModule::CudaModule(const std::string& image, int device, const std::string& what) : device_(device) {
  validate_module_image(image, what);
  DriverApi& a = require_api();
  cuda_set_device(device);
  // The JIT logs explain PTX failures (and some cubin ones); the driver fills them on error.
  std::string error_log(8192, '\0'), info_log(8192, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize, kJitInfoLogBuffer, kJitInfoLogBufferSize};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size())),
                    info_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(info_log.size()))};
  CUresult r = cu_call("cuModuleLoadDataEx", a.module_load_data_ex, &module_, static_cast<const void*>(image.data()),
                       4u, options, values);
  if (r != 0) {
    module_ = nullptr;
    error_log.resize(std::strlen(error_log.c_str()));
    std::string log = error_log.empty() ? "" : "\ndriver log:\n" + error_log;
    if (r == kErrorNoBinaryForGpu) {
      const CudaDeviceInfo& info = cuda_device_info(device);
      throw_error<RuntimeError>(error_name(r), " while loading ", what, " on device ", device, " (", info.name, ", ",
                                info.arch(),
                                "): the kernel was compiled for another architecture; use target \"cuda\" (the "
                                "device's own architecture) or \"cuda -arch=",
                                info.arch(), info.cc_major >= 9 ? "a" : "", "\"", log);
    }
    throw_error<RuntimeError>(error_name(r), " in cuModuleLoadDataEx while loading ", what, " on device ", device,
                              log);
  }
  try {
    CUdeviceptr slot = 0;
    size_t size = 0;
    r = cu_call("cuModuleGetGlobal", a.module_get_global, &slot, &size, module_, "tl_device_error");
    if (r == 0) {
      if (size != sizeof(DeviceErrorRecord))
        throw_error<RuntimeError>("the device_assert slot of ", what, " has ", size, " bytes, expected ",
                                  sizeof(DeviceErrorRecord), " (device headers and runtime disagree)");
      error_slot_ = slot;
      error_slot_size_ = size;
    } else if (r != kErrorNotFound) {
      check(r, "cuModuleGetGlobal", "looking up tl_device_error in " + what);
    }
  } catch (...) {
    cu_call("cuModuleUnload", a.module_unload, module_);
    module_ = nullptr;
    throw;
  }
}

CudaModule::~CudaModule() {
  DriverApi& a = api();
  if (a.handle && module_) {
    CUcontext cur = nullptr;
    // Unloading needs the module's context current; keep whatever the caller had afterwards.
    if (cu_call("cuCtxGetCurrent", a.ctx_get_current, &cur) == 0) {
      CUcontext want = nullptr;
      {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto it = devices().find(device_);
        if (it != devices().end()) want = it->second.ctx;
      }
      if (want && cur != want) cu_call("cuCtxSetCurrent", a.ctx_set_current, want);
      cu_call("cuModuleUnload", a.module_unload, module_);
      if (want && cur != want) cu_call("cuCtxSetCurrent", a.ctx_set_current, cur);
    }
  }
}

void* CudaModule::function(const std::string& name) const {
  DriverApi& a = require_api();
  CUfunction fn = nullptr;
  check(cu_call("cuModuleGetFunction", a.module_get_function, &fn, module_, name.c_str()), "cuModuleGetFunction",
        "looking up kernel '" + name + "'");
  return fn;
}

void CudaModule::set_dynamic_smem(void* fn, int bytes, const std::string& kernel_name) const {
  DriverApi& a = require_api();
  const CudaDeviceInfo& info = cuda_device_info(device_);
  if (bytes > info.max_smem_per_block_optin)
    throw_error<ResourceError>("kernel '", kernel_name, "' needs ", bytes, " bytes of shared memory but device ",
                               device_, " (", info.name, ") allows at most ", info.max_smem_per_block_optin,
                               " per block; use smaller tiles or fewer pipeline stages");
  if (bytes > info.max_smem_per_block || bytes > 48 * 1024) {
    cuda_set_device(device_);
    check(cu_call("cuFuncSetAttribute", a.func_set_attribute, fn, kFuncAttrMaxDynamicSmem, bytes), "cuFuncSetAttribute",
          "allowing kernel '" + kernel_name + "' " + std::to_string(bytes) + " bytes of dynamic shared memory");
  }
}

int CudaModule::num_registers(void* fn) const {
  DriverApi& a = require_api();
  int v = 0;
  check(cu_call("cuFuncGetAttribute", a.func_get_attribute, &v, kFuncAttrNumRegs, fn), "cuFuncGetAttribute", "querying registers");
  return v;
}

int CudaModule::local_bytes(void* fn) const {
  DriverApi& a = require_api();
  int v = 0;
  check(cu_call("cuFuncGetAttribute", a.func_get_attribute, &v, kFuncAttrLocalSize, fn), "cuFuncGetAttribute", "querying local memory");
  return v;
}

void CudaModule::launch(void* fn, LaunchDims grid, LaunchDims block, int dynamic_smem, void* stream, void** args,
                        const std::string& kernel_name) const {
  DriverApi& a = require_api();
  cuda_set_device(device_);
  CUresult r = cu_call("cuLaunchKernel", a.launch_kernel, fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                               static_cast<unsigned>(dynamic_smem), stream, args, nullptr);
  if (r != 0) {
    std::ostringstream os;
    os << "launching kernel '" << kernel_name << "' with grid (" << grid.x << ", " << grid.y << ", " << grid.z
       << "), block (" << block.x << ", " << block.y << ", " << block.z << "), " << dynamic_smem
       << " bytes of dynamic shared memory on device " << device_;
    check(r, "cuLaunchKernel", os.str());
  }
}

void cuda_encode_tensor_map(void* out, int dtype, int rank, void* ptr, const uint64_t* dims, const uint64_t* strides,
                            const uint32_t* box, int swizzle_bytes, const std::string& what) {
  DriverApi& a = require_api();
  if (!a.tensor_map_encode_tiled)
    throw_error<RuntimeError>("the CUDA driver ", a.path, " has no cuTensorMapEncodeTiled (TMA needs CUDA 12.0+); ",
                              "compile with TL_DISABLE_TMA_LOWER");
  unsigned long long d[5], st[5];
  unsigned b[5], es[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    es[i] = 1;
    if (i + 1 < rank) st[i] = strides[i];
  }
  const int swizzle = swizzle_bytes == 128 ? 3 : swizzle_bytes == 64 ? 2 : swizzle_bytes == 32 ? 1 : 0;
  constexpr int kInterleaveNone = 0, kL2Promotion256B = 3, kOobFillZero = 0;
  CUresult r = cu_call("cuTensorMapEncodeTiled", a.tensor_map_encode_tiled, out, dtype, static_cast<unsigned>(rank),
                       ptr, d, st, b, es, kInterleaveNone, swizzle, kL2Promotion256B, kOobFillZero);
  if (r != 0) {
    std::ostringstream os;
    os << "encoding the TMA tensor map of " << what << " (pointer " << ptr << ", dims";
    for (int i = 0; i < rank; ++i) os << " " << dims[i];
    os << ", byte strides";
    for (int i = 0; i + 1 < rank; ++i) os << " " << strides[i];
    os << ", box";
    for (int i = 0; i < rank; ++i) os << " " << box[i];
    os << ", swizzle " << swizzle_bytes << ")";
    if (r == 1)  // CUDA_ERROR_INVALID_VALUE: what the tensor can cause
      os << ": TMA needs a 16-byte aligned pointer and strides that are multiples of 16 bytes; compile with "
         << "TL_DISABLE_TMA_LOWER for other tensors";
    check(r, "cuTensorMapEncodeTiled", os.str());
  }
}

std::string format_device_error(const DeviceErrorRecord& rec, const std::string& kernel_name) {
  DeviceErrorRecord r = rec;
  r.file[sizeof(r.file) - 1] = 0;
  r.message[sizeof(r.message) - 1] = 0;
  std::ostringstream os;
  os << "device_assert failed in kernel '" << kernel_name << "'";
  if (r.file[0]) os << " at " << r.file << ":" << r.line;
  os << " (block (" << r.block[0] << ", " << r.block[1] << ", " << r.block[2] << "), thread (" << r.thread[0]
     << ", " << r.thread[1] << ", " << r.thread[2] << "))";
  if (r.message[0]) os << ": " << r.message;
  return os.str();
}

void CudaModule::check_device_errors(void* stream, const std::string& kernel_name) const {
  if (!error_slot_) return;
  DriverApi& a = require_api();
  cuda_set_device(device_);
  check(cu_call("cuStreamSynchronize", a.stream_synchronize, stream), "cuStreamSynchronize", "waiting for kernel '" + kernel_name + "'");
  uint32_t flag = 0;
  check(cu_call("cuMemcpyDtoH", a.memcpy_dtoh, &flag, error_slot_, sizeof(flag)), "cuMemcpyDtoH", "reading the device_assert slot");
  if (flag == 0) return;
  DeviceErrorRecord rec{};
  check(cu_call("cuMemcpyDtoH", a.memcpy_dtoh, &rec, error_slot_, sizeof(rec)), "cuMemcpyDtoH", "reading the device_assert slot");
  check(cu_call("cuMemsetD8", a.memset_d8, error_slot_, 0, error_slot_size_), "cuMemsetD8", "clearing the device_assert slot");
  throw RuntimeError(format_device_error(rec, kernel_name));
}

}  // namespace tl
