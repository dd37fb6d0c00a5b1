// The persistent worker pool that runs a cpu kernel's grid (TLRuntimeAPI::parallel_for).
//
// Each block of the grid is one task, run by the workers and by the launching thread itself.
// Workers have large stacks (block-local arrays live there),
// spin briefly after a launch so back-to-back launches do not pay a wake-up, then sleep on a
// futex. A 1-block grid runs inline on the caller. Launches from several caller threads are
// serialized; a parallel_for issued from inside a block runs inline (no nested parallelism).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "tl/cpu/abi.h"

namespace tl {

class ThreadPool {
 public:
  static constexpr size_t kDefaultStackBytes = size_t(16) << 20;

  // Starts `num_workers` threads (-1: one per hardware thread but one, since the launching thread
  // runs blocks too).
  explicit ThreadPool(int num_workers = -1, size_t stack_bytes = kDefaultStackBytes);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The process-wide pool, created on first use.
  static ThreadPool& global();
  // Hardware threads available to this process (sched affinity aware).
  static int hardware_threads();

  int num_workers() const { return static_cast<int>(workers_.size()); }

  // Runs body(ctx, i) for every i in [0, n) and returns when all have finished. At most
  // `max_threads` threads take part, the caller included (0: all; more than exist: the pool
  // grows). When `cancel` becomes true, blocks not yet started are skipped.
  void parallel_for(int64_t n, TLParallelBody body, void* ctx, int max_threads = 0,
                    const std::atomic<bool>* cancel = nullptr);

  // True on a pool worker thread.
  static bool on_worker_thread();

 private:
  struct Worker;
  static void* worker_main(void* arg);
  void worker_loop(int index, uint32_t seen);
  void add_workers(int count);
  void run_blocks();

  size_t stack_bytes_;
  std::vector<Worker*> workers_;
  std::mutex launch_mutex_;  // one launch at a time

  // The current job. Written by the launching thread only while `generation_` is odd (being
  // written) and no worker is `active_` in it; read by workers after they saw an even value.
  TLParallelBody body_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  int participants_ = 0;
  const std::atomic<bool>* cancel_ = nullptr;
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> finished_{0};
  std::atomic<uint32_t> caller_waiting_{0};

  std::atomic<uint32_t> generation_{0};
  std::atomic<int> active_{0};
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  int64_t spin_ns_;
};

}  // namespace tl
