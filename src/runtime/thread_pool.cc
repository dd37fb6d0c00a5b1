#include "runtime/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "ir/error.h"

namespace tl {

namespace {

thread_local bool tls_on_worker = false;
// True while this thread runs blocks of a launch (workers always; the caller during its launch).
thread_local bool tls_in_block = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Spins until pred() holds or `budget_ns` passed; returns pred().
template <typename Pred>
bool spin_until(Pred pred, int64_t budget_ns) {
  if (pred()) return true;
  if (budget_ns <= 0) return false;
  int64_t deadline = now_ns() + budget_ns;
  for (int i = 0;; ++i) {
    for (int k = 0; k < 32; ++k) {
      if (pred()) return true;
      cpu_relax();
    }
    if (now_ns() > deadline) return pred();
  }
}

}  // namespace

struct ThreadPool::Worker {
  ThreadPool* pool;
  int index;
  uint32_t first_seen;  // the generation when the worker was created: later ones are its jobs
  pthread_t thread;
};

int ThreadPool::hardware_threads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

ThreadPool::ThreadPool(int num_workers, size_t stack_bytes) : stack_bytes_(stack_bytes) {
  // Spin for a short while after a launch (TL_POOL_SPIN_US, default 50 us): long enough to catch
  // back-to-back launches, short enough not to steal cores from the rest of the machine.
  const char* spin = std::getenv("TL_POOL_SPIN_US");
  spin_ns_ = (spin ? std::atoll(spin) : 50) * 1000;
  // The launching thread runs blocks too, so one hardware thread is left for it.
  add_workers(num_workers >= 0 ? num_workers : std::max(0, hardware_threads() - 1));
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  generation_.fetch_add(2);
  generation_.notify_all();
  for (Worker* w : workers_) {
    pthread_join(w->thread, nullptr);
    delete w;
  }
}

ThreadPool& ThreadPool::global() {
  // Never destroyed: kernels may still be running in other threads during interpreter shutdown.
  static ThreadPool* pool = new ThreadPool();
  return *pool;
}

bool ThreadPool::on_worker_thread() { return tls_on_worker; }

void ThreadPool::add_workers(int count) {
  for (int i = 0; i < count; ++i) {
    auto* w = new Worker{this, static_cast<int>(workers_.size()), generation_.load(), {}};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, stack_bytes_);
    int rc = pthread_create(&w->thread, &attr, &ThreadPool::worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
      delete w;
      if (workers_.empty()) throw_error<ResourceError>("cannot start cpu worker threads: ", std::strerror(rc));
      return;  // run with the workers we have
    }
    workers_.push_back(w);
  }
}

void* ThreadPool::worker_main(void* arg) {
  auto* w = static_cast<Worker*>(arg);
  tls_on_worker = true;
  tls_in_block = true;
  w->pool->worker_loop(w->index, w->first_seen);
  return nullptr;
}

void ThreadPool::run_blocks() {
  const int64_t n = n_;
  for (;;) {
    int64_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n) return;
    if (!cancel_ || !cancel_->load(std::memory_order_relaxed)) body_(ctx_, i);
    if (finished_.fetch_add(1) + 1 == n && caller_waiting_.load()) {
      finished_.notify_all();
    }
  }
}

void ThreadPool::worker_loop(int index, uint32_t seen) {
  for (;;) {
    // Wait for a published generation (even) other than the last one handled.
    auto fresh = [&] {
      uint32_t g = generation_.load(std::memory_order_acquire);
      return g != seen && (g & 1u) == 0;
    };
    if (!spin_until(fresh, spin_ns_)) {
      for (;;) {
        sleepers_.fetch_add(1);
        uint32_t g = generation_.load();
        if (g == seen || (g & 1u)) generation_.wait(g);
        sleepers_.fetch_sub(1);
        if (fresh()) break;
      }
    }
    if (stop_.load()) return;
    uint32_t g = generation_.load();
    if ((g & 1u) || g == seen) continue;
    // Enter the job, then confirm it is still the one published (see launch protocol below).
    active_.fetch_add(1);
    if (generation_.load() != g) {
      active_.fetch_sub(1);
      continue;
    }
    seen = g;
    if (index < participants_) run_blocks();
    active_.fetch_sub(1);
  }
}

void ThreadPool::parallel_for(int64_t n, TLParallelBody body, void* ctx, int max_threads,
                              const std::atomic<bool>* cancel) {
  if (n <= 0) return;
  // Inline: one block, a nested launch from inside a block, or a single thread allowed.
  if (n == 1 || tls_in_block || max_threads == 1 || workers_.empty()) {
    for (int64_t i = 0; i < n; ++i)
      if (!cancel || !cancel->load(std::memory_order_relaxed)) body(ctx, i);
    return;
  }
  std::lock_guard<std::mutex> lock(launch_mutex_);
  // Workers taking part besides the caller.
  int want = max_threads > 0 ? max_threads - 1 : num_workers();
  if (want > num_workers()) add_workers(std::min(want, 1024) - num_workers());

  // Launch protocol: mark the job slot as being written (odd generation), wait until no worker is
  // inside the previous job, write the slot, publish (even generation). A worker enters by
  // incrementing active_ and re-checking the generation, so it never reads a half-written slot.
  uint32_t g = generation_.fetch_add(1) + 1;  // odd
  for (int spins = 0; active_.load() != 0; ++spins) {
    if (spins < 4096) cpu_relax();
    else sched_yield();  // a worker was preempted inside the previous job
  }
  body_ = body;
  ctx_ = ctx;
  n_ = n;
  participants_ = static_cast<int>(std::min<int64_t>(std::min(want, num_workers()), n - 1));
  cancel_ = cancel;
  next_.store(0, std::memory_order_relaxed);
  finished_.store(0, std::memory_order_relaxed);
  caller_waiting_.store(0);
  generation_.store(g + 1, std::memory_order_seq_cst);  // even: published
  if (sleepers_.load() > 0) generation_.notify_all();

  // The caller works too, then waits for blocks still running on workers: spin a little, then
  // sleep until the last block wakes it.
  tls_in_block = true;
  run_blocks();
  tls_in_block = false;
  auto all_done = [&] { return finished_.load(std::memory_order_acquire) >= n; };
  if (!spin_until(all_done, spin_ns_)) {
    caller_waiting_.store(1);
    for (;;) {
      int64_t f = finished_.load();
      if (f >= n) break;
      finished_.wait(f);
    }
  }
}

}  // namespace tl
