#include "target/cpu/module.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "ir/error.h"
#include "runtime/distributed.h"
#include "runtime/thread_pool.h"
#include "target/cpu/host_isa.h"

namespace tl {

namespace {

// Per-launch state behind TLRuntimeAPI::pool: the pool, the thread cap and the first error.
struct CpuLaunch {
  ThreadPool* pool = nullptr;
  int max_threads = 0;
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::string error;
};

void api_parallel_for(void* launch, int64_t n, TLParallelBody body, void* ctx) {
  auto* l = static_cast<CpuLaunch*>(launch);
  l->pool->parallel_for(n, body, ctx, l->max_threads, &l->failed);
}

void api_report_error(void* launch, const char* message) {
  auto* l = static_cast<CpuLaunch*>(launch);
  std::lock_guard<std::mutex> lock(l->mu);
  if (l->failed.load()) return;  // the first error wins
  l->error = message ? message : "(no message)";
  l->failed.store(true);
}

std::mutex& print_mutex() {
  static std::mutex m;
  return m;
}

int api_print(void*, const char* text) {
  std::lock_guard<std::mutex> lock(print_mutex());
  int n = std::fputs(text ? text : "", stdout);
  std::fflush(stdout);
  return n;
}

class CpuKernelModule : public KernelModule {
 public:
  CpuKernelModule(void* handle, TLKernelEntry entry, std::string path, std::string name, int num_threads)
      : handle_(handle), entry_(entry), path_(std::move(path)), name_(std::move(name)), num_threads_(num_threads) {
    dist_slot_ = dlsym(handle, "tl_dist_ctx");  // present in kernels that use distributed operators
  }
  ~CpuKernelModule() override {
    if (handle_) dlclose(handle_);
  }

  void launch(const std::vector<TLArg>& args, const LaunchEnv&) override {
    if (dist_slot_) {
      uint64_t gen = 0;
      DistContext c = dist_context_for_launch(name_, &gen);
      if (gen != dist_generation_) {
        std::memcpy(dist_slot_, &c, sizeof c);
        dist_generation_ = gen;
      }
    }
    CpuLaunch l;
    l.pool = &ThreadPool::global();
    l.max_threads = num_threads_;
    TLRuntimeAPI api{TL_CPU_ABI_VERSION, &l, &api_parallel_for, &api_report_error, &api_print};
    int32_t rc = 0;
    try {
      rc = entry_(args.data(), static_cast<int32_t>(args.size()), &api);
    } catch (const std::exception& e) {
      throw_error<RuntimeError>("kernel '", name_, "' threw an exception: ", e.what());
    } catch (...) {
      throw_error<RuntimeError>("kernel '", name_, "' threw an unknown exception");
    }
    if (l.failed.load()) throw_error<RuntimeError>("kernel '", name_, "' failed: ", l.error);
    if (rc != 0)
      throw_error<RuntimeError>("kernel '", name_, "' returned error code ", rc, " without a message",
                                rc == -1 ? " (emitted kernels return -1 when built for another runtime ABI "
                                           "version: clear the kernel cache with tilelang.cache.clear_cache())"
                                         : "");
  }

  AttrMap info() const override {
    AttrMap m;
    m["library"] = Attr(path_);
    m["num_threads"] = Attr(static_cast<int64_t>(num_threads_ > 0 ? num_threads_ : ThreadPool::hardware_threads()));
    return m;
  }

 private:
  void* handle_;
  TLKernelEntry entry_;
  std::string path_, name_;
  int num_threads_;
  void* dist_slot_ = nullptr;     // the kernel's tl_dist_ctx, if any
  uint64_t dist_generation_ = 0;  // the context generation last copied into it
};

}  // namespace

std::unique_ptr<KernelModule> load_cpu_module(const std::string& load_path, const std::string& so_path,
                                              const std::string& kernel_name, int num_threads) {
  void* handle = dlopen(load_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    throw_error<Error>("cannot load kernel '", kernel_name, "' from '", so_path, "': ", err ? err : "unknown error");
  }
  auto entry = reinterpret_cast<TLKernelEntry>(dlsym(handle, "tl_kernel_entry"));
  if (!entry) {
    dlclose(handle);
    throw_error<Error>("'", so_path, "' does not export tl_kernel_entry; it was not built by tilelang's cpu backend");
  }
  // Emitted code may export its ABI version; a mismatch means a stale artifact.
  if (auto* ver = static_cast<const uint32_t*>(dlsym(handle, "tl_kernel_abi_version"))) {
    if (*ver != TL_CPU_ABI_VERSION) {
      dlclose(handle);
      throw_error<Error>("kernel '", kernel_name, "' in '", so_path, "' was built for cpu ABI version ", *ver,
                         " but this runtime speaks version ", TL_CPU_ABI_VERSION,
                         "; clear the kernel cache (tilelang.cache.clear_cache())");
    }
  }
  // The ISA set the object was compiled for (backend.cc appends it): running it on a CPU without
  // one of those features would end the process with SIGILL, so that is a typed error instead. (The
  // cache key holds the set, so this only fires for objects moved between machines by hand.)
  if (auto* sym = static_cast<const char*>(dlsym(handle, "tl_kernel_build_isa"))) {
    const std::string built = sym;  // copied: the object is closed before the message is built
    std::string missing = missing_cpu_features(built, host_cpu_isa());
    if (!missing.empty()) {
      dlclose(handle);
      throw_error<RuntimeError>("kernel '", kernel_name, "' in '", so_path, "' was compiled for the instruction set ",
                                built, " but this CPU lacks ", missing, " (it reports ", host_cpu_isa().names(),
                                "); recompile it on this machine (clear the kernel cache with "
                                "tilelang.cache.clear_cache()) or build with TL_CPU_ISA set lower");
    }
  }
  return std::make_unique<CpuKernelModule>(handle, entry, so_path, kernel_name, num_threads);
}

}  // namespace tl
