// Reading torch tensors on the kernel-call path without torch's Python-level DLPack export.
//
// torch's `Tensor.__dlpack__` is a Python method that costs about 2 us a call on a current CPU;
// three tensor arguments through it put a cuda launch from Python at ~12 us. Where torch provides
// the DLPack C exchange API (torch >= 2.10: `torch.Tensor.__dlpack_c_exchange_api__`), a tensor is
// read by one C call that fills a DLTensor, and the current stream comes from the same table.
// Otherwise (older torch, torch.Tensor subclasses, TILELANG_TORCH_NO_EXCHANGE_API=1) the call path
// reads the tensor's attributes (data_ptr(), shape, stride(), dtype, is_cuda/get_device()), about
// 0.3 us a tensor, and the stream from torch._C._cuda_getCurrentRawStream. Nothing here imports
// torch: its types are looked up in sys.modules the first time a caller passes an object that could
// be a tensor. Tensors neither path reads (devices other than cpu and cuda, sparse layouts, ...)
// fall back to the generic DLPack import.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <vector>

#include "ir/dtype.h"

namespace tl::bind {

// What the call path needs of one torch tensor. `shape` / `strides` point into the view itself.
struct TorchTensorView {
  void* data = nullptr;
  int32_t ndim = 0;
  DataType dtype;
  int32_t device_type = 0;  // DLPack device code (kDLCPU or kDLCUDA)
  int32_t device_id = 0;
  const int64_t* shape = nullptr;
  const int64_t* strides = nullptr;  // in elements

  TorchTensorView() = default;
  TorchTensorView(const TorchTensorView&) = delete;
  TorchTensorView& operator=(const TorchTensorView&) = delete;

  int64_t* shape_storage(int n);
  int64_t* stride_storage(int n);

 private:
  int64_t small_shape_[8];
  int64_t small_strides_[8];
  std::vector<int64_t> big_shape_, big_strides_;
};

// True when `o` is a torch.Tensor (torch already imported by the caller). Cheap after the first call.
bool is_torch_tensor(PyObject* o);

// Fills `view` from the torch tensor `o`. Returns false, with no Python error set, when `o` is not a
// torch tensor or is one this path does not read (the caller then tries DLPack). Raises ArgumentError
// for a dtype tilelang has no type for.
bool read_torch_tensor(PyObject* o, TorchTensorView& view);

// torch's current CUDA stream on `device` (torch._C._cuda_getCurrentRawStream). Returns false when
// this torch build has no such entry; raises nb::python_error when the call fails.
bool torch_current_stream(int device, void** stream);

// torch.empty / torch.zeros(shape, dtype=dtype, device=like.device): an output in the caller's
// framework and device. Returns an invalid object when `like` is not a torch tensor or torch has no
// dtype for `dtype` (the caller then uses its generic allocator).
nanobind::object torch_allocate_like(PyObject* like, PyObject* shape_tuple, DataType dtype, bool zero);

// Whether torch has been imported (a lookup in sys.modules; tilelang never imports torch itself).
bool torch_imported();

// torch.empty / torch.zeros(shape, dtype=dtype, device=device) for a call with no tensor argument:
// `device` is "cuda" (torch's current device) or "cpu". Invalid object as torch_allocate_like.
nanobind::object torch_allocate_on(const char* device, PyObject* shape_tuple, DataType dtype, bool zero);

}  // namespace tl::bind
