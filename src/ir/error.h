// The typed errors of the compiler. Each maps to one Python exception class (see
// src/bindings/errors.cc); messages are written for kernel authors, not compiler developers.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tl {

// Base of every error raised on purpose by the compiler or runtime.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad kernel source: unsupported Python syntax, misuse of a T.* primitive. Carries file:line:col.
class SyntaxError : public Error {
 public:
  using Error::Error;
};
// A value is out of its allowed set (unknown target, unknown pass config, bad dtype name...).
class ValueError : public Error {
 public:
  using Error::Error;
};
// A type mismatch in IR construction (adding a buffer to an int, ...).
class TypeError : public Error {
 public:
  using Error::Error;
};
// Layout inference could not place a buffer or a loop.
class LayoutError : public Error {
 public:
  using Error::Error;
};
// Memory over capacity (shared memory, L1/UB/L0*, registers).
class ResourceError : public Error {
 public:
  using Error::Error;
};
// A call argument of the wrong count/dtype/shape/strides/device.
class ArgumentError : public Error {
 public:
  using Error::Error;
};
// A feature listed in the spec that this target does not implement yet.
class NotImplemented : public Error {
 public:
  using Error::Error;
};
// The IR violates an invariant (found by the verifier or a constructor).
class VerifyError : public Error {
 public:
  using Error::Error;
};
// Ascend simulator: a race, a double set flag, a deadlock, a flag left set.
class SyncError : public Error {
 public:
  using Error::Error;
};
// A device-side failure reported after a launch (device_assert, CUDA error).
class RuntimeError : public Error {
 public:
  using Error::Error;
};
// The system or device compiler failed on code we emitted: an internal bug, reported with the log.
class CompileError : public Error {
 public:
  using Error::Error;
};

// Builds a message from streamable pieces: throw_error<ValueError>("unknown target '", s, "'").
template <typename E, typename... Args>
[[noreturn]] void throw_error(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  throw E(os.str());
}

// Internal invariant check: failure is a compiler bug, reported as an Error (never an abort).
#define TL_ICHECK(cond, ...)                                                              \
  do {                                                                                    \
    if (!(cond)) ::tl::throw_error<::tl::Error>("internal error at ", __FILE__, ":", __LINE__, \
                                                ": check '", #cond, "' failed. " __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

}  // namespace tl
