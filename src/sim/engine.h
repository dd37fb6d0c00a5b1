// Internal state of the simulator (see simulator.h for the entry point). A discrete-event engine:
// every core has a scalar front end (S) that runs its bytecode and issues instructions into in-order
// pipe queues; front ends and pipes are agents in one time-ordered event heap, so the effects of
// instructions (applied when they start) happen in simulated-time order across all cores. Values
// are therefore right for any correctly synchronised kernel; the race checker (race_checker.h)
// reports the kernels that are not.
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/race_checker.h"
#include "sim/simulator.h"
#include "sim/tile_exec.h"

namespace tl::sim {

struct Instr {
  BOp kind = BOp::kIssue;
  const InstrTemplate* t = nullptr;
  const BInstr* site = nullptr;
  Operand ops[4];
  int nops = 0;
  bool has_scalar = false;
  double scalar = 0;
  bool init = false;
  bool has_pad = false;
  double pad = 0;
  Pipe p0 = Pipe::kS, p1 = Pipe::kS;
  int64_t id = 0, mode = 2;
  double issue_time = 0;
  VClock issue_vc;
  uint64_t seq = 0;
  std::vector<uint64_t> deps;  // lenient mode: earlier conflicting instructions
};

struct FlagState {
  bool set = false;
  double set_time = 0;
  VClock vc;
  const BInstr* set_site = nullptr;
  bool waited = false;
  uint32_t wait_epoch = 0;
  const BInstr* wait_site = nullptr;
};

struct PipeState {
  std::deque<Instr> q;
  double free = 0;
  double last_end = -1;     // end of the last real instruction (mmad head cycles when idle)
  bool scheduled = false;
  bool blocked = false;     // waiting on a flag or (lenient) an earlier instruction
  VClock vc;
  uint32_t counter = 0;
  double busy = 0;
  uint64_t token = 0;
};

enum class FeState : uint8_t { kIdle, kRun, kWaitFlag, kWaitCross, kDrain, kSyncAll, kLenient, kQueueFull, kDone };
enum class DrainFor : uint8_t { kBarrierAll, kSyncAll, kEnd };

// Lenient mode: instructions issued but possibly not finished, with what they touch.
struct InFlight {
  uint64_t seq = 0;
  Pipe pipe = Pipe::kS;
  bool started = false;
  double end = 0;
  struct Touch {
    int32_t buffer;
    Mem mem;
    Box box;
    bool write;
  };
  std::vector<Touch> touches;
};

struct CrossEntry {
  VClock vc;
  double time = 0;
  const BInstr* site = nullptr;
};

struct Core {
  CoreKind kind = CoreKind::kAIC;
  int index = 0;          // physical core index (slot * 3 + core_in_block)
  int slot = 0;
  int core_in_block = 0;  // 0 AIC, 1 AIV0, 2 AIV1
  bool used = false;      // takes part in blocks (AIV1 is unused with threads=1)
  int block = -1;         // logical block running here (-1 idle)
  // Front end.
  int pc = 0;
  std::vector<Value> frame, locals;
  double s_time = 0;
  FeState fe = FeState::kIdle;
  DrainFor drain = DrainFor::kEnd;
  bool fe_scheduled = false;
  uint64_t fe_token = 0;
  const BInstr* wait_site = nullptr;
  Pipe wait_src = Pipe::kS;
  Pipe full_pipe = Pipe::kS;  // kQueueFull: the pipe whose queue is full
  int64_t wait_id = 0;
  PipeState pipes[kNumPipes];
  VClock issue_vc;        // what the scalar unit's blocking waits established (carried by issued instrs)
  FlagState flags[kNumPipes][kNumPipes][8];
  std::vector<uint8_t> mem[kNumMems];
  std::deque<CrossEntry> cross_avail[16];    // counters: one entry per pending set
  std::deque<CrossEntry> cross_partial[16];  // sets waiting for the partner core(s)
  uint32_t sync_passed = 0;
  double done_time = 0;
  std::deque<InFlight> inflight;
  uint64_t seq = 0;
};

// A chip-level bandwidth resource shared by all cores (HBM, L2), as a FIFO server.
struct SharedLink {
  double free = 0;
  double bytes_per_cycle = 1;
};

class L2Model {
 public:
  explicit L2Model(int64_t capacity) : capacity_(capacity) {}
  // True on a hit; inserts (write-allocate / read-fill) on a miss.
  bool access(uint64_t key, int64_t bytes);

 private:
  int64_t capacity_, used_ = 0;
  std::list<std::pair<uint64_t, int64_t>> lru_;
  std::unordered_map<uint64_t, std::list<std::pair<uint64_t, int64_t>>::iterator> map_;
};

struct TraceEvent {
  int core;
  Pipe pipe;
  double start, dur;
  int block;
  const std::string* name;
};

class Engine {
 public:
  Engine(const Program& p, const std::vector<TLArg>& args, const SimOptions& o);
  SimStats run();

 private:
  friend struct EngineAccess;
  // engine.cc: scheduling, front end, expressions.
  void schedule_fe(Core& c, double t);
  void schedule_pipe(Core& c, Pipe p, double t);
  void start_block(int slot, int block, double t);
  void run_fe(Core& c, double now);
  Value eval(Core& c, int32_t idx);
  int64_t eval_int(Core& c, int32_t idx) { return eval(c, idx).i; }
  Value scalar_access(Core& c, int32_t buffer, const std::vector<int32_t>& indices, bool write, Value v,
                      const BInstr* site);
  Instr make_instr(Core& c, const BInstr& b);
  void resolve_operand(Core& c, const OperandTemplate& ot, Operand* out, const InstrTemplate& t);
  // Where a buffer's elements are for core `c`: the bound global tensor, or the core's on-chip
  // memory at the buffer's address (row-major over its shape, evaluated on `c`).
  struct BufferView {
    std::vector<int64_t> shape, strides;  // in elements
    uint8_t* base = nullptr;
    int64_t addr0 = 0;  // the address the race checker records for element 0
  };
  BufferView buffer_view(Core& c, const SimBuffer& sb);
  bool lenient_wait_fe(Core& c, const BInstr& b, double now);
  void finish_core(Core& c);
  void check_drain(Core& c);
  [[noreturn]] void report_deadlock();
  std::string core_name(const Core& c) const;
  std::string where(const BInstr* b) const;

  // engine_exec.cc: pipes, timing, effects, checking.
  void run_pipe(Core& c, Pipe p, double now);
  void exec_instr(Core& c, Pipe p, Instr& in, double start);
  double instr_cost(Core& c, Pipe p, const Instr& in, double start);
  double gm_transfer(double start, double latency, int64_t bytes, double core_bpc, const Operand& gm, bool write);
  // `debug` (T.print / T.dump_tensor): races are warnings (only printed values can be stale) and the
  // reads are not remembered.
  void check_accesses(Core& c, Pipe p, const Instr& in, const VClock& vc, uint32_t epoch, bool debug = false);
  void record_trace(const Core& c, Pipe p, double start, double dur, const std::string* name);
  void write_trace();

  // engine_sync.cc: flags, barriers, cross-core flags, sync_all.
  void set_flag(Core& c, Pipe src, Pipe dst, int64_t id, double t, const VClock& snap, const BInstr* site);
  bool try_wait_flag(Core& c, Pipe src, Pipe dst, int64_t id, double t, const BInstr* site, double* done,
                     VClock* joined);
  void set_cross(Core& c, int64_t id, int64_t mode, double t, const VClock& snap, const BInstr* site);
  bool try_wait_cross(Core& c, int64_t id, double* t, VClock* joined);
  void arrive_sync_all(Core& c, const BInstr& b);
  VClock pipe_snapshot(const Core& c, Pipe p) const;
  int64_t check_flag_id(int64_t id, const BInstr* site, bool cross) const;

  Core& core_at(int slot, int cib) { return cores_[slot * kCoresPerBlock + cib]; }

  const Program& prog_;
  const MachineModel& model_;
  SimOptions opts_;
  std::vector<TLArg> args_;
  std::vector<Core> cores_;
  int num_slots_ = 0;
  int64_t grid_ = 0;
  int64_t next_block_ = 0;
  int64_t blocks_done_ = 0;
  std::vector<int> slot_cores_left_;
  // GM parameters resolved at launch.
  struct GmInfo {
    uint8_t* ptr = nullptr;
    std::vector<int64_t> shape, strides;
  };
  std::vector<GmInfo> gm_;
  std::vector<std::vector<uint8_t>> ws_;  // GM workspace arena per core group (Program::workspace_bytes)
  std::vector<Value> base_frame_;
  // Event heap.
  struct Event {
    double t;
    uint64_t seq;
    int core;
    int agent;  // pipe index, or kNumPipes for the front end
    uint64_t token;
    bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> heap_;
  uint64_t event_seq_ = 0;
  double now_ = 0;
  // Checking.
  RaceChecker::BarrierLog barrier_log_;
  RaceChecker checker_;
  std::vector<AccessSite> sites_;  // per template, then per scalar-access BInstr
  std::map<std::pair<const BInstr*, bool>, AccessSite> scalar_sites_;  // (instruction, write) -> site
  std::vector<RaceChecker::DeferredWaw> waw_;  // cross-block GM WAWs of the instruction being executed
  std::set<std::pair<const AccessSite*, const AccessSite*>> waw_warned_;
  const BInstr* fe_instr_ = nullptr;  // the instruction the scalar front end is running (its line)
  // sync_all / mode-0 barriers.
  struct Barrier {
    int arrived = 0;
    int mask = 0;
    double last = 0;
    uint32_t gen = 0;
    std::vector<Core*> waiting;
    VClock joined;
  } sync_all_;
  uint32_t kind_gen_[2] = {0, 0};
  // Timing.
  SharedLink hbm_, l2_link_;
  L2Model l2_;
  double makespan_ = 0;
  SimStats stats_;
  std::vector<TraceEvent> trace_;
  std::vector<std::string> trace_names_;
};

}  // namespace tl::sim
