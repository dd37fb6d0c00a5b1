/* Everything a kernel emitted for the cpu target includes (src/target/cpu/codegen.cc). */
#ifndef TL_CPU_KERNEL_H_
#define TL_CPU_KERNEL_H_

#include "tl/cpu/abi.h"
#include "tl/cpu/atomic.h"
#include "tl/cpu/cast.h"
#include "tl/cpu/gemm.h"
#include "tl/cpu/math.h"
#include "tl/cpu/reduce.h"
#include "tl/cpu/runtime.h"
#include "tl/cpu/stream.h"
#include "tl/cpu/types.h"

#endif  // TL_CPU_KERNEL_H_
