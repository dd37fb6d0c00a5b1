// The simulator's race checker (strict mode). Happens-before is tracked with vector clocks: one
// entry per (core of the block, pipe) — 3 cores x 7 pipes — plus generation counters of the
// all-core barriers (sync_all, mode-0 cross flags), which are the only edges between blocks.
// Every tile instruction and scalar access is a set of byte intervals ("box") in one memory of
// one core (GM: one shared space, keyed by host address). Two accesses conflict when their boxes
// overlap and one writes; a conflict not ordered by happens-before is a race (RAW/WAR/WAW), reported
// as tl::SyncError naming the memory, byte range, both pipes, both source locations and the core.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"
#include "sim/machine_model.h"

namespace tl::sim {

constexpr int kCoresPerBlock = 3;  // AIC, AIV0, AIV1
constexpr int kClockSize = kCoresPerBlock * kNumPipes;

struct VClock {
  uint32_t c[kClockSize] = {};
  uint32_t sync_gen = 0;      // sync_all barriers completed before this point
  uint32_t kind_gen[2] = {};  // mode-0 (all cores of a kind) barriers completed before this point
  void join(const VClock& o) {
    for (int i = 0; i < kClockSize; ++i) c[i] = c[i] > o.c[i] ? c[i] : o.c[i];
    sync_gen = sync_gen > o.sync_gen ? sync_gen : o.sync_gen;
    for (int k = 0; k < 2; ++k) kind_gen[k] = kind_gen[k] > o.kind_gen[k] ? kind_gen[k] : o.kind_gen[k];
  }
};
inline int clock_index(int core_in_block, Pipe p) { return core_in_block * kNumPipes + static_cast<int>(p); }

// A rectangular set of bytes: rows of `row_bytes` contiguous bytes, repeated over up to 3 outer
// dimensions with byte strides. Addresses are memory offsets (GM: host addresses).
struct Box {
  int64_t base = 0;
  int64_t row_bytes = 0;
  int nd = 0;  // outer dimensions
  int64_t ext[3] = {1, 1, 1};
  int64_t stride[3] = {0, 0, 0};
  int64_t lo() const { return base; }
  int64_t hi() const;  // one past the last byte
  int64_t rows() const;
};
// Builds a box from element extents/strides (innermost last); merges contiguous dimensions.
Box make_box(int64_t base, int64_t elem_bytes, int nd, const int64_t* ext, const int64_t* stride);
// First overlapping byte range of two boxes, or false.
bool box_overlap(const Box& a, const Box& b, int64_t* lo, int64_t* hi);
// True when every byte of `inner` is in `outer` (only decided for equal layouts; false otherwise).
bool box_contains(const Box& outer, const Box& inner);

// Where an access comes from, for messages.
struct AccessSite {
  Span span;
  std::string text;  // "T.copy(A, A_L1)", "scalar load of x_ub", ...
};

struct AccessInfo {
  Mem mem = Mem::kGM;
  int space = -1;     // private memories: physical core index; GM: -1; GM workspace: its core group's AIC index
  Box box;
  bool write = false;
  bool atomic = false;  // atomic adds do not conflict with each other
  int block = 0;      // logical block
  int core = 0;       // core in block: 0 = AIC, 1/2 = AIV
  CoreKind kind = CoreKind::kAIC;
  Pipe pipe = Pipe::kS;
  uint32_t epoch = 0;
  uint32_t sync_passed = 0;  // sync_all barriers this core had passed
  uint64_t seq = 0;          // program (issue) order within the core, for messages
  const AccessSite* site = nullptr;
  std::string buffer;        // buffer name (for GM: the tensor)
  int64_t buffer_base = 0;   // byte address of the buffer's element 0 (for relative ranges)
};

class RaceChecker {
 public:
  // `kind_barrier_snapshot(block, core, gen)` returns the clock the core published at its
  // `gen`-th mode-0 barrier (for ordering across blocks), or null.
  struct BarrierLog {
    std::vector<std::vector<VClock>> snaps;  // [block * 3 + core][gen - 1]
  };
  explicit RaceChecker(const BarrierLog* log) : log_(log) {}

  // Checks `a` (executing with clock `vc`) against earlier conflicting accesses; throws SyncError
  // on a race. `record` then remembers it (an instruction checks all its operands first, so its own
  // read and write of one buffer do not conflict).
  // A write-after-write on GM between different blocks, kept for the caller when `check` is given a
  // list: the caller compares the bytes, since two blocks writing identical bytes (a persistent
  // kernel whose last wave repeats tiles) is harmless on the hardware.
  struct DeferredWaw {
    AccessInfo first, second;
    int64_t lo = 0, hi = 0;
  };
  // With `collect_all`, every race of `a` goes to `deferred` (a debug read: T.print / T.dump_tensor).
  void check(const AccessInfo& a, const VClock& vc, std::vector<DeferredWaw>* deferred = nullptr,
             bool collect_all = false);
  void record(const AccessInfo& a, const VClock& vc);
  // The race message for two conflicting accesses; `report` throws it as a SyncError.
  std::string describe(const AccessInfo& prev, const AccessInfo& cur, int64_t lo, int64_t hi) const;
  [[noreturn]] void report(const AccessInfo& prev, const AccessInfo& cur, int64_t lo, int64_t hi) const;
  void access(const AccessInfo& a, const VClock& vc) {
    check(a, vc);
    record(a, vc);
  }
  // Forgets the private memories of a physical core (a new logical block starts there).
  void reset_space(int space);
  size_t live_records() const { return live_; }
  // Earlier accesses examined by `check` so far (how the checker's work grows with a program).
  uint64_t comparisons() const { return comparisons_; }

 private:
  struct Record {
    AccessInfo info;
    bool alive = true;
  };
  struct Page {
    std::vector<int32_t> reads, writes;
  };
  struct Shadow {
    int shift = 12;
    std::unordered_map<int64_t, Page> pages;
  };
  bool ordered(const AccessInfo& prev, const AccessInfo& cur, const VClock& vc) const;
  Shadow& shadow(Mem mem, int space);
  int32_t new_record(const AccessInfo& a);

  const BarrierLog* log_;
  std::vector<int64_t> pages_;  // scratch: the pages of the access being checked / recorded
  uint64_t comparisons_ = 0;
  std::vector<Record> records_;
  std::vector<int32_t> free_;
  size_t live_ = 0;
  Shadow gm_;
  std::unordered_map<int64_t, Shadow> private_;  // key: space * kNumMems + mem
  std::unordered_map<int, std::vector<int32_t>> space_records_;  // private records per core
};

}  // namespace tl::sim
