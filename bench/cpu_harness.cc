// Interim cpu kernel runner for the benchmarks, used only while the runtime (tilelang.jit) is not
// on main: textual IR in, lower_cpu -> codegen_cpu -> g++ -> dlopen, and a small persistent worker
// pool behind TLRuntimeAPI (spin briefly after a launch, then sleep), in the style of the tests of
// tests/cpp/target/cpu. Loaded from Python with ctypes (bench/cpu_harness.py builds it from the
// objects of build/).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ir/parser.h"
#include "target/cpu/codegen.h"
#include "target/cpu/pipeline.h"
#include "tl/cpu/abi.h"

namespace {

thread_local std::string last_error;

class Pool {
 public:
  explicit Pool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
      gen_.fetch_add(1);
    }
    cv_.notify_all();
    for (auto& w : workers_) w.join();
  }
  static void parallel_for(void* pool, int64_t n, TLParallelBody body, void* ctx) {
    auto* p = static_cast<Pool*>(pool);
    if (n <= 1 || p->workers_.empty()) {
      for (int64_t i = 0; i < n; ++i) body(ctx, i);
      return;
    }
    // The previous launch returned only after all its blocks were counted, so done_ may be reset
    // first; next_ last, since a worker still looping in run_blocks takes new blocks from it.
    p->done_.store(0);
    p->body_ = body;
    p->ctx_ = ctx;
    p->n_ = n;
    p->next_.store(0);
    {
      std::lock_guard<std::mutex> g(p->mu_);
      p->gen_.fetch_add(1, std::memory_order_release);
    }
    if (p->sleeping_.load()) p->cv_.notify_all();
    p->run_blocks();
    while (p->done_.load(std::memory_order_acquire) < n) __builtin_ia32_pause();
  }
  std::string errors;

 private:
  void run_blocks() {
    for (int64_t i; (i = next_.fetch_add(1)) < n_;) {
      body_(ctx_, i);
      done_.fetch_add(1, std::memory_order_release);
    }
  }
  void work() {
    uint64_t seen = gen_.load();
    for (;;) {
      auto t0 = std::chrono::steady_clock::now();
      while (gen_.load(std::memory_order_acquire) == seen &&
             std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(100))
        __builtin_ia32_pause();
      if (gen_.load() == seen) {
        std::unique_lock<std::mutex> g(mu_);
        sleeping_.fetch_add(1);
        cv_.wait(g, [&] { return gen_.load() != seen; });
        sleeping_.fetch_sub(1);
      }
      if (stop_) return;
      seen = gen_.load();
      run_blocks();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<uint64_t> gen_{0};
  std::atomic<int> sleeping_{0};
  bool stop_ = false;
  TLParallelBody body_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0;
  std::atomic<int64_t> next_{0}, done_{0};
};

struct Kernel {
  std::string source, so_path;
  void* handle = nullptr;
  TLKernelEntry entry = nullptr;
  double lower_s = 0, compile_s = 0;
};

void report_error(void* pool, const char* msg) {
  auto* p = static_cast<Pool*>(pool);
  if (p->errors.empty()) p->errors = msg;
}
int print(void*, const char* text) { return std::fputs(text, stdout); }

}  // namespace

extern "C" {

const char* tlb_last_error() { return last_error.c_str(); }

// Lowers, emits and builds `tir` into `workdir`; null on failure (tlb_last_error says why).
void* tlb_build(const char* tir, const char* workdir, const char* extra_flags) {
  try {
    auto* k = new Kernel;
    auto t0 = std::chrono::steady_clock::now();
    tl::PrimFunc f = tl::parse_func(tir, "bench.tir");
    tl::PassContext ctx;
    ctx.target = tl::Target::parse("cpu");
    tl::PrimFunc lowered = tl::lower_cpu(f, ctx);
    k->source = tl::codegen_cpu(lowered);
    auto t1 = std::chrono::steady_clock::now();
    std::filesystem::create_directories(workdir);
    std::string cc = std::string(workdir) + "/kernel.cc";
    k->so_path = std::string(workdir) + "/kernel.so";
    std::ofstream(cc) << k->source;
    std::string cmd = "g++";
    for (auto& fl : tl::cpu_compiler_flags(false)) cmd += " '" + fl + "'";
    cmd += std::string(" ") + extra_flags + " '" + cc + "' -o '" + k->so_path + "' 2> '" + workdir + "/log.txt'";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(std::string(workdir) + "/log.txt");
      last_error = "g++ failed: " + std::string((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      delete k;
      return nullptr;
    }
    auto t2 = std::chrono::steady_clock::now();
    k->handle = dlopen(k->so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!k->handle) {
      last_error = dlerror();
      delete k;
      return nullptr;
    }
    k->entry = reinterpret_cast<TLKernelEntry>(dlsym(k->handle, "tl_kernel_entry"));
    k->lower_s = std::chrono::duration<double>(t1 - t0).count();
    k->compile_s = std::chrono::duration<double>(t2 - t1).count();
    return k;
  } catch (const std::exception& e) {
    last_error = e.what();
    return nullptr;
  }
}

const char* tlb_source(void* k) { return static_cast<Kernel*>(k)->source.c_str(); }
const char* tlb_so_path(void* k) { return static_cast<Kernel*>(k)->so_path.c_str(); }
double tlb_lower_seconds(void* k) { return static_cast<Kernel*>(k)->lower_s; }
double tlb_compile_seconds(void* k) { return static_cast<Kernel*>(k)->compile_s; }

void* tlb_pool(int threads) { return new Pool(threads); }

// A TLRuntimeAPI bound to a pool (kept alive by the caller).
void* tlb_api(void* pool) {
  auto* api = new TLRuntimeAPI{};
  api->abi_version = TL_CPU_ABI_VERSION;
  api->pool = pool;
  api->parallel_for = &Pool::parallel_for;
  api->report_error = &report_error;
  api->print = &print;
  return api;
}

// Runs the kernel `reps` times; returns its status (0: success).
int tlb_run(void* k, const TLArg* args, int nargs, void* api, int reps) {
  int rc = 0;
  for (int r = 0; r < reps && rc == 0; ++r)
    rc = static_cast<Kernel*>(k)->entry(args, nargs, static_cast<const TLRuntimeAPI*>(api));
  return rc;
}

}  // extern "C"
