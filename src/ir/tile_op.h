// The TileOp interface and the registry of tile operators: the IR's extension point for TileOpNode
// (kept in ir/ so that the verifier, the access analysis and layout inference below op/ can ask it).
// Each operator is one class (src/op/<op>.cc) deriving from TileOp: it verifies its arguments, reports
// the buffer regions it reads and writes, its layout constraints (layout inference on cuda), and
// lowers itself to plain loops (the cpu target, and the fallback of other targets). Targets lower the ops they support
// themselves through hooks keyed by TileOpKind (transform/lower_tile_ops.h). Operator names are
// compared nowhere but here (the lookup); everything else asks kind() or the op's class.
// Argument conventions of every op are in docs/TILE_OPS.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/target.h"

namespace tl {

// The memory effects of a tile op (TileOp::effects): the one effect model of every target (sync
// insertion, pipelining, liveness, memory planning, and the Ascend simulator's per-instruction
// operand roles). An operator adds its region arguments with read(op, i) / write(op, i), which keep
// the argument index beside the region (read_args / write_args, parallel to reads / writes, for
// every TileOp::effects; empty for regions collected from a statement, collect_access_regions).
struct AccessRegions {
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
  std::vector<int> read_args, write_args;

  void read(const TileOpNode& op, size_t arg) {
    reads.push_back(op.args[arg].region);
    read_args.push_back(static_cast<int>(arg));
  }
  void write(const TileOpNode& op, size_t arg) {
    writes.push_back(op.args[arg].region);
    write_args.push_back(static_cast<int>(arg));
  }
  // Whether the op reads / writes its argument `arg` (an index into TileOpNode::args).
  bool reads_arg(size_t arg) const { return has_arg(read_args, arg); }
  bool writes_arg(size_t arg) const { return has_arg(write_args, arg); }

 private:
  static bool has_arg(const std::vector<int>& v, size_t arg) {
    for (int a : v)
      if (a == static_cast<int>(arg)) return true;
    return false;
  }
};

// What a loop lowering may need to know besides the op itself.
struct LowerContext {
  Target target;
  // Thread count of the enclosing kernel (1 when unknown); fragments on cpu ignore it.
  int64_t num_threads = 1;
  // Ranges [min, min + extent) of the block, loop and let variables around the op (filled by
  // lower_tile_ops), so that lowerings can prove accesses in bounds and skip their guards.
  std::map<Var, Range, VarLess> var_ranges;
  // Guard out-of-bounds accesses of global tensors (reads fill 0, writes are dropped). Off with
  // the pass config tl.disable_safe_memory_legalize.
  bool guard_global_bounds = true;
};

// The operator families. The registry owns this enum: passes and targets ask an op's kind (or
// dynamic_cast the TileOp to its class in op/ for family details such as a GEMM's spelling) instead of
// comparing operator names; names appear only where an operator registers itself.
enum class TileOpKind : uint8_t {
  kCopy,             // copy
  kFill,             // fill, tile.fill (FillOp::vector_spelling)
  kGemm,             // gemm, gemm_v0, mma (GemmOp::form)
  kReduce,           // reduce
  kCumsum,           // cumsum
  kAtomic,           // atomic_add / atomic_max / atomic_min (AtomicOp::combine)
  kElementwise,      // tile.<fn> (ElementwiseOp::fn), Ascend-style vector ops
  kPrint,            // print, dump_tensor (PrintOp::dumps_tensor)
  kAnnotateLayout,   // annotate_layout
  kAnnotateAddress,  // annotate_address
  kFinalizeReducer,  // finalize_reducer
  kDistributed,      // dist.copy / dist.barrier / dist.signal / dist.wait
};

// Layout inference (layout/infer_layout.h drives it; each operator owns its constraints). The state
// an operator reads and extends is layout/infer_layout.h's LayoutInference, declared here only (the
// operators in op/ see its definition; the IR layer never does).
class LayoutInference;
// The stages, in the order the driver runs them over the kernel's operators (program order).
enum class LayoutStage : uint8_t {
  kAnnotate,   // layouts the user pinned (T.annotate_layout), before any other constraint
  kStrict,     // layouts the op's instruction fixes (T.gemm: the mma.sync / wgmma register layouts)
  kPropagate,  // layouts that follow from known ones (T.reduce, a register-to-register T.copy);
               // repeated with the T.Parallel nests until nothing changes
  kFree,       // nothing decided an argument: the op may give one open fragment argument the default
               // layout (element-wise ops); return true when it did
};
// An operator's vote on an instruction choice that must hold for the whole kernel (wgmma: every
// T.gemm of the kernel, or none), asked before LayoutStage::kStrict.
enum class KernelChoice : uint8_t { kAbstain, kAccept, kRefuse };

// One tile operator (src/op/<op>.cc defines its class and registers one instance per spelling).
class TileOp {
 public:
  TileOp(std::string name, TileOpKind kind) : name_(std::move(name)), kind_(kind) {}
  virtual ~TileOp() = default;
  TileOp(const TileOp&) = delete;
  TileOp& operator=(const TileOp&) = delete;

  const std::string& name() const { return name_; }
  TileOpKind kind() const { return kind_; }

  // Throws SyntaxError/TypeError/ValueError (prefixed with op_error_prefix) on malformed ops.
  virtual void verify(const TileOpNode& op) const = 0;
  // The buffer regions the op reads and writes (pipelining, sync insertion, memory planning on
  // every target). Called on verified ops.
  virtual AccessRegions effects(const TileOpNode& op) const = 0;
  // Layout inference (cuda): the op's constraints at `stage`, read from and added to `ctx`. Returns
  // whether it set a layout (the driver uses it at kFree). The default: no constraint.
  virtual bool infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const { return false; }
  // The op's vote on the kernel-wide instruction choice (see KernelChoice); kAbstain by default.
  virtual KernelChoice propose_layout(const TileOpNode& op, LayoutInference& ctx) const { return KernelChoice::kAbstain; }
  // The target-neutral loop form (loops over scalar loads/stores): the cpu target and the fallback
  // of the others. has_loop_form() is false for ops that exist only as a target's instruction.
  virtual bool has_loop_form() const { return true; }
  virtual Stmt lower_loops(const TileOpNode& op, const LowerContext& ctx) const = 0;

 private:
  std::string name_;
  TileOpKind kind_;
};

// The registry: name -> operator. Registering a name twice replaces the earlier operator.
void register_tile_op(std::unique_ptr<TileOp> op);
// nullptr when unknown.
const TileOp* find_tile_op(const std::string& name);
inline const TileOp* find_tile_op(const TileOpNode& op) { return find_tile_op(op.op); }
// Throws when unknown: "unknown tile op 'x'".
const TileOp& get_tile_op(const std::string& name);
std::vector<std::string> registered_tile_ops();

// The op's kind; false when the op is not registered.
inline bool tile_op_kind(const TileOpNode& op, TileOpKind* kind) {
  const TileOp* t = find_tile_op(op.op);
  if (t) *kind = t->kind();
  return t != nullptr;
}
// True when `op` is a registered operator of kind `kind`.
inline bool is_tile_op(const TileOpNode& op, TileOpKind kind) {
  const TileOp* t = find_tile_op(op.op);
  return t && t->kind() == kind;
}
// Annotations (annotate_layout / annotate_address) only inform the compiler: no code, no effects.
inline bool is_annotation(TileOpKind k) { return k == TileOpKind::kAnnotateLayout || k == TileOpKind::kAnnotateAddress; }
// The operator `op` as its class in op/ (nullptr when unknown or of another class).
template <typename T>
const T* tile_op_as(const TileOpNode& op) {
  return dynamic_cast<const T*>(find_tile_op(op.op));
}

// Static registration from an op's .cc file: `TileOpRegistration reg(std::make_unique<CopyOp>("copy"));`
struct TileOpRegistration {
  explicit TileOpRegistration(std::unique_ptr<TileOp> op) { register_tile_op(std::move(op)); }
};

// Prefixes an error message with the op's source location: "kernel.py:12:5: T.copy: ...".
std::string op_error_prefix(const TileOpNode& op);

}  // namespace tl
