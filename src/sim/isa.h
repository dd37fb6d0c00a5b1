// The instruction set of the modelled NPU as seen from lowered tile IR: which memory a buffer
// scope is, which (src, dst) copies exist and on which pipe, and which pipe and core kind execute
// each tile op. Shared by the ascend passes (legality, sync insertion) and the simulator.
#pragma once

#include <string>

#include "ir/stmt.h"
#include "sim/machine_model.h"

namespace tl::sim {

// Maps an Ascend buffer scope (or global) to a memory; false for local/fragment/shared/... scopes.
bool mem_of_scope(MemScope s, Mem* out);

struct CopyRoute {
  bool legal = false;
  Pipe pipe = Pipe::kS;
  CopyPath path = CopyPath::kGmToL1;
};
CopyRoute copy_route(Mem src, Mem dst);
// "GM->L1 (MTE2), L1->L0A (MTE1), ..." for error messages.
std::string legal_copy_list();
// What to write instead of an illegal copy (L0C->UB, UB->L1, L1->GM, GM->L0A, ...).
std::string copy_alternative(Mem src, Mem dst);

enum class InstrClass : uint8_t {
  kCopy,       // T.copy between two memories
  kMma,        // one cube instruction
  kVector,     // tile.* / fill / reduce / cumsum on UB
  kFill,       // fill of an L1 buffer (MTE2 InitConstValue) or L0C (cube init)
  kAtomicAdd,  // UB->GM (MTE3) or L0C->GM (FIX) accumulate
  kDebug,      // print / dump_tensor: read by the scalar unit
  kMeta,       // annotate_layout / annotate_address: no instruction
};

struct OpClass {
  InstrClass cls = InstrClass::kMeta;
  Pipe pipe = Pipe::kS;
  CoreKind core = CoreKind::kAIC;
  bool core_neutral = false;  // kDebug/kMeta: runs wherever it is placed
  CopyPath path = CopyPath::kGmToL1;
};

// Classifies a lowered tile op. Throws SyntaxError (illegal copy, op on the wrong memory) or
// NotImplemented (an op the ascend target does not execute) with the op's source location.
OpClass classify_tile_op(const TileOpNode& op);

// The memory of a tile-op region argument; throws a SyntaxError naming the buffer when its scope is
// not an Ascend memory (e.g. a fragment that scope inference did not resolve).
Mem region_mem(const TileOpNode& op, const BufferRegion& r);

// Regions a lowered tile op reads and writes (for sync insertion and memory liveness): the
// operator's TileOp::effects (one effect model for every target), dst-first for an unknown op.
struct OpAccess {
  std::vector<BufferRegion> reads, writes;
};
OpAccess tile_op_access(const TileOpNode& op);

// Vector tile op name without prefix ("tile.exp" -> "exp", "fill" -> "fill", "reduce" with
// type sum -> "reduce_sum"); the key into MachineModel::vector_costs.
std::string vector_op_name(const TileOpNode& op);

// Ascend sync builtins (ascend.set_flag, ...).
bool is_ascend_sync_call(const std::string& op);

// Short text of a tile op for traces and error messages: "T.copy(A -> A_L1)".
std::string describe_tile_op(const TileOpNode& op);

}  // namespace tl::sim
