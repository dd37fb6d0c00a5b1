// Python bindings of the runtime: Target, compile(), CompiledKernel (with the fast __call__),
// the pass-config table and the kernel cache.
//
// The call path is the hot path of every kernel launch from Python. Numpy arrays (and anything
// else with the buffer protocol) are read through PyObject_GetBuffer; torch tensors through
// torch_tensor.h (torch's __dlpack__ alone costs ~2 us); other tensors (cupy, jax) through DLPack via
// nb::ndarray. Outputs are torch tensors for torch callers and numpy arrays for everyone else; cuda
// kernels launch on torch's current stream for torch callers, else on the default stream.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bindings/bindings.h"
#include "bindings/dlpack.h"
#include "bindings/ir_bind_convert.h"
#include "bindings/torch_tensor.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/args.h"
#include "runtime/build_memo.h"
#include "runtime/cache.h"
#include "runtime/compile.h"
#include "runtime/cuda_probe.h"
#include "runtime/distributed.h"
#include "runtime/export_library.h"
#include "runtime/paths.h"
#include "runtime/source_backend.h"
#include "runtime/thread_pool.h"
#include "transform/config_index_bitwidth.h"
#include "transform/pass_config.h"

namespace nb = nanobind;

namespace tl::bind {

namespace {

static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "64-bit platforms only");

// ---------------------------------------------------------------------------------------------
// numpy / ml_dtypes helpers, imported lazily on the first call that needs them.

struct NumpyApi {
  PyObject* ndarray_type = nullptr;
  PyObject* empty = nullptr;
  PyObject* zeros = nullptr;
  PyObject* dtype_ctor = nullptr;
};

NumpyApi& numpy() {
  static NumpyApi api = [] {
    NumpyApi a;
    nb::module_ np = nb::module_::import_("numpy");
    a.ndarray_type = nb::object(np.attr("ndarray")).release().ptr();
    a.empty = nb::object(np.attr("empty")).release().ptr();
    a.zeros = nb::object(np.attr("zeros")).release().ptr();
    a.dtype_ctor = nb::object(np.attr("dtype")).release().ptr();
    return a;
  }();
  return api;
}

bool is_numpy_array(PyObject* o) {
  return PyObject_TypeCheck(o, reinterpret_cast<PyTypeObject*>(numpy().ndarray_type));
}

// The ml_dtypes name of a dtype numpy cannot export through the buffer protocol, and the unsigned
// storage type of the same width we view it as.
struct ExtendedDtype {
  const char* numpy_name;
  const char* storage;
  DataType dtype;
};
const ExtendedDtype kExtendedDtypes[] = {
    {"bfloat16", "uint16", DataType::BFloat16()},
    {"float8_e4m3fn", "uint8", DataType::F8E4M3()},
    {"float8_e4m3", "uint8", DataType::F8E4M3()},
    {"float8_e5m2", "uint8", DataType::F8E5M2()},
    {"float8_e8m0fnu", "uint8", DataType::F8E8M0()},
};

// Runs a cuda kernel called with numpy arrays: fn(kernel, args) copies them to the device, calls the
// kernel and copies back (tilelang.jit.kernel registers it). The C++ call path only detects the case,
// so ordinary calls pay nothing for it.
PyObject* g_numpy_stager = nullptr;

// Buffer-protocol format -> dtype (native byte order only).
bool dtype_from_format(const char* fmt, Py_ssize_t itemsize, DataType* out) {
  if (!fmt) fmt = "B";
  if (*fmt == '@' || *fmt == '=' || *fmt == '<') ++fmt;
  if (fmt[0] == '\0' || fmt[1] != '\0') return false;
  int bits = static_cast<int>(itemsize * 8);
  switch (fmt[0]) {
    case '?': *out = DataType::Bool(); return itemsize == 1;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': *out = DataType::Int(bits); return true;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': *out = DataType::UInt(bits); return true;
    case 'e': *out = DataType::Float(16); return itemsize == 2;
    case 'f': *out = DataType::Float(32); return itemsize == 4;
    case 'd': *out = DataType::Float(64); return itemsize == 8;
    default: return false;
  }
}

std::string type_name_of(PyObject* o) { return Py_TYPE(o)->tp_name; }

// ---------------------------------------------------------------------------------------------
// Per-call storage for the views of the caller's tensors.

struct TensorHold {
  Py_buffer view{};
  bool has_view = false;
  nb::object keep;                 // a temporary view object (ml_dtypes arrays)
  nb::ndarray<nb::ro> dl;          // DLPack import
  nb::ndarray<> dl_rw;             // DLPack import of a tensor the kernel writes (fails when read-only)
  TorchTensorView torch;           // torch tensors (torch_tensor.h)
  int64_t strides[8];              // element strides from a Py_buffer (ndim <= 8)
  std::vector<int64_t> big_strides;

  TensorHold() = default;
  TensorHold(const TensorHold&) = delete;
  ~TensorHold() {
    if (has_view) PyBuffer_Release(&view);
  }
};

// Fills `t` from a buffer-protocol export; false (error cleared) when `o` exports none we understand.
bool from_buffer(PyObject* o, TensorHold& h, TensorArg& t, const DataType* dtype_override) {
  if (!PyObject_CheckBuffer(o)) return false;
  if (PyObject_GetBuffer(o, &h.view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return false;
  }
  h.has_view = true;
  DataType dt;
  if (dtype_override) {
    dt = *dtype_override;
  } else if (!dtype_from_format(h.view.format, h.view.itemsize, &dt)) {
    PyBuffer_Release(&h.view);
    h.has_view = false;
    return false;
  }
  t.data = h.view.buf;
  t.ndim = h.view.ndim;
  t.shape = reinterpret_cast<const int64_t*>(h.view.shape);
  t.dtype = dt;
  t.device_type = kDLCPU;
  t.device_id = 0;
  t.read_only = h.view.readonly != 0;
  t.strides = nullptr;
  if (h.view.strides && h.view.ndim > 0) {
    int64_t* s = h.strides;
    if (h.view.ndim > 8) {
      h.big_strides.resize(h.view.ndim);
      s = h.big_strides.data();
    }
    for (int i = 0; i < h.view.ndim; ++i) {
      if (h.view.strides[i] % h.view.itemsize != 0)
        throw_error<ArgumentError>("a tensor argument has a byte stride (", h.view.strides[i],
                                   ") that is not a multiple of its element size (", h.view.itemsize, ")");
      s[i] = h.view.strides[i] / h.view.itemsize;
    }
    t.strides = s;
  }
  return true;
}

// Reads a tensor argument. Returns false when `o` is not a tensor at all. `written`: the kernel
// writes the tensor, so a DLPack export is asked for writable memory first (a read-only one is
// then marked read_only for the binder to refuse).
bool extract_tensor(PyObject* o, TensorHold& h, TensorArg& t, bool written = false) {
  if (from_buffer(o, h, t, nullptr)) {
    return true;
  }
  // numpy arrays of ml_dtypes types: view the storage as an unsigned integer of the same width.
  if (is_numpy_array(o)) {
    nb::handle arr(o);
    nb::object dtype_obj = arr.attr("dtype");
    std::string name = nb::cast<std::string>(dtype_obj.attr("name"));
    for (auto& e : kExtendedDtypes) {
      if (name != e.numpy_name) continue;
      h.keep = arr.attr("view")(e.storage);
      if (from_buffer(h.keep.ptr(), h, t, &e.dtype)) {
        return true;
      }
    }
    if (name == "float4_e2m1fn")
      throw_error<ArgumentError>("numpy arrays of ml_dtypes.float4_e2m1fn hold one element a byte, but float4_e2m1fn "
                                 "kernel arguments are packed two elements a byte (TileLang's layout, docs/FLOAT4.md): "
                                 "pass tilelang.utils.pack_float4(array) (uint8, last dimension halved) and read "
                                 "outputs back with tilelang.utils.unpack_float4");
    nb::object dtype_text = nb::steal(PyObject_Str(dtype_obj.ptr()));  // '>f4' shows the byte order
    if (!dtype_text.is_valid()) throw nb::python_error();
    throw_error<ArgumentError>("numpy arrays of dtype ", PyUnicode_AsUTF8(dtype_text.ptr()),
                               " are not supported as kernel arguments (supported: bool, (u)int8-64, float16/32/64, "
                               "and ml_dtypes bfloat16, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, in native byte order)");
  }
  if (read_torch_tensor(o, h.torch)) {
    const TorchTensorView& v = h.torch;
    t.data = v.data;
    t.ndim = v.ndim;
    t.shape = v.shape;
    t.strides = v.strides;
    t.dtype = v.dtype;
    t.device_type = v.device_type;
    t.device_id = v.device_id;
    return true;
  }
  // Anything else speaking DLPack (cupy, jax, torch tensors on other devices).
  if (written && nb::try_cast<nb::ndarray<>>(nb::handle(o), h.dl_rw, false)) {
    h.dl = nb::ndarray<nb::ro>(h.dl_rw);
  } else {
    PyErr_Clear();
    if (!nb::try_cast<nb::ndarray<nb::ro>>(nb::handle(o), h.dl, false)) {
      PyErr_Clear();
      return false;
    }
    t.read_only = written;  // exported only read-only
  }
  auto d = h.dl.dtype();
  if (!dtype_from_dlpack(d, &t.dtype))
    throw_error<ArgumentError>("a ", type_name_of(o), " argument has a DLPack dtype (code ", int(d.code), ", ",
                               int(d.bits), " bits) that tilelang does not support");
  t.data = const_cast<void*>(h.dl.data());
  t.ndim = static_cast<int32_t>(h.dl.ndim());
  t.shape = h.dl.shape_ptr();
  t.strides = h.dl.stride_ptr();
  t.device_type = h.dl.device_type();
  t.device_id = h.dl.device_id();
  return true;
}

// -1: no `ndim` attribute; else the object's ndim (numpy / torch / jax arrays and numpy scalars).
int ndim_of(PyObject* o) {
  if (!PyObject_HasAttrString(o, "ndim")) return -1;
  nb::object nd = nb::handle(o).attr("ndim");
  return PyLong_Check(nd.ptr()) ? static_cast<int>(PyLong_AsLong(nd.ptr())) : -1;
}

// Reads a scalar argument: Python bool/int/float, numpy scalars, 0-d arrays and tensors (.item()).
// Tensors of higher rank are marked kTensor so the binder reports "got a tensor".
void extract_scalar(PyObject* o, CallArg& a) {
  if (PyBool_Check(o)) {
    a.kind = CallArg::kBool;
    a.i = o == Py_True;
  } else if (PyLong_Check(o)) {
    int overflow = 0;
    a.i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      a.kind = CallArg::kOther;
      a.type_name = "an int that does not fit in 64 bits";
    } else {
      a.kind = CallArg::kInt;
    }
  } else if (PyFloat_Check(o)) {
    a.kind = CallArg::kFloat;
    a.f = PyFloat_AS_DOUBLE(o);
  } else if (int nd = ndim_of(o); nd == 0 && PyObject_HasAttrString(o, "item")) {
    nb::object v = nb::handle(o).attr("item")();
    if (PyBool_Check(v.ptr()) || PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) {
      extract_scalar(v.ptr(), a);
    } else {
      a.kind = CallArg::kOther;
      a.type_name = type_name_of(o);
    }
  } else if (nd > 0) {
    a.kind = CallArg::kTensor;
  } else if (PyIndex_Check(o)) {
    nb::object v = nb::steal(PyNumber_Index(o));
    if (!v.is_valid()) throw nb::python_error();
    extract_scalar(v.ptr(), a);
  } else {
    a.kind = CallArg::kOther;
    a.type_name = type_name_of(o);
  }
}

// ---------------------------------------------------------------------------------------------
// The bound kernel: a compiled kernel plus its calling convention (out_idx / workspace_idx).

struct AllocInfo {
  int param;
  bool zero;
  DataType dtype;
  PyObject* np_storage = nullptr;  // numpy dtype the buffer is allocated with
  PyObject* np_view = nullptr;     // ml_dtypes type to view it as, or null
};

struct KernelHandle {
  std::shared_ptr<CompiledKernel> kernel;
  std::shared_ptr<ArgBinder> binder;
  std::vector<AllocInfo> allocs;
  std::vector<size_t> out_allocs;  // per out_idx entry, its index in `allocs`
  bool numpy_ready = false;
  bool stages_numpy = false;  // a cuda kernel: numpy arguments go through g_numpy_stager
  bool async_launch = false;  // a cuda kernel whose launch does not wait for the device
  bool launched = false;      // a launch has completed (the module is loaded)

  void init_allocs() {
    allocs.clear();
    for (int p : binder->allocated_params()) {
      AllocInfo a;
      a.param = p;
      a.zero = binder->param(p).role == ParamRole::kWorkspace;
      a.dtype = binder->param(p).dtype;
      allocs.push_back(a);
    }
    out_allocs.clear();
    for (int p : binder->out_idx())
      for (size_t j = 0; j < allocs.size(); ++j)
        if (allocs[j].param == p) out_allocs.push_back(j);
  }

  void prepare_numpy() {
    if (numpy_ready) return;
    for (auto& a : allocs) {
      const ExtendedDtype* ext = nullptr;
      for (auto& e : kExtendedDtypes)
        if (e.dtype == a.dtype) {
          ext = &e;
          break;
        }
      if (a.dtype.is_fp4()) {  // packed bytes (docs/FLOAT4.md): numpy callers get uint8 arrays
        a.np_storage = nb::handle(numpy().dtype_ctor)("uint8").release().ptr();
      } else if (ext) {
        nb::module_ ml = nb::module_::import_("ml_dtypes");
        a.np_storage = nb::handle(numpy().dtype_ctor)(ext->storage).release().ptr();
        a.np_view = nb::handle(numpy().dtype_ctor)(ml.attr(ext->numpy_name)).release().ptr();
      } else {
        a.np_storage = nb::handle(numpy().dtype_ctor)(a.dtype.str()).release().ptr();
      }
    }
    numpy_ready = true;
  }
};

struct CallScratch {
  std::vector<CallArg> args;
  std::vector<TensorHold> holds;
  std::vector<TensorHold> alloc_holds;
  std::vector<void*> alloc_ptrs;
  std::vector<nb::object> alloc_objs;
  explicit CallScratch(size_t n, size_t n_alloc) : args(n), holds(n), alloc_holds(n_alloc), alloc_ptrs(n_alloc), alloc_objs(n_alloc) {}
};

nb::object make_shape_tuple(const std::vector<int64_t>& shape) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(shape.size()));
  for (size_t i = 0; i < shape.size(); ++i) PyTuple_SET_ITEM(t, i, PyLong_FromLongLong(shape[i]));
  return nb::steal(t);
}

// A cuda kernel runs only where a driver and a device are: a DeviceRuntimeError saying so (instead
// of torch's bare error when arguments are staged or outputs allocated). TILELANG_DISABLE_CUDA only
// stops "auto" from picking cuda; it does not refuse an explicit cuda kernel here.
void check_cuda_device(const ArgBinder& b) {
  const CudaProbe& p = probe_cuda();
  if (p.available || p.disabled) return;
  throw_error<RuntimeError>(b.kernel_name(), "(): cannot run a cuda kernel on this host: ", p.reason,
                            ". Compiling for cuda needs no GPU (NVRTC), running it does: run it on a machine with "
                            "an NVIDIA GPU and driver, or compile for target=\"cpu\" here");
}

nb::object kernel_call(KernelHandle& h, nb::args args) {
  const ArgBinder& b = *h.binder;
  const size_t n = args.size();
  if (h.stages_numpy) check_cuda_usable_after_fork();  // a cuda kernel (before torch's own fork error)
  if (h.stages_numpy && g_numpy_stager) {
    for (size_t k = 0; k < n; ++k) {
      if (!is_numpy_array(args[k].ptr())) continue;
      // The stager copies results back only into writable arrays: a read-only one the kernel
      // writes would silently keep its old contents.
      if (n == b.user_params().size())
        for (size_t j = 0; j < n; ++j) {
          nb::handle arg = args[j];
          if (is_numpy_array(arg.ptr()) && !nb::cast<bool>(arg.attr("flags").attr("writeable")))
            b.check_writable(j, /*read_only=*/true);
        }
      check_cuda_device(b);  // before torch's bare error from staging
      nb::object self = nb::find(&h);
      nb::object r = nb::steal(PyObject_CallFunctionObjArgs(g_numpy_stager, self.ptr(), args.ptr(), nullptr));
      if (!r.is_valid()) throw nb::python_error();
      return r;
    }
  }
  b.check_count(n);
  CallScratch s(n, h.allocs.size());
  PyObject* like = nullptr;
  for (size_t k = 0; k < n; ++k) {
    const ParamSpec& p = b.param(b.user_params()[k]);
    PyObject* o = args[k].ptr();
    CallArg& a = s.args[k];
    if (p.is_tensor) {
      bool got = false;
      try {
        got = extract_tensor(o, s.holds[k], a.tensor, p.written);
      } catch (const ArgumentError& e) {
        throw_error<ArgumentError>(b.kernel_name(), "(): parameter '", p.name, "' (", p.signature, "): ", e.what());
      }
      if (got) {
        a.kind = CallArg::kTensor;
        if (!like) like = o;
      } else {
        a.kind = CallArg::kOther;
        a.type_name = type_name_of(o);
      }
    } else {
      extract_scalar(o, a);
    }
  }
  ArgBinder::State st;
  b.bind(s.args.data(), n, st);
  // The caller's framework is its first tensor's: torch callers get torch outputs and torch's stream.
  // A call with no tensor argument gets torch outputs when the program has imported torch (TileLang's
  // programs are torch programs), on the kernel's device; numpy arrays otherwise.
  const bool torch_caller = like ? is_torch_tensor(like) : torch_imported();
  const bool cuda_kernel = h.kernel->target().is_cuda();
  if (cuda_kernel) check_cuda_device(b);  // the arguments are checked: a device is needed now
  if (cuda_kernel && !like && !torch_caller && !h.allocs.empty())
    throw_error<ArgumentError>(b.kernel_name(), "(): a cuda kernel called with no tensor argument allocates its "
                               "outputs on the GPU through torch; import torch (or pass the output tensors)");

  // Outputs and workspaces.
  std::vector<int64_t> shape;
  for (size_t j = 0; j < h.allocs.size(); ++j) {
    AllocInfo& ai = h.allocs[j];
    b.alloc_shape(ai.param, st, &shape);
    nb::object shape_t = make_shape_tuple(shape);
    TensorArg t;
    if (torch_caller) {
      nb::object obj = like ? torch_allocate_like(like, shape_t.ptr(), ai.dtype, ai.zero)
                            : torch_allocate_on(cuda_kernel ? "cuda" : "cpu", shape_t.ptr(), ai.dtype, ai.zero);
      if (!obj.is_valid())
        throw_error<ArgumentError>(b.kernel_name(), "(): output '", b.param(ai.param).name, "' has dtype ",
                                   ai.dtype.str(), ", which this torch build has no dtype for");
      if (!extract_tensor(obj.ptr(), s.alloc_holds[j], t))
        throw_error<Error>("internal error: cannot read back the torch tensor allocated for '", b.param(ai.param).name, "'");
      s.alloc_objs[j] = obj;
    } else {
      h.prepare_numpy();
      PyObject* fn = ai.zero ? numpy().zeros : numpy().empty;
      nb::object storage = nb::steal(PyObject_CallFunctionObjArgs(fn, shape_t.ptr(), ai.np_storage, nullptr));
      if (!storage.is_valid()) throw nb::python_error();
      if (!from_buffer(storage.ptr(), s.alloc_holds[j], t, &ai.dtype))
        throw_error<Error>("internal error: cannot read back a numpy array allocated for '", b.param(ai.param).name, "'");
      s.alloc_objs[j] = ai.np_view ? storage.attr("view")(nb::handle(ai.np_view)) : storage;
    }
    s.alloc_ptrs[j] = t.data;
  }

  std::vector<TLArg> packed;
  b.pack(s.args.data(), s.alloc_ptrs.data(), st, &packed);
  LaunchEnv env;
  env.device_id = st.device_id;
  const bool on_cuda = st.device_type == kDLCUDA || st.device_type == kDLCUDAManaged;
  if ((on_cuda || (cuda_kernel && !like)) && torch_caller)
    torch_current_stream(st.device_id, &env.stream);  // else the default stream
  if (h.async_launch && h.launched) {
    // A cuda launch only queues work (~3 us in the driver): releasing and re-taking the GIL would cost
    // a tenth of that. The first launch (module load) and synchronizing ones release it.
    h.kernel->launch(packed, env);
  } else {
    nb::gil_scoped_release release;
    h.kernel->launch(packed, env);
  }
  h.launched = true;

  const std::vector<size_t>& outs = h.out_allocs;
  if (outs.empty()) return nb::none();
  if (outs.size() == 1) return s.alloc_objs[outs[0]];
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(outs.size()));
  for (size_t i = 0; i < outs.size(); ++i) PyTuple_SET_ITEM(t, i, s.alloc_objs[outs[i]].inc_ref().ptr());
  return nb::steal(t);
}

// A call with keyword arguments (the second __call__ overload: plain positional calls never get
// here). Keywords name the kernel's parameters; they are put in parameter order and the call goes
// through kernel_call.
nb::object kernel_call_keywords(KernelHandle& h, nb::args args, nb::kwargs kwargs) {
  const ArgBinder& b = *h.binder;
  const std::vector<int>& up = b.user_params();
  auto names = [&] {
    std::string s;
    for (size_t j = 0; j < up.size(); ++j) s += (j ? ", " : "") + b.param(up[j]).name;
    return s;
  };
  if (args.size() > up.size()) b.check_count(args.size());
  std::vector<nb::object> slots(up.size());
  for (size_t j = 0; j < args.size(); ++j) slots[j] = nb::borrow(args[j]);
  for (auto [key, value] : kwargs) {
    Py_ssize_t len = 0;
    const char* text = PyUnicode_AsUTF8AndSize(key.ptr(), &len);
    if (!text) {
      PyErr_Clear();
      throw_error<ArgumentError>(b.kernel_name(), "() got a keyword argument that is not a valid UTF-8 name; its "
                                 "parameters are (", names(), ")");
    }
    std::string name(text, static_cast<size_t>(len));
    size_t j = 0;
    while (j < up.size() && b.param(up[j]).name != name) ++j;
    if (j == up.size()) {
      bool allocated = false;
      for (int o : b.out_idx()) allocated |= b.param(o).name == name;
      for (int w : b.workspace_idx()) allocated |= b.param(w).name == name;
      throw_error<ArgumentError>(b.kernel_name(), "() got an unexpected keyword argument '", name, "'",
                                 allocated ? " (it is allocated by the runtime: out_idx/workspace_idx)" : "",
                                 "; its parameters are (", names(), ")");
    }
    if (slots[j].is_valid())
      throw_error<ArgumentError>(b.kernel_name(), "() got parameter '", name, "' both by position and by keyword");
    slots[j] = nb::borrow(value);
  }
  std::string missing;
  for (size_t j = 0; j < up.size(); ++j)
    if (!slots[j].is_valid()) missing += (missing.empty() ? "'" : ", '") + b.param(up[j]).name + "'";
  if (!missing.empty())
    throw_error<ArgumentError>(b.kernel_name(), "() is missing argument ", missing, "; its parameters are (", names(),
                               ")");
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(up.size()));
  if (!t) throw nb::python_error();
  for (size_t j = 0; j < up.size(); ++j) PyTuple_SET_ITEM(t, j, slots[j].release().ptr());
  return kernel_call(h, nb::steal<nb::args>(t));
}

// ---------------------------------------------------------------------------------------------
// Conversions for compile().

Attr attr_from_py(const std::string& key, nb::handle v) {
  if (PyBool_Check(v.ptr())) return Attr(v.ptr() == Py_True);
  if (PyLong_Check(v.ptr())) return Attr(detail::int64_from_py(v, "pass config '" + key + "'"));
  if (PyFloat_Check(v.ptr())) return Attr(nb::cast<double>(v));
  if (PyUnicode_Check(v.ptr())) return Attr(nb::cast<std::string>(v));
  throw_error<ValueError>("pass config '", key, "' has a value of type ", type_name_of(v.ptr()),
                          "; pass configs take bool, int, float or str values");
}

AttrMap configs_from_py(nb::handle configs) {
  AttrMap m;
  if (!configs.is_valid() || configs.is_none()) return m;
  if (!PyDict_Check(configs.ptr())) throw_error<ValueError>("pass_configs must be a dict, got ", type_name_of(configs.ptr()));
  for (auto [k, v] : nb::borrow<nb::dict>(configs)) {
    nb::handle key = k;
    // Enum members (tilelang.PassConfigKey) carry the string in .value.
    if (!PyUnicode_Check(key.ptr()) && nb::hasattr(key, "value")) key = key.attr("value");
    if (!PyUnicode_Check(key.ptr()))
      throw_error<ValueError>("pass config keys must be strings or tilelang.PassConfigKey members, got ",
                              type_name_of(k.ptr()));
    std::string ks = nb::cast<std::string>(key);
    m[ks] = attr_from_py(ks, v);
  }
  return m;
}

nb::object attr_to_py(const Attr& a) {
  switch (a.kind()) {
    case Attr::kBool: return nb::bool_(a.as_bool());
    case Attr::kInt: return nb::int_(a.as_int());
    case Attr::kFloat: return nb::float_(a.as_float());
    case Attr::kStr: return nb::str(a.as_str().c_str());
    case Attr::kNone: return nb::none();
    default: return nb::str(print_attr(a).c_str());
  }
}

KernelHandle make_handle(std::shared_ptr<CompiledKernel> k, std::vector<int> out_idx, std::vector<int> workspace_idx) {
  KernelHandle h;
  h.binder = std::make_shared<ArgBinder>(k->func(), k->target(), std::move(out_idx), std::move(workspace_idx));
  IndexWidthPlan index_plan = plan_index_width(k->func(), k->options().pass_configs);
  h.binder->set_index_limit(index_plan.runtime_limit, index_plan.limited);
  h.stages_numpy = k->target().is_cuda();
  if (h.stages_numpy) {
    AttrMap info = k->info();
    auto it = info.find("launch_synchronizes");
    h.async_launch = it != info.end() && !it->second.as_bool();
  }
  h.kernel = std::move(k);
  h.init_allocs();
  return h;
}

CompileOptions options_from(const std::string& target, const PrimFunc& f, nb::handle pass_configs,
                            std::vector<std::string> compile_flags, bool verbose) {
  CompileOptions o;
  o.target = resolve_target(target, f);
  o.pass_configs = configs_from_py(pass_configs);
  o.compile_flags = std::move(compile_flags);
  o.verbose = verbose;
  return o;
}

nb::object shape_entry(const DimSpec& d) {
  if (d.kind == DimSpec::kConst) return nb::int_(d.value);
  return nb::str(d.text.c_str());
}

// Test support: a PrimFunc with the given signature and an empty body.
// params: [(name, dtype, shape) | (name, dtype, shape, strides) | (name, dtype)], shape entries
// int or str (a dynamic variable, shared by name).
PrimFunc signature_func(const std::string& name, nb::list params) {
  std::map<std::string, Var> vars;
  auto entry = [&](nb::handle e) -> Expr {
    if (PyLong_Check(e.ptr())) return make_int(nb::cast<int64_t>(e));
    std::string v = nb::cast<std::string>(e);
    auto it = vars.find(v);
    if (it == vars.end()) it = vars.emplace(v, Var(v)).first;
    return it->second;
  };
  std::vector<Param> ps;
  for (nb::handle item : params) {
    nb::tuple t = nb::borrow<nb::tuple>(item);
    std::string pname = nb::cast<std::string>(t[0]);
    DataType dt = parse_dtype(nb::cast<std::string>(t[1]));
    if (t.size() == 2) {
      auto it = vars.find(pname);
      Var v = it != vars.end() ? it->second : Var(pname, dt);
      ps.push_back(Param{pname, v, Buffer()});
      continue;
    }
    std::vector<Expr> shape, strides;
    for (nb::handle e : nb::borrow<nb::list>(t[2])) shape.push_back(entry(e));
    if (t.size() > 3)
      for (nb::handle e : nb::borrow<nb::list>(t[3])) strides.push_back(entry(e));
    ps.push_back(Param{pname, Var(), Buffer(pname, dt, shape, MemScope::kGlobal, strides)});
  }
  return PrimFunc(name, ps, make_nop());
}

}  // namespace

void bind_runtime(nb::module_& m) {
  nb::class_<Target>(m, "Target")
      .def_static("parse", [](const std::string& s) { return Target::parse(s); }, nb::arg("text"))
      .def_prop_ro("kind", [](const Target& t) { return std::string(t.kind_name()); })
      .def_ro("arch", &Target::arch)
      .def_ro("model", &Target::model)
      .def("__str__", &Target::str)
      .def("__repr__", [](const Target& t) { return "Target(\"" + t.str() + "\")"; })
      .def("__eq__", [](const Target& a, const Target& b) { return a.str() == b.str(); }, nb::is_operator())
      // target == "cuda" matches any cuda arch; "cuda -arch=sm_90a" only that one.
      .def("__eq__", [](const Target& a, const std::string& text) {
        Target b;
        try {
          b = Target::parse(text);
        } catch (const Error&) {
          return false;
        }
        return text.find(' ') == std::string::npos ? a.kind == b.kind : a.str() == b.str();
      }, nb::is_operator())
      .def("__hash__", [](const Target& t) { return std::hash<std::string>()(t.str()); });

  m.def("resolve_target", [](const std::string& text, nb::handle func) {
        PrimFunc f;
        if (func.is_valid() && !func.is_none()) f = nb::cast<PrimFunc>(func);
        return resolve_target(text, f);
      }, nb::arg("target"), nb::arg("func") = nb::none(),
      "Resolves a target string (\"auto\" included) for a function.");

  m.def("pass_config_keys", [] {
    std::vector<std::tuple<std::string, std::string, std::string, std::string>> out;
    for (auto& k : pass_config_keys()) {
      const char* type = k.type == Attr::kBool ? "bool" : k.type == Attr::kInt ? "int" : "str";
      out.emplace_back(k.member, k.key, type, k.doc);
    }
    return out;
  }, "The pass-config table: (member, key, type, doc) for tilelang.PassConfigKey.");
  m.def("validate_pass_configs", [](nb::handle configs) {
    nb::dict out;
    for (auto& [k, v] : validate_pass_configs(configs_from_py(configs))) out[k.c_str()] = attr_to_py(v);
    return out;
  });

  nb::class_<KernelHandle>(m, "CompiledKernel")
      .def("__init__",
           [](KernelHandle* self, const PrimFunc& func, const std::string& target, std::vector<int> out_idx,
              std::vector<int> workspace_idx, nb::handle pass_configs, std::vector<std::string> compile_flags,
              bool verbose) {
             CompileOptions o = options_from(target, func, pass_configs, std::move(compile_flags), verbose);
             // Fail on a bad out_idx before spending time compiling.
             ArgBinder check(func, o.target, out_idx, workspace_idx);
             std::shared_ptr<CompiledKernel> k;
             {
               nb::gil_scoped_release release;
               k = compile(func, o);
             }
             new (self) KernelHandle(make_handle(std::move(k), std::move(out_idx), std::move(workspace_idx)));
           },
           nb::arg("func"), nb::arg("target") = "auto", nb::arg("out_idx") = std::vector<int>{},
           nb::arg("workspace_idx") = std::vector<int>{}, nb::arg("pass_configs") = nb::none(),
           nb::arg("compile_flags") = std::vector<std::string>{}, nb::arg("verbose") = false)
      .def("__init__", [](KernelHandle* self, const KernelHandle& other) { new (self) KernelHandle(other); },
           nb::arg("other"), "Shares the compiled kernel of `other` (no recompilation).")
      .def("__call__", &kernel_call)
      .def("__call__", &kernel_call_keywords)  // tried only when the first overload refuses (keywords given)
      .def_prop_ro("kernel_source", [](const KernelHandle& h) { return h.kernel->kernel_source(); })
      .def_prop_ro("host_source", [](const KernelHandle& h) { return h.kernel->host_source(); })
      .def_prop_ro("target", [](const KernelHandle& h) { return h.kernel->target(); })
      .def_prop_ro("func", [](const KernelHandle& h) { return h.kernel->func(); })
      .def_prop_ro("name", [](const KernelHandle& h) { return h.kernel->func().name(); })
      .def_prop_ro("out_idx", [](const KernelHandle& h) { return h.binder->out_idx(); })
      .def_prop_ro("workspace_idx", [](const KernelHandle& h) { return h.binder->workspace_idx(); })
      .def_prop_ro("cache_key", [](const KernelHandle& h) { return h.kernel->cache_key(); })
      .def_prop_ro("cache_hit", [](const KernelHandle& h) { return h.kernel->cache_hit(); })
      .def_prop_ro("artifact_dir", [](const KernelHandle& h) { return h.kernel->artifact_dir(); })
      .def_prop_ro("compile_seconds", [](const KernelHandle& h) { return h.kernel->compile_seconds(); })
      .def_prop_ro("pass_configs", [](const KernelHandle& h) {
        nb::dict out;
        for (auto& [k, v] : h.kernel->options().pass_configs) out[k.c_str()] = attr_to_py(v);
        return out;
      })
      .def_prop_ro("dynamic_vars", [](const KernelHandle& h) {
        std::vector<std::string> names;
        for (auto& v : h.binder->dynamic_vars()) names.push_back(v->name);
        return names;
      })
      .def("param_specs", [](const KernelHandle& h) {
        // (name, is_tensor, dtype, shape, strides, role) per parameter; shape entries int or str.
        nb::list out;
        for (size_t i = 0; i < h.binder->num_params(); ++i) {
          const ParamSpec& p = h.binder->param(i);
          nb::list shape, strides;
          for (auto& d : p.shape) shape.append(shape_entry(d));
          for (auto& d : p.strides) strides.append(shape_entry(d));
          const char* role = p.role == ParamRole::kOutput ? "output" : p.role == ParamRole::kWorkspace ? "workspace" : "input";
          out.append(nb::make_tuple(p.name, p.is_tensor, p.dtype.str(), shape, strides, role));
        }
        return out;
      })
      .def("get_ir", [](KernelHandle& h, const std::string& stage) {
        PrimFunc f;
        {
          nb::gil_scoped_release release;
          f = h.kernel->stage(stage);
        }
        return print_func(f);
      }, nb::arg("stage") = "final")
      .def("stage_func", [](KernelHandle& h, const std::string& stage) { return h.kernel->stage(stage); },
           nb::arg("stage") = "final")
      .def("stage_names", [](KernelHandle& h) { return h.kernel->stage_names(); })
      .def("_export_library", [](KernelHandle& h, const std::string& path, const std::string& symbol) {
        ExportedLibrary r;
        {
          nb::gil_scoped_release release;
          r = export_library(*h.kernel, path, symbol);
        }
        return std::make_tuple(r.library_path, r.header_path, r.symbol);
      }, nb::arg("path"), nb::arg("symbol") = "")
      .def("info", [](const KernelHandle& h) {
        nb::dict out;
        for (auto& [k, v] : h.kernel->info()) out[k.c_str()] = attr_to_py(v);
        return out;
      });

  m.def("_set_numpy_stager", [](nb::handle fn) {
    Py_XDECREF(g_numpy_stager);
    g_numpy_stager = fn.is_none() ? nullptr : fn.inc_ref().ptr();
  }, "Registers fn(kernel, args) -> result, which runs a cuda kernel called with numpy arrays.");
  m.def("_compile_source", [](const std::string& name, nb::list params, const std::string& source,
                              const std::string& target, std::vector<int> out_idx, std::vector<int> workspace_idx,
                              nb::handle pass_configs, std::vector<std::string> compile_flags, bool verbose) {
    PrimFunc f = signature_func(name, params);
    CompileOptions o = options_from(target, f, pass_configs, std::move(compile_flags), verbose);
    if (!o.target.is_cpu()) throw_error<ValueError>("_compile_source builds cpu kernels only");
    ArgBinder check(f, o.target, out_idx, workspace_idx);
    std::shared_ptr<CompiledKernel> k;
    {
      nb::gil_scoped_release release;
      k = compile_with_backend(f, o, std::make_shared<SourceBackend>(source));
    }
    return make_handle(std::move(k), std::move(out_idx), std::move(workspace_idx));
  }, nb::arg("name"), nb::arg("params"), nb::arg("source"), nb::arg("target") = "cpu",
     nb::arg("out_idx") = std::vector<int>{}, nb::arg("workspace_idx") = std::vector<int>{},
     nb::arg("pass_configs") = nb::none(), nb::arg("compile_flags") = std::vector<std::string>{},
     nb::arg("verbose") = false,
     "Builds a hand-written C++ kernel (include/tl/cpu/abi.h) for the given signature (tests, experiments).");

  m.def("prelower", [](const PrimFunc& func, const std::string& target, nb::handle pass_configs,
                        std::vector<std::string> compile_flags) {
    CompileOptions o = options_from(target, func, pass_configs, std::move(compile_flags), false);
    std::pair<PrimFunc, std::string> r;
    {
      nb::gil_scoped_release release;
      r = prelower(func, o);
    }
    return nb::make_tuple(r.first, r.second, o.target.str());
  }, nb::arg("func"), nb::arg("target") = "auto", nb::arg("pass_configs") = nb::none(),
     nb::arg("compile_flags") = std::vector<std::string>{},
     "Lowers and generates code as compile() would with these options, keeping the result for that compile "
     "(runtime/compile.h). Returns (lowered PrimFunc, kernel source, resolved target).");
  m.def("prelower_reuse_count", &prelower_reuse_count);
  m.def("cache_root", &cache_root, "The kernel cache directory in effect ($TILELANG_CACHE_DIR or ~/.cache/tilelang).");
  m.def("cache_disabled", &KernelCache::disabled_by_env);
  m.def("clear_cache", [] {
    clear_compile_memo();
    return KernelCache(cache_root()).clear();
  }, "Removes every on-disk cache entry and forgets in-process compiled kernels; returns the entry count.");
  m.def("clear_memo", &clear_compile_memo);
  m.def("build_memo_stats", [] {
    BuildMemoStats s = build_memo_stats();
    return std::make_tuple(s.builds, s.reuses, s.entries);
  }, "(builds, reuses, entries) of the in-process build memo (runtime/build_memo.h): compiles whose "
     "generated source another compile already built reuse its artifacts.");
  m.def("cuda_available", [] { return probe_cuda().available; });
  m.def("hardware_threads", &ThreadPool::hardware_threads);
  m.def("dist_set_context", [](int rank, int world, uint64_t heap_size, double timeout_s, uint64_t ctrl_offset,
                               const std::vector<uint64_t>& bases) {
    if (bases.size() > static_cast<size_t>(kDistMaxRanks))
      throw_error<ValueError>("at most ", kDistMaxRanks, " ranks are supported, got ", bases.size());
    DistContext c;
    c.rank = rank;
    c.world = world;
    c.heap_size = heap_size;
    c.timeout_ns = timeout_s <= 0 ? 0 : static_cast<uint64_t>(timeout_s * 1e9);
    c.ctrl_offset = ctrl_offset;
    for (size_t i = 0; i < bases.size(); ++i) c.bases[i] = bases[i];
    dist_set_context(c);
  }, "Installs the distributed context (python/tilelang/distributed); world 0 clears it.");
  m.def("dist_context", [] {
    DistContext c = dist_context();
    nb::dict d;
    d["rank"] = c.rank;
    d["world"] = c.world;
    d["heap_size"] = c.heap_size;
    d["timeout_ns"] = c.timeout_ns;
    d["ctrl_offset"] = c.ctrl_offset;
    std::vector<uint64_t> b(c.bases, c.bases + (c.world > 0 ? c.world : 0));
    d["bases"] = b;
    return d;
  });
  m.def("dist_store_release_u32", [](uintptr_t addr, uint32_t value) {
    if (!addr || addr % 4) throw_error<ValueError>("dist_store_release_u32: the address must be non-null and 4-byte aligned");
    // A fence first: the copies this thread (and the workers it joined) made are visible to a
    // thread that reads the flag with acquire (T.wait on cpu, include/tl/cpu/dist.h).
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(reinterpret_cast<uint32_t*>(addr), value, __ATOMIC_RELEASE);
  }, "Sets a 32-bit flag in host (shared) memory with release order: the cpu copy-engine all-gather's ready flag.");
  m.attr("dist_ctrl_bytes") = kDistCtrlBytes;
  m.attr("dist_max_ranks") = kDistMaxRanks;
  m.def("include_dir", &tl_include_dir);
}

}  // namespace tl::bind
