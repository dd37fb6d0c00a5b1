// Native execution of tile instructions on whole tiles (copies with casts, transposes and tails,
// mmad, vector ops). Tiles are stored row-major in the simulated memories; the fractal layouts of
// the cube memories only matter for sizes (see buffer_footprint).
#pragma once

#include <cstdint>
#include <string>

#include "ir/dtype.h"
#include "sim/machine_model.h"

namespace tl::sim {

struct SimBuffer;
struct InstrTemplate;

// One region operand of an issued instruction, resolved to host memory.
struct Operand {
  Mem mem = Mem::kGM;
  uint8_t* ptr = nullptr;    // element at the region's origin
  int64_t addr = 0;          // byte address of the origin in its memory (GM: host address)
  DataType dt;
  int nd = 0;
  int64_t ext[4] = {1, 1, 1, 1};     // region extents (elements)
  int64_t stride[4] = {0, 0, 0, 0};  // element strides
  int64_t valid[4] = {1, 1, 1, 1};   // in-bounds extents (GM tails); equal to ext elsewhere
  bool partial = false;              // some valid < ext
  bool empty = false;                // no in-bounds element at all
  const SimBuffer* buf = nullptr;
  int64_t elements() const;
  int64_t valid_elements() const;
};

double load_scalar(const uint8_t* p, DataType t);
void store_scalar(uint8_t* p, DataType t, double v);
int64_t load_int(const uint8_t* p, DataType t);
void store_int(uint8_t* p, DataType t, int64_t v);

// Each throws tl::Error (prefixed with `where`) on operands whose shapes do not fit together.
void exec_copy(const Operand& src, const Operand& dst, bool transpose, bool relu, bool has_pad, double pad,
               const std::string& where);
// C[M,N] (+)= op(A) op(B); op transposes a [K,M] A / [N,K] B when asked.
void exec_mma(const Operand& a, const Operand& b, const Operand& c, bool init, bool ta, bool tb,
              const std::string& where);
void exec_fill(const Operand& dst, double value, const std::string& where);
void exec_atomic_add(const Operand& dst, const Operand& src, const std::string& where);

// A vector op on UB. `ops` holds the region operands in argument order; `scalar` the value of a
// scalar argument (second source of a binary op, axpy factor, fill value).
void exec_vector(const InstrTemplate& t, const Operand* ops, int nops, bool has_scalar, double scalar,
                 const std::string& where);

}  // namespace tl::sim
