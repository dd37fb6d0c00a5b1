// Reading torch tensors on the kernel-call path without torch's Python-level __dlpack__ (see torch_tensor.h for why).
#include "bindings/torch_tensor.h"

#include <nanobind/ndarray.h>

#include <cstdlib>
#include <utility>

#include "bindings/dlpack.h"
#include "ir/error.h"
#include "runtime/args.h"

namespace nb = nanobind;

namespace tl::bind {

namespace {

// The DLPack C exchange API (dlpack.h 1.3, exposed by torch >= 2.10 as the PyCapsule
// `torch.Tensor.__dlpack_c_exchange_api__`, named "dlpack_exchange_api"): C entry points that fill a
// DLTensor from a tensor object, and return the framework's current stream, in tens of nanoseconds.
// The tensor, device and dtype structures are nanobind's (nb::dlpack, bindings/dlpack.h). nanobind
// (3.1) has no declaration of the exchange table itself, so its layout (major version 1) is written
// out here; only the entries we call are typed.
namespace dlx {
struct Version {
  uint32_t major;
  uint32_t minor;
};
struct ApiHeader {
  Version version;
  ApiHeader* prev_api;
};
using TensorFromPyObject = int (*)(void* py_object, dlpack::dltensor* out);  // 0, or -1 with a Python error set
using CurrentWorkStream = int (*)(int32_t device_type, int32_t device_id, void** out_stream);
struct Api {
  ApiHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  TensorFromPyObject dltensor_from_py_object_no_sync;  // may be null
  CurrentWorkStream current_work_stream;
};
}  // namespace dlx

// torch objects the call path uses, looked up once torch is in sys.modules. Every pointer is a
// strong reference kept for the life of the process (the call path must not pay for lookups).
struct TorchApi {
  PyTypeObject* tensor_type = nullptr;
  std::vector<std::pair<PyObject*, DataType>> dtypes;  // torch.float16 -> Float(16), ...
  PyObject* raw_stream = nullptr;                       // torch._C._cuda_getCurrentRawStream, or null
  PyObject* empty = nullptr;
  PyObject* zeros = nullptr;
  PyObject* alloc_kwnames = nullptr;  // ("dtype", "device")
  PyObject* s_data_ptr = nullptr;
  PyObject* s_shape = nullptr;
  PyObject* s_stride = nullptr;
  PyObject* s_dtype = nullptr;
  PyObject* s_is_cuda = nullptr;
  PyObject* s_is_cpu = nullptr;
  PyObject* s_get_device = nullptr;
  PyObject* s_device = nullptr;
  PyObject* s_is_neg = nullptr;
  // The exchange API's entries, when this torch has them (null otherwise: attributes are read).
  dlx::TensorFromPyObject tensor_from_object = nullptr;
  dlx::CurrentWorkStream current_work_stream = nullptr;
};

// Fills the exchange entries from torch.Tensor.__dlpack_c_exchange_api__ when it speaks major version 1.
void find_exchange_api(TorchApi& a) {
  nb::handle tensor_type(reinterpret_cast<PyObject*>(a.tensor_type));
  nb::object cap = nb::getattr(tensor_type, "__dlpack_c_exchange_api__", nb::none());
  if (cap.is_none() || !PyCapsule_CheckExact(cap.ptr())) return;
  auto* api = static_cast<const dlx::Api*>(PyCapsule_GetPointer(cap.ptr(), "dlpack_exchange_api"));
  if (!api) {
    PyErr_Clear();
    return;
  }
  if (api->header.version.major != 1) return;
  a.tensor_from_object = api->dltensor_from_py_object_no_sync;
  a.current_work_stream = api->current_work_stream;
}

PyObject* interned(const char* s) {
  PyObject* o = PyUnicode_InternFromString(s);
  if (!o) throw nb::python_error();
  return o;
}

// The torch API, or null while torch has not been imported by anyone (tilelang never imports it).
TorchApi* torch_api() {
  static TorchApi* api = nullptr;
  if (api) return api;
  nb::object name = nb::steal(PyUnicode_FromString("torch"));
  PyObject* mod = PyImport_GetModule(name.ptr());  // a lookup in sys.modules, no import
  if (!mod) {
    PyErr_Clear();
    return nullptr;
  }
  nb::object torch = nb::steal(mod);
  if (!nb::hasattr(torch, "Tensor") || !nb::hasattr(torch, "empty")) return nullptr;  // torch half-imported
  auto* a = new TorchApi;
  a->tensor_type = reinterpret_cast<PyTypeObject*>(nb::object(torch.attr("Tensor")).release().ptr());
  a->empty = nb::object(torch.attr("empty")).release().ptr();
  a->zeros = nb::object(torch.attr("zeros")).release().ptr();
  const std::pair<const char*, DataType> names[] = {
      {"bool", DataType::Bool()},       {"int8", DataType::Int(8)},         {"int16", DataType::Int(16)},
      {"int32", DataType::Int(32)},     {"int64", DataType::Int(64)},       {"uint8", DataType::UInt(8)},
      {"uint16", DataType::UInt(16)},   {"uint32", DataType::UInt(32)},     {"uint64", DataType::UInt(64)},
      {"float16", DataType::Float(16)}, {"bfloat16", DataType::BFloat16()}, {"float32", DataType::Float(32)},
      {"float64", DataType::Float(64)}, {"float8_e4m3fn", DataType::F8E4M3()}, {"float8_e5m2", DataType::F8E5M2()},
      {"float8_e8m0fnu", DataType::F8E8M0()}, {"float4_e2m1fn_x2", DataType::F4E2M1()},  // bytes of 2 elements
  };
  for (auto& [n, dt] : names)
    if (nb::hasattr(torch, n)) a->dtypes.emplace_back(nb::object(torch.attr(n)).release().ptr(), dt);
  nb::object c = nb::getattr(torch, "_C", nb::none());
  if (!c.is_none()) {
    nb::object fn = nb::getattr(c, "_cuda_getCurrentRawStream", nb::none());
    if (!fn.is_none()) a->raw_stream = fn.release().ptr();
  }
  a->alloc_kwnames = nb::make_tuple("dtype", "device").release().ptr();
  a->s_data_ptr = interned("data_ptr");
  a->s_shape = interned("shape");
  a->s_stride = interned("stride");
  a->s_dtype = interned("dtype");
  a->s_is_cuda = interned("is_cuda");
  a->s_is_cpu = interned("is_cpu");
  a->s_get_device = interned("get_device");
  a->s_device = interned("device");
  a->s_is_neg = interned("is_neg");
  if (!std::getenv("TILELANG_TORCH_NO_EXCHANGE_API")) find_exchange_api(*a);
  api = a;
  return api;
}

[[noreturn]] void unsupported_dtype(PyObject* torch_dtype) {
  nb::object text = nb::steal(PyObject_Str(torch_dtype));
  throw_error<ArgumentError>("a torch.Tensor argument has dtype ", text.is_valid() ? PyUnicode_AsUTF8(text.ptr()) : "?",
                             ", which tilelang does not support (supported: bool, (u)int8-64, float16, bfloat16, "
                             "float32, float64, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, float4_e2m1fn_x2)");
}

// Copies a tuple of ints (torch.Size, stride()) into `out`; false when it is not one.
bool read_int_tuple(PyObject* t, int n, int64_t* out) {
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != n) return false;
  for (int i = 0; i < n; ++i) {
    out[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, i));
    if (out[i] == -1 && PyErr_Occurred()) return false;
  }
  return true;
}

// Reads the tensor; false (a Python error possibly set) when any attribute is not what a dense cpu /
// cuda tensor has.
bool read_attributes(TorchApi& api, PyObject* o, TorchTensorView& v) {
  nb::object is_cuda = nb::steal(PyObject_GetAttr(o, api.s_is_cuda));
  if (!is_cuda.is_valid()) return false;
  if (is_cuda.ptr() == Py_True) {
    nb::object dev = nb::steal(PyObject_CallMethodNoArgs(o, api.s_get_device));
    if (!dev.is_valid() || !PyLong_Check(dev.ptr())) return false;
    v.device_type = kDLCUDA;
    v.device_id = static_cast<int32_t>(PyLong_AsLong(dev.ptr()));
  } else {
    nb::object is_cpu = nb::steal(PyObject_GetAttr(o, api.s_is_cpu));
    if (!is_cpu.is_valid() || is_cpu.ptr() != Py_True) return false;  // meta, mps, xpu, ...: DLPack decides
    v.device_type = kDLCPU;
    v.device_id = 0;
  }

  nb::object dtype = nb::steal(PyObject_GetAttr(o, api.s_dtype));
  if (!dtype.is_valid()) return false;
  bool known = false;
  for (auto& [obj, dt] : api.dtypes)
    if (obj == dtype.ptr()) {
      v.dtype = dt;
      known = true;
      break;
    }
  if (!known) unsupported_dtype(dtype.ptr());

  nb::object shape = nb::steal(PyObject_GetAttr(o, api.s_shape));
  if (!shape.is_valid() || !PyTuple_Check(shape.ptr())) return false;
  const int n = static_cast<int>(PyTuple_GET_SIZE(shape.ptr()));
  nb::object strides = nb::steal(PyObject_CallMethodNoArgs(o, api.s_stride));
  if (!strides.is_valid()) return false;  // sparse and other layouts without strides
  if (!read_int_tuple(shape.ptr(), n, v.shape_storage(n)) || !read_int_tuple(strides.ptr(), n, v.stride_storage(n)))
    return false;

  nb::object ptr = nb::steal(PyObject_CallMethodNoArgs(o, api.s_data_ptr));
  if (!ptr.is_valid()) return false;
  v.data = PyLong_AsVoidPtr(ptr.ptr());
  if (!v.data && PyErr_Occurred()) return false;
  v.ndim = n;
  return true;
}

}  // namespace

int64_t* TorchTensorView::shape_storage(int n) {
  if (n <= 8) return const_cast<int64_t*>(shape = small_shape_);
  big_shape_.resize(static_cast<size_t>(n));
  return const_cast<int64_t*>(shape = big_shape_.data());
}

int64_t* TorchTensorView::stride_storage(int n) {
  if (n <= 8) return const_cast<int64_t*>(strides = small_strides_);
  big_strides_.resize(static_cast<size_t>(n));
  return const_cast<int64_t*>(strides = big_strides_.data());
}

bool is_torch_tensor(PyObject* o) {
  TorchApi* api = torch_api();
  return api && PyObject_TypeCheck(o, api->tensor_type);
}

// Reads through the exchange API; false (no Python error set) when it declines the tensor.
bool read_exchange(TorchApi& api, PyObject* o, TorchTensorView& v) {
  dlpack::dltensor t;
  if (api.tensor_from_object(o, &t) != 0) {
    PyErr_Clear();
    return false;
  }
  if (!dtype_from_dlpack(t.dtype, &v.dtype))
    unsupported_dtype(nb::object(nb::handle(o).attr("dtype")).ptr());
  // shape/strides stay valid while the tensor is alive and not resized: the call holds it.
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  v.ndim = t.ndim;
  v.shape = t.shape;
  v.strides = t.strides;
  v.device_type = t.device.device_type;
  v.device_id = t.device.device_id;
  return true;
}

// A torch tensor neither path could read: an ArgumentError saying what is wrong with it when that is
// a property no kernel can take (nested, sparse layout, no data); otherwise DLPack gets to try (other devices).
static void diagnose_unreadable(PyObject* o) {
  nb::handle t(o);
  auto text = [](nb::handle v) {
    nb::object s = nb::steal(PyObject_Str(v.ptr()));
    if (!s.is_valid()) {
      PyErr_Clear();
      return std::string("?");
    }
    return std::string(PyUnicode_AsUTF8(s.ptr()));
  };
  nb::object nested = nb::steal(PyObject_GetAttrString(o, "is_nested"));
  if (!nested.is_valid()) PyErr_Clear();
  else if (nested.ptr() == Py_True)
    throw_error<ArgumentError>("a nested torch tensor (torch.nested): its components have different shapes and no "
                               "single strided layout; pass one component, or torch.nested.to_padded_tensor(t, 0.0) "
                               "for a padded dense tensor");
  nb::object layout = nb::steal(PyObject_GetAttrString(o, "layout"));
  if (!layout.is_valid()) PyErr_Clear();
  else if (std::string l = text(layout); l != "torch.strided")
    throw_error<ArgumentError>("a sparse torch tensor (layout ", l, "); kernels take dense tensors: pass t.to_dense()");
  nb::object meta = nb::steal(PyObject_GetAttrString(o, "is_meta"));
  if (!meta.is_valid()) PyErr_Clear();
  else if (meta.ptr() == Py_True)
    throw_error<ArgumentError>("a torch tensor on the 'meta' device, which has no data (shape ",
                               text(t.attr("shape")), "); pass a tensor with storage on the kernel's device");
}

// A tensor whose memory does not hold its values: torch's lazy negation (`c.conj().imag`,
// torch._neg_view) keeps a bit on the tensor instead of negating the values, and neither the
// exchange API nor data_ptr() says so. Reading the storage would silently flip signs: refused.
// (The conjugate bit exists only on complex tensors, which no kernel takes: their dtype is refused.)
// One vectorcall (no bound method): ~60 ns a tensor.
static void refuse_negative_views(TorchApi& api, PyObject* o) {
  PyObject* args[] = {nullptr, o};  // args[0]: the slot PY_VECTORCALL_ARGUMENTS_OFFSET lets the callee use
  nb::object bit =
      nb::steal(PyObject_VectorcallMethod(api.s_is_neg, args + 1, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
  if (!bit.is_valid()) {
    PyErr_Clear();  // a torch without the method has no such views
    return;
  }
  if (bit.ptr() == Py_True)
    throw_error<ArgumentError>("a torch tensor with the negative bit set (a lazily negated view, e.g. "
                               "c.conj().imag or torch._neg_view(x)): its memory holds the negated values; pass "
                               "x.resolve_neg() (for an output, write into a plain tensor and copy back)");
}

bool read_torch_tensor(PyObject* o, TorchTensorView& view) {
  TorchApi* api = torch_api();
  if (!api || !PyObject_TypeCheck(o, api->tensor_type)) return false;
  refuse_negative_views(*api, o);  // both paths below read the storage as it is
  // The exchange API is documented for the exact type it was found on; subclasses read attributes.
  if (api->tensor_from_object && Py_TYPE(o) == api->tensor_type && read_exchange(*api, o, view)) return true;
  if (read_attributes(*api, o, view)) return true;
  PyErr_Clear();
  diagnose_unreadable(o);
  return false;
}

bool torch_current_stream(int device, void** stream) {
  TorchApi* api = torch_api();
  if (!api) return false;
  if (api->current_work_stream) {
    if (api->current_work_stream(kDLCUDA, device, stream) != 0) throw nb::python_error();
    return true;
  }
  if (!api->raw_stream) return false;
  nb::object dev = nb::steal(PyLong_FromLong(device));
  nb::object r = nb::steal(PyObject_CallOneArg(api->raw_stream, dev.ptr()));
  if (!r.is_valid()) throw nb::python_error();
  *stream = PyLong_AsVoidPtr(r.ptr());
  if (PyErr_Occurred()) throw nb::python_error();
  return true;
}

namespace {

nb::object torch_allocate(TorchApi* api, PyObject* device, PyObject* shape_tuple, DataType dtype, bool zero) {
  PyObject* dtype_obj = nullptr;
  for (auto& [obj, dt] : api->dtypes)
    if (dt == dtype) dtype_obj = obj;
  if (!dtype_obj) return nb::object();
  PyObject* args[] = {shape_tuple, dtype_obj, device};
  nb::object out = nb::steal(PyObject_Vectorcall(zero ? api->zeros : api->empty, args, 1, api->alloc_kwnames));
  if (!out.is_valid()) throw nb::python_error();
  return out;
}

}  // namespace

nb::object torch_allocate_like(PyObject* like, PyObject* shape_tuple, DataType dtype, bool zero) {
  TorchApi* api = torch_api();
  if (!api || !PyObject_TypeCheck(like, api->tensor_type)) return nb::object();  // not a torch caller
  nb::object device = nb::steal(PyObject_GetAttr(like, api->s_device));
  if (!device.is_valid()) throw nb::python_error();
  return torch_allocate(api, device.ptr(), shape_tuple, dtype, zero);
}

bool torch_imported() { return torch_api() != nullptr; }

nb::object torch_allocate_on(const char* device, PyObject* shape_tuple, DataType dtype, bool zero) {
  TorchApi* api = torch_api();
  if (!api) return nb::object();
  nb::object dev = nb::steal(PyUnicode_FromString(device));
  return torch_allocate(api, dev.ptr(), shape_tuple, dtype, zero);
}

}  // namespace tl::bind
