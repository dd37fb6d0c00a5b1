// DLPack on the binding side: tensors arrive as nanobind's DLPack structures (nanobind/ndarray.h:
// nb::dlpack::dltensor, dtype, device; nb::ndarray for the generic import), and this header maps
// them to the runtime's types. The runtime layer itself does not speak DLPack: its TensorArg
// carries a device code whose values are DLPack's (runtime/args.h), checked here against nanobind's
// declarations so that the two cannot drift apart.
#pragma once

#include <nanobind/ndarray.h>

#include "ir/dtype.h"
#include "runtime/args.h"

namespace tl::bind {

namespace dlpack = nanobind::dlpack;

static_assert(kDLCPU == nanobind::device::cpu::value && kDLCUDA == nanobind::device::cuda::value &&
                  kDLCUDAHost == nanobind::device::cuda_host::value &&
                  kDLCUDAManaged == nanobind::device::cuda_managed::value,
              "runtime/args.h device codes must be DLPack's");

// The tile IR type of a DLPack dtype; false for types tilelang has none for (complex, float6, unpacked float4, ...).
// Both float8 e4m3 codes map to float8_e4m3 (TileLang's e4m3 is the "fn" variant: no infinities).
inline bool dtype_from_dlpack(dlpack::dtype d, DataType* out) {
  DataType::Code c;
  switch (static_cast<dlpack::dtype_code>(d.code)) {
    case dlpack::dtype_code::Int: c = DataType::kInt; break;
    case dlpack::dtype_code::UInt: c = DataType::kUInt; break;
    case dlpack::dtype_code::Float: c = DataType::kFloat; break;
    case dlpack::dtype_code::Bfloat: c = DataType::kBFloat; break;
    case dlpack::dtype_code::Bool: c = DataType::kBool; break;
    case dlpack::dtype_code::Float8_E4M3:
    case dlpack::dtype_code::Float8_E4M3FN: c = DataType::kFloat8E4M3; break;
    case dlpack::dtype_code::Float8_E5M2: c = DataType::kFloat8E5M2; break;
    case dlpack::dtype_code::Float8_E8M0FNU: c = DataType::kFloat8E8M0; break;
    case dlpack::dtype_code::Float4_E2M1FN:
      // Two 4-bit elements a byte (torch.float4_e2m1fn_x2 exports bits 4, lanes 2): the tensor's shape
      // counts bytes, as a float4_e2m1fn parameter expects (docs/FLOAT4.md).
      if (d.bits != 4 || d.lanes != 2) return false;
      *out = DataType::F4E2M1();
      return true;
    default: return false;
  }
  *out = DataType(c, d.bits, d.lanes);
  return true;
}

}  // namespace tl::bind
