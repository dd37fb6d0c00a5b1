// Maps the C++ error classes of ir/error.h to Python exceptions. ValueError, TypeError and
// NotImplementedError are Python's own classes; the rest derive from tilelang's TileLangError.
#include <nanobind/nanobind.h>

#include "bindings/bindings.h"
#include "ir/error.h"

namespace nb = nanobind;

namespace tl::bind {

void bind_errors(nb::module_& m) {
  // Registration order matters: nanobind tries the most recently registered translator first,
  // so the base class goes first and the subclasses after it.
  static nb::exception<tl::Error> base(m, "TileLangError", PyExc_RuntimeError);
  static nb::exception<tl::SyntaxError> syntax(m, "TileLangSyntaxError", base.ptr());
  static nb::exception<tl::LayoutError> layout(m, "LayoutError", base.ptr());
  static nb::exception<tl::ResourceError> resource(m, "ResourceError", base.ptr());
  static nb::exception<tl::ArgumentError> argument(m, "ArgumentError", base.ptr());
  static nb::exception<tl::VerifyError> verify(m, "VerifyError", base.ptr());
  static nb::exception<tl::SyncError> sync(m, "SyncError", base.ptr());
  static nb::exception<tl::CompileError> compile(m, "CompileError", base.ptr());
  static nb::exception<tl::RuntimeError> runtime(m, "DeviceRuntimeError", base.ptr());
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const tl::ValueError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const tl::TypeError& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const tl::NotImplemented& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
}

}  // namespace tl::bind
