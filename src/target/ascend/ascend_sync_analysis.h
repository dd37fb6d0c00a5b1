// Analysis half of automatic intra-core synchronisation (ascend_insert_sync.h).
//
// The kernel is seen per core kind as a tree of sequences, loops, branches and leaves (tile
// instructions with their pipe and accessed regions, scalar accesses on pipe S, and the sync ops
// already present: the user's, T.gemm_v0's and the ones inserted so far). An abstract execution of
// that tree mirrors the simulator's happens-before rules exactly (race_checker.h): static vector
// clocks per pipe, in-order pipes ordered by program order, the vector pipe only by
// pipe_barrier(v), flags carrying the setter's clock, barrier_all joining everything, the scalar
// unit's waits carried by the instructions it issues afterwards. Loops are unrolled a few times
// (more when buffers are indexed `k % s`), so accesses of earlier iterations meet later ones.
// Every conflicting pair of accesses (same memory, overlapping bytes, one write) that is not
// ordered yields a Need: a pipe_barrier, an adjacent set/wait pair hoisted to the outermost
// position after the producer, or a loop-carried flag (pre-armed before the loop, waited before the
// consumer's statement, set after the producer's statement, drained after the loop; with `distance`
// event ids rotating by iteration for ping-pong buffers). Reusing a flag id before its previous
// wait is ordered before the new set (a double set on hardware) yields a back-edge Need.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "sim/machine_model.h"

namespace tl::ascend_sync {

struct AccessT {
  sim::Mem mem = sim::Mem::kUB;
  Buffer buffer;
  int64_t addr = -1, bytes = 0;  // on-chip placement (planned); GM: -1
  std::vector<Range> region;     // empty: the whole buffer
  bool write = false;
};

enum class LeafKind { kInstr, kSetFlag, kWaitFlag, kBarrier, kBarrierAll, kOther };

struct SNode {
  enum Kind { kSeq, kLoop, kIf, kLeaf } kind = kSeq;
  const StmtNode* stmt = nullptr;  // the IR statement new syncs are anchored to
  bool in_scope = false;           // inside an explicit T.Scope of the analysed kind
  std::vector<std::unique_ptr<SNode>> children;  // seq: in order; loop: one seq; if: then, else
  // kLoop
  Var var;
  Expr min;
  int64_t extent = -1;  // -1: unknown
  int unroll = 2;
  // kLeaf
  LeafKind leaf = LeafKind::kInstr;
  sim::Pipe pipe = sim::Pipe::kS, src = sim::Pipe::kS, dst = sim::Pipe::kS;
  Expr id;
  bool inserted = false;  // a sync this pass inserted
  bool operand = false;   // scalar loads of the next instruction's operands (ordered before it)
  std::vector<AccessT> accesses;
};

struct Need {
  enum Kind { kBarrier, kPair, kCarried, kBarrierAll } kind = kPair;
  sim::Pipe src = sim::Pipe::kS, dst = sim::Pipe::kS;
  const StmtNode* before = nullptr;  // barrier / pair / carried wait: inserted before this statement
  bool before_in_scope = false;
  const StmtNode* after = nullptr;   // carried set: inserted after this statement
  bool after_in_scope = false;
  const SNode* loop = nullptr;       // carried: the loop; pair / flag reuse: the innermost loop around it
  int distance = 1;
  int before_index = 0, after_index = 0;  // carried: positions of the anchors in the loop body
  bool reuse = false;                // a flag id reused before its previous wait is ordered (`before`: the set)
  bool aliased = false;              // the two accesses are of different buffers placed on shared bytes
  std::string why;                   // for dumps: "RAW on A_L1 (MTE2 -> MTE1)"
};

struct KernelFacts {
  std::map<const BufferNode*, int64_t> address;  // planned / pinned on-chip addresses
  std::map<const VarNode*, Expr> lets;           // let-bound values, for evaluating regions
  const sim::MachineModel* model = nullptr;
};

KernelFacts collect_facts(const PrimFunc& f, const sim::MachineModel& model);

// The tree of `kind`'s statements; `inserted` marks statements this pass created.
std::unique_ptr<SNode> build_tree(const PrimFunc& f, sim::CoreKind kind, const KernelFacts& facts,
                                  const std::set<const StmtNode*>& inserted);

// The syncs still missing for the tree to be race-free under the simulator's rules.
std::vector<Need> find_needs(const SNode& root, const KernelFacts& facts);

// Evaluates an integer expression with the given variable values (lets expanded); false when some
// variable is unknown or a memory load is involved.
bool eval_with(const Expr& e, const std::map<const VarNode*, int64_t>& vals, const KernelFacts& facts, int64_t* out);

}  // namespace tl::ascend_sync
