// emulate_cuda (emulator.h). The emulator itself is the class cuda_emu::Emulator (emulator_impl.h),
// whose member functions live in emulator_interpreter.cc, emulator_memory.cc, emulator_builtins.cc
// emulator_gemm.cc and emulator_async.cc; values and number formats in emulator_values.{h,cc}.
#include "target/cuda/emulator.h"

#include "ir/error.h"
#include "target/cuda/emulator_impl.h"

namespace tl {

EmulatorReport emulate_cuda(const PrimFunc& lowered, const std::vector<TLArg>& args, const EmulatorDevice& dev) {
  cuda_emu::Emulator e(lowered, args, dev);
  try {
    return e.run();
  } catch (const RuntimeError& err) {
    // A hang or fault often follows from an ordering error found earlier: name those too.
    if (e.races().empty()) throw;
    std::string msg = err.what();
    msg += "; found before: ";
    for (size_t i = 0; i < e.races().size() && i < 3; ++i) msg += (i ? "; " : "") + e.races()[i];
    throw RuntimeError(msg);
  }
}

}  // namespace tl
