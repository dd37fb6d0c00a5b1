// emulate_cuda (emulator.h). The emulator itself is the class cuda_emu::Emulator (emulator_impl.h),
// whose member functions live in emulator_interpreter.cc, emulator_memory.cc, emulator_builtins.cc
// and emulator_gemm.cc; values and number formats in emulator_values.{h,cc}.
#include "target/cuda/emulator.h"

#include "target/cuda/emulator_impl.h"

namespace tl {

EmulatorReport emulate_cuda(const PrimFunc& lowered, const std::vector<TLArg>& args) {
  cuda_emu::Emulator e(lowered, args);
  return e.run();
}

}  // namespace tl
