#include "target/cpu/aot.h"

namespace tl {

std::string aot_cpu_launch_source(const std::string& symbol) {
  // Blocks are handed out through an atomic counter to threads started for each grid (no
  // persistent pool: the library owns no threads between calls). Printing is serialized.
  return R"(
// ---- export_library: the cpu runtime (src/target/cpu/aot.cc) ----
#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

static void tl_aot_set_error(const char* message);
static std::atomic<int32_t> tl_aot_num_threads{0};

namespace {
struct TLAotPool {
  std::mutex mu;
  bool failed = false;
  std::string error;
};

void tl_aot_parallel_for(void*, int64_t n, TLParallelBody body, void* ctx) {
  int64_t threads = tl_aot_num_threads.load();
  if (threads <= 0) threads = static_cast<int64_t>(std::thread::hardware_concurrency());
  if (threads > n) threads = n;
  if (threads <= 1) {
    for (int64_t i = 0; i < n; ++i) body(ctx, i);
    return;
  }
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) body(ctx, i);
  };
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads - 1));
  for (int64_t t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (std::thread& w : workers) w.join();
}

void tl_aot_report_error(void* pool, const char* message) {
  TLAotPool* p = static_cast<TLAotPool*>(pool);
  std::lock_guard<std::mutex> lock(p->mu);
  if (!p->failed) {
    p->failed = true;
    p->error = message;
  }
}

std::mutex tl_aot_print_mu;
int tl_aot_print(void*, const char* text) {
  std::lock_guard<std::mutex> lock(tl_aot_print_mu);
  int r = fputs(text, stdout);
  fflush(stdout);
  return r < 0 ? -1 : 0;
}
}  // namespace

static int32_t tl_aot_launch(const TLArg* args, int32_t num_args, void*) {
  TLAotPool pool;
  TLRuntimeAPI api{TL_CPU_ABI_VERSION, &pool, tl_aot_parallel_for, tl_aot_report_error, tl_aot_print};
  int32_t rc = tl_kernel_entry(args, num_args, &api);
  if (rc != 0 || pool.failed) {
    tl_aot_set_error(pool.failed ? pool.error.c_str() : "the kernel failed");
    return 1;
  }
  return 0;
}

extern "C" __attribute__((visibility("default"))) void )" + symbol + R"(_set_num_threads(int32_t num_threads) {
  tl_aot_num_threads.store(num_threads < 0 ? 0 : num_threads);
}
)";
}

}  // namespace tl
