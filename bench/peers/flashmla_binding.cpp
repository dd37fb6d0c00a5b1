// A minimal Python binding of FlashMLA's sm90 dense (absorbed-MLA) decode for bench/peers/flashmla.py:
// only the dense decode entry point, so that only its kernels need compiling. FlashMLA's own sources
// (a checkout given to flashmla.py) provide dense_attn_decode_interface.
#include <pybind11/pybind11.h>

#include "api/dense_decode.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("dense_decode_fwd", &dense_attn_decode_interface);
}
