// The simulator's executable form of a lowered ascend kernel. The lowered IR is compiled once into
// one bytecode per core kind (cube, vector): scalar code becomes a small register machine over
// compiled expressions, and every tile op becomes an `InstrTemplate` whose operand regions are
// evaluated when the scalar unit issues it. Tile work itself is done natively (tile_exec.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/tile_op.h"
#include "sim/isa.h"
#include "sim/machine_model.h"

namespace tl::sim {

// A scalar of the interpreter: integers and bools as int64, floats as double.
union Value {
  int64_t i;
  double f;
};

enum class XOp : uint8_t { kIntConst, kFloatConst, kSlot, kBinary, kUnary, kSelect, kCast, kLoad, kCall };

// One node of a compiled scalar expression (nodes live in Program::exprs; children are indices).
struct XNode {
  XOp op = XOp::kIntConst;
  bool is_float = false;
  DataType dtype;
  int32_t a = -1, b = -1, c = -1;
  int64_t ival = 0;
  double fval = 0;
  BinOp bop = BinOp::kAdd;
  UnOp uop = UnOp::kNeg;
  int32_t buffer = -1;          // kLoad
  std::vector<int32_t> args;    // kLoad indices, kCall arguments
  std::string call;             // kCall: builtin name
};

// A buffer the kernel touches: a GM parameter, an on-chip buffer at a byte address, or a scalar
// local (T.alloc_var / T.alloc_local) kept in the core's frame.
struct SimBuffer {
  std::string name;
  DataType dtype;
  MemScope scope = MemScope::kGlobal;
  Mem mem = Mem::kGM;
  bool is_local = false;        // frame storage, private to the core, never race-checked
  int param_index = -1;         // GM: index of the kernel parameter
  // GM workspace the runtime allocates (a GM buffer that is no parameter: the Developer-mode cube/
  // vector transfers of ascend_cv_split). One private copy per core group, at this byte offset of
  // the group's workspace arena; invisible to the caller.
  bool workspace = false;
  int64_t workspace_offset = 0;
  std::vector<int32_t> shape;   // expression roots (GM shapes may be dynamic)
  std::vector<int32_t> strides; // expression roots; empty = row-major
  int64_t address = -1;         // on-chip byte address
  int64_t footprint = 0;        // on-chip bytes reserved (fractal-padded, aligned)
  int64_t local_offset = 0;     // locals: first Value slot in the frame's local storage
  int64_t local_size = 0;
  Span span;
};

struct OperandTemplate {
  int32_t buffer = -1;
  std::vector<int32_t> min, extent;  // expression roots, one per buffer dimension
  // Whether the instruction reads / writes this operand: from the operator's TileOp::effects (the one
  // effect model, ir/tile_op.h), resolved once at compile time.
  bool read = false, write = false;
};

// A tile op as the scalar unit issues it.
struct InstrTemplate {
  const TileOpNode* node = nullptr;  // kept alive by Program::func
  // The operator, resolved from the registry at compile time (ir/tile_op.h, op/tile_ops.h).
  TileOpKind kind = TileOpKind::kElementwise;
  std::string fn;             // tile.<fn> ops: ElementwiseOp::fn(); empty for the others
  bool dumps_tensor = false;  // T.dump_tensor (PrintOp::dumps_tensor) rather than T.print
  OpClass cls;
  std::string name;   // vector cost key, or "copy", "mma", ...
  std::string text;   // "T.copy(A, A_L1)" for traces and errors
  Span span;
  struct Arg {
    bool is_region = false;
    int32_t index = -1;  // into `regions` or an expression root
  };
  std::vector<Arg> args;
  std::vector<OperandTemplate> regions;
  // Attributes resolved at compile time (expressions where they may vary at run time).
  bool relu = false;
  bool transpose = false;
  bool transpose_a = false, transpose_b = false;  // mma
  int32_t init = -1;         // mma: expression root (bool), -1 = false
  std::string mode;          // cast / compare / select mode, reduce type
  int64_t dim = -1;          // reduce / cumsum axis in the squeezed source
  bool clear = true;         // reduce
  bool reverse = false;      // cumsum
  int32_t pad_value = -1;    // copy GM->*: fill for out-of-bounds (expression root)
};

enum class BOp : uint8_t {
  kLet,          // slot = x0
  kStoreLocal,   // buffer[x-indices] = x0 (frame storage)
  kStoreMem,     // buffer[x-indices] = x0 (UB/L1/GM by the scalar unit)
  kEval,         // evaluate x0 for its effect
  kJump,         // goto target
  kBranchFalse,  // if !x0 goto target
  kForInit,      // slot = x0; slot2 = slot + x1
  kForTest,      // if !(slot < slot2) goto target
  kForNext,      // slot += 1; goto target
  kIssue,        // tile instruction `tmpl`
  kSetFlag,      // p0 -> p1, id x0
  kWaitFlag,
  kPipeBarrier,  // p0
  kBarrierAll,
  kSetCross,     // pipe p0, id x0, mode x1
  kWaitCross,    // id x0
  kSyncAll,
  kPrintf,       // format string `text`, values in indices
  kAssert,       // x0, message `text`
  kEnd,
};

struct BInstr {
  BOp op = BOp::kEnd;
  bool visible = false;    // touches memory or sync state: executed in global time order
  int32_t slot = -1, slot2 = -1, target = -1;
  int32_t x0 = -1, x1 = -1;
  int32_t buffer = -1;
  int32_t tmpl = -1;
  Pipe p0 = Pipe::kS, p1 = Pipe::kS;
  std::vector<int32_t> indices;
  std::string text;
  Span span;
  int32_t sync_participants = 3;  // kSyncAll: bit 0 = AIC, bit 1 = AIV
};

struct Program {
  PrimFunc func;                      // the lowered function (owns the IR the templates point to)
  const MachineModel* model = nullptr;
  std::vector<XNode> exprs;
  std::vector<SimBuffer> buffers;
  std::vector<InstrTemplate> templates;
  std::vector<BInstr> code[2];        // [CoreKind]: cube, vector
  int32_t num_slots = 0;              // frame variables
  int64_t local_values = 0;           // frame local storage (Values)
  // Launch geometry.
  int32_t grid_expr = -1;             // number of logical blocks (expression root)
  int32_t cid_slot = -1, vid_slot = -1;
  int vector_cores = 2;               // AIV per block (Expert: 2; Developer threads=1: 1)
  // Parameters: slot of each scalar parameter / dynamic variable, buffer index of each tensor.
  struct ParamInfo {
    std::string name;
    bool is_buffer = false;
    int32_t buffer = -1;
    int32_t slot = -1;
    DataType dtype;
  };
  std::vector<ParamInfo> params;
  std::vector<int32_t> dynamic_slots;  // PrimFunc::dynamic_vars() order
  int64_t workspace_bytes = 0;          // GM workspace arena per core group (SimBuffer::workspace)
  // Static facts for KernelModule::info().
  int64_t peak_bytes[kNumMems] = {0, 0, 0, 0, 0, 0};
};

// Compiles a lowered ascend PrimFunc. Buffers without a planned address (no annotate_address) are
// placed sequentially. Throws SyntaxError / NotImplemented for IR the simulator cannot run.
std::shared_ptr<const Program> compile_program(const PrimFunc& lowered, const MachineModel& model);

// Bytes an on-chip buffer reserves: fractal-padded for the cube memories, 32 B aligned.
int64_t buffer_footprint(const Buffer& b, Mem mem, const MachineModel& model);

}  // namespace tl::sim
