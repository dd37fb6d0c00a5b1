// The cuda emulator's interpreter (internal to src/target/cuda/emulator*.cc, not installed; the
// entry point is emulate_cuda in emulator.h, whose comment describes what is emulated and checked).
//
// Its member functions are defined by concern:
//   emulator_interpreter.cc  the grid and block loops, variables, expressions and statements
//   emulator_memory.cc       buffer addressing, bounds checks and the shared-memory race checker
//   emulator_builtins.cc     barriers, cp.async, vector/cast copies, device_assert, atomics and
//                            tl::allreduce (the builtin and device calls a statement makes)
//   emulator_gemm.cc         the mma.sync (include/tl/cuda/gemm.h) and wgmma (wgmma.h) GEMM contracts
//   emulator_async.cc        warp-specialized kernels: the producer and consumer roles, mbarriers,
//                            TMA copies (include/tl/cuda/tma.h) and the checks of their ordering
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "target/cuda/emulator.h"
#include "target/cuda/emulator_values.h"

namespace tl::cuda_emu {

// What a shared-memory byte remembers since the last barrier, for the race checker.
struct ByteState {
  int32_t w_thread = -1;
  int64_t w_epoch = -1;
  bool pending_async = false;
  int32_t r_thread = -1;
  int64_t r_epoch = -1;
  bool r_multi = false;
  // Warp-specialized kernels: the mbarrier (shared byte offset) and phase a TMA copy that wrote the
  // byte completed on, and the (thread, clock) of each thread that read it since.
  int64_t tma_bar = -1;
  int64_t tma_phase = 0;
  // A wgmma with fence.proxy.async read the byte since its last thread store: later wgmma calls
  // without the fence may read it too (the fence ordered that store before the async proxy).
  bool proxy_fenced = false;
  std::vector<std::pair<int32_t, int32_t>> readers;
};

// An mbarrier (include/tl/cuda/tma.h): a phase completes when its pending arrivals reach zero and
// no expected transaction byte is outstanding. For the ordering checks, each phase remembers the
// (thread, clock) of its arrivals: a thread that waits for the phase learns them.
struct MBarrier {
  int64_t expected = 0, pending = 0, tx = 0, phase = 0;
  std::vector<std::pair<int32_t, int32_t>> arrivals;
  std::map<int64_t, std::vector<std::pair<int32_t, int32_t>>> released;  // completed phase -> arrivals
};

// The two warp roles of a warp-specialized kernel, run as coroutines (one std::thread each, one
// running at a time): a role runs until it waits for an mbarrier phase that has not completed,
// then hands over to the other. The producer starts (it runs as far ahead as the stages allow).
struct RoleScheduler {
  std::mutex mu;
  std::condition_variable cv;
  int running = -1;
  bool done[2] = {false, false};
  bool abort = false;
  std::exception_ptr error;
  int64_t progress = 0;              // mbarrier arrivals and completed transactions so far
  int64_t blocked_at[2] = {-1, -1};  // `progress` when the role last blocked
  std::vector<char> masks[2];
};

// A device function's spelling split into its name and template arguments:
// "tl::gemm_ss<64, 64, ...>" -> {"tl::gemm_ss", {"64", "64", ...}}.
struct Template {
  std::string name;
  std::vector<std::string> args;
};
Template parse_template(const std::string& callee);

// The IR type of a device-header element type name ("tl::half_t", "float", ...).
DataType type_of_name(const std::string& n);

class Emulator {
 public:
  Emulator(const PrimFunc& f, const std::vector<TLArg>& args, const EmulatorDevice& dev = {})
      : f_(f), args_(args), dev_(dev) {}

  EmulatorReport run();
  const std::vector<std::string>& races() const { return report_.races; }

 private:
  // ---- grid and blocks (emulator_interpreter.cc) ----
  static void rasterize(int64_t panel, bool row, const std::vector<int64_t>& g, int64_t x, int64_t y, int64_t* bx,
                        int64_t* by);
  void exec_top(const Stmt& s);  // lets and kernels at the top of the function, in order
  void run_kernel(const KernelLaunchNode& k);
  void run_block(const KernelLaunchNode& k, const std::vector<int64_t>& tdims);

  // ---- variables, expressions, statements (emulator_interpreter.cc) ----
  Val var_value(const VarNode* v, int64_t t);
  Val eval(const Expr& e, int64_t t);  // the one tree walker (ir/eval.h) over thread t's values
  Val unary(const UnaryNode* u, const Val& a);
  Val binary(const BinaryNode* b, const Val& x, const Val& y);
  Val cast(const CastNode* c, const Val& x) { return convert(c->dtype, c->value.dtype(), x); }
  // `x` of type `from` as type `to` (rounding once; float -> int saturates, as cvt does).
  static Val convert(DataType to, DataType from, const Val& x);
  Val call(const CallNode* c, int64_t t);
  friend struct EmuDomain;
  void exec(const Stmt& s, const std::vector<char>& act);

  // ---- memory (emulator_memory.cc) ----
  Mem mem_of(const Buffer& b, int64_t t);
  int64_t flat_index(const Buffer& b, const std::vector<Expr>& idx, int64_t t);
  void check_range(const Mem& m, int64_t off, int64_t n, const char* what);
  void race(const std::string& msg);
  void shared_read(const Mem& m, int64_t off, int64_t n, int64_t t);
  void shared_write(const Mem& m, int64_t off, int64_t n, int64_t t, bool async);
  Val load(const Buffer& b, const std::vector<Expr>& idx, int64_t t);
  void store(const Buffer& b, const std::vector<Expr>& idx, const Val& v, int64_t t);
  Val address(const Expr& e, int64_t t);
  DataType address_type(const Expr& e);
  // Atomic read-modify-write (`kind` add/max/min/store/load) of the element `ref` (a BufferLoad)
  // by thread t; returns the old value. Threads of the block run it one after the other.
  Val atomic_update(const std::string& kind, const Expr& ref, const Val& v, int64_t t);

  // ---- builtin and device calls (emulator_builtins.cc) ----
  void barrier(const std::vector<char>& act, const char* what);
  void evaluate(const CallNode* c, const std::vector<char>& act, const Span& span);
  void collective_store(const BufferStoreNode* st, const CallNode* c, const std::vector<char>& act);

  // ---- warp roles, mbarriers and TMA (emulator_async.cc) ----
  void run_roles(const IfThenElseNode& roles, const std::vector<char>& act);
  void handoff(int to);
  void block_until(const std::function<bool()>& ready, const char* what);
  bool whole_block(const std::vector<char>& act) const;
  void async_builtin(const CallNode* c, const std::vector<char>& act);
  MBarrier& mbarrier_at(const Expr& addr, const std::vector<char>& act, int64_t* key);
  void mbarrier_arrive(MBarrier& b, int64_t t, int64_t tx);
  // The box of a cuda.tma_load (rank at argument 4) or cuda.tma_store (rank at 3): its tensor, swizzle,
  // element bytes and extents (innermost first), checked as the hardware requires; then, per thread,
  // its shared byte (aligned for the swizzle) and where each element lies in the tensor.
  struct TmaBox {
    const Buffer* g = nullptr;
    int64_t swz = 0, rank = 0, eb = 0, total = 1;
    size_t coord_at = 0;  // the call's first coordinate argument
    std::vector<int64_t> box;
  };
  struct TmaPlace {
    int64_t shared = 0;  // the shared buffer's first byte
    std::vector<int64_t> coord, dims, strides;
  };
  TmaBox tma_box(const CallNode* c, size_t rank_at, const char* op) const;
  TmaPlace tma_place(const CallNode* c, const TmaBox& b, const Val& smem, int64_t t, const char* what);
  static int64_t tma_element(const TmaBox& b, const TmaPlace& p, int64_t e, int64_t* goff, bool* in);
  void tma_load(const CallNode* c, const std::vector<char>& act);
  void tma_write(const Mem& m, int64_t abs, int64_t t, int64_t bar, int64_t phase);
  // TMA stores (cp.async.bulk.tensor shared -> global), their bulk groups, fence.proxy.async.
  void tma_store(const CallNode* c, const std::vector<char>& act);
  void bulk_builtin(const CallNode* c, const std::vector<char>& act);
  void bulk_recompute();
  void ws_read_check(ByteState& s, int64_t b, const Mem& m, int64_t t);

  // ---- GEMM contracts (emulator_gemm.cc) ----
  void gemm(const CallNode* c, const Template& tp, const std::vector<char>& act);
  void wgmma_gemm(const CallNode* c, const Template& tp, const std::vector<char>& act);

  const PrimFunc& f_;
  const std::vector<TLArg>& args_;
  EmulatorReport report_;
  EmulatorDevice dev_;
  void dist_wait(const CallNode* c, const std::vector<char>& act);  // tl.dist.wait (emulator_builtins.cc)
  int64_t threads_ = 1;
  int64_t smem_bytes_ = 0;
  std::vector<uint8_t> smem_;
  std::vector<ByteState> bytes_;
  int64_t epoch_ = 0;
  std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> groups_;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> open_;
  std::unordered_map<const VarNode*, std::vector<Val>> vars_;
  std::unordered_map<const VarNode*, Val> uniform_;
  std::unordered_map<const BufferNode*, Mem> global_, shared_;
  std::unordered_map<const BufferNode*, std::vector<std::vector<uint8_t>>> local_;
  std::unordered_map<const BufferNode*, int64_t> smem_offset_;
  std::vector<std::pair<int64_t, int64_t>> wgmma_inflight_;  // shared byte ranges an in-flight wgmma reads
  // The wgmma groups still in flight, oldest first (emulator_gemm.cc): the shared byte ranges each
  // reads and the register bytes (accumulators, register A) it owns, per thread.
  struct WgmmaGroup {
    std::vector<std::pair<int64_t, int64_t>> reads;
    std::vector<std::pair<const uint8_t*, const uint8_t*>> regs;  // [lo, hi) of some thread's registers
    bool issue_only = false;  // kPending = -1: its reads last until the wait that retires it
  };
  std::vector<WgmmaGroup> wgmma_groups_;
  // Keeps the newest `pending` groups in flight (wgmma.wait_group) and recomputes wgmma_inflight_.
  // An issue-only group's shared reads count as reads of the barrier epoch that retires it, by all
  // the GEMM's warpgroups: a wait retires only the waiting warpgroup's wgmma, so a thread's write of
  // those bytes needs a barrier after the wait (warp_specialize's overlapped loop with P in shared
  // memory, ws_overlap.h), even where barriers (cross-warp reductions) ran while it was in flight.
  void wgmma_retire(size_t pending);
  // A thread's access to registers an in-flight wgmma owns (read or written before its wait).
  void check_wgmma_registers(const Mem& m, int64_t off, int64_t n, int64_t t);
  // Warp-specialized kernels (emulator_async.cc).
  int64_t producer_threads_ = 0;
  bool ws_ = false;
  std::map<int64_t, MBarrier> mbars_;              // by shared byte offset
  std::vector<int32_t> clock_;                     // per thread: mbarrier arrivals so far
  std::vector<std::vector<int32_t>> known_;        // per thread: latest released clock of each thread
  std::vector<std::map<int64_t, int64_t>> seen_;   // per thread: mbarrier -> phases known complete
  int64_t wgmma_issuer_ = -1;                      // the thread a wgmma's operand reads count for
  std::unique_ptr<RoleScheduler> sched_;
  int cur_role_ = -1;                              // 0 consumer, 1 producer, -1 outside the roles
  // Persistent kernels run this many CTAs (so that each loops over several tiles).
  static constexpr int64_t kPersistentCtas = 3;
  int64_t num_ctas_ = 1;
  std::map<int64_t, int64_t> named_bars_;  // arrivals of the current generation of named barriers
  // TMA stores: per thread, the shared bytes [lo, hi) its stores read, in bulk groups not yet
  // committed (bulk_open_) and committed but not yet waited for (bulk_groups_, oldest first);
  // bulk_pending_ is every such range with its thread (a write there is a race).
  struct BulkRead {
    Mem mem;
    int64_t off = 0, n = 0, lo = 0;
  };
  std::vector<std::vector<BulkRead>> bulk_open_;
  std::vector<std::vector<std::vector<BulkRead>>> bulk_groups_;
  std::vector<std::tuple<int64_t, int64_t, int64_t>> bulk_pending_;
};

}  // namespace tl::cuda_emu
