// Test support for the cpu target: build IR, lower it with lower_cpu, emit C++ with codegen_cpu,
// compile it with the system compiler (std::system is fine in tests; the product goes through the
// runtime's process runner), dlopen it, and call tl_kernel_entry with a small TLRuntimeAPI.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ir/builder.h"
#include "ir/printer.h"
#include "target/cpu/codegen.h"
#include "target/cpu/pipeline.h"
#include "tl/cpu/abi.h"
#include "tl/cpu/types.h"

namespace tl::test {

// The runtime side of the ABI, for tests: serial or on a few threads, collecting prints/errors.
class TestRuntime {
 public:
  explicit TestRuntime(int threads = 1) : threads_(threads) {
    api_.abi_version = TL_CPU_ABI_VERSION;
    api_.pool = this;
    api_.parallel_for = &TestRuntime::parallel_for;
    api_.report_error = &TestRuntime::report_error;
    api_.print = &TestRuntime::print;
  }
  const TLRuntimeAPI* api() const { return &api_; }
  std::string errors;
  std::string output;

 private:
  static void parallel_for(void* pool, int64_t n, TLParallelBody body, void* ctx) {
    auto* self = static_cast<TestRuntime*>(pool);
    if (self->threads_ <= 1) {
      for (int64_t i = 0; i < n; ++i) body(ctx, i);
      return;
    }
    std::atomic<int64_t> next{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < self->threads_; ++t)
      ts.emplace_back([&] {
        for (int64_t i; (i = next.fetch_add(1)) < n;) body(ctx, i);
      });
    for (auto& t : ts) t.join();
  }
  static void report_error(void* pool, const char* msg) {
    auto* self = static_cast<TestRuntime*>(pool);
    std::lock_guard<std::mutex> g(self->mu_);
    if (self->errors.empty()) self->errors = msg;
  }
  static int print(void* pool, const char* text) {
    auto* self = static_cast<TestRuntime*>(pool);
    std::lock_guard<std::mutex> g(self->mu_);
    self->output += text;
    return 0;
  }
  int threads_;
  std::mutex mu_;
  TLRuntimeAPI api_{};
};

// objdump -d of the functions of a shared object whose (demangled) names start with `symbol`
// (after the return type of a function template instance); ""
// when objdump is not installed.
inline std::string objdump_function(const std::string& so, const std::string& symbol) {
  std::string cmd = "objdump -d --no-show-raw-insn -C '" + so + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "";
  std::string all, out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) all.append(buf, n);
  pclose(p);
  bool inside = false;
  size_t start = 0;
  for (size_t end; start < all.size(); start = end + 1) {
    end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    std::string line = all.substr(start, end - start);
    size_t lt = line.find(" <");
    bool header = lt != std::string::npos && line.size() > 2 && line.compare(line.size() - 2, 2, ">:") == 0 &&
                  line.find_first_not_of("0123456789abcdef") == lt;
    if (header) {  // "addr <name>:", where a demangled template name starts with its return type
      std::string name = line.substr(lt + 2);
      inside = name.compare(0, symbol.size(), symbol) == 0 || name.find(" " + symbol) < name.find('(');
    }
    else if (line.empty()) inside = false;
    if (inside) out += line + "\n";
  }
  return out;
}

// Instructions of a disassembly that use a 256- or 512-bit register.
inline int wide_vector_instructions(const std::string& text) {
  int n = 0;
  size_t start = 0;
  for (size_t end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.find("%zmm") != std::string::npos || line.find("%ymm") != std::string::npos) ++n;
  }
  return n;
}

// A compiled and loaded kernel.
class CpuKernel {
 public:
  CpuKernel() = default;
  CpuKernel(const CpuKernel&) = delete;
  CpuKernel& operator=(const CpuKernel&) = delete;
  ~CpuKernel() {
    if (handle_) dlclose(handle_);
  }
  bool ok() const { return entry_ != nullptr; }
  int32_t run(const std::vector<TLArg>& args, const TestRuntime& rt) const {
    return entry_(args.data(), static_cast<int32_t>(args.size()), rt.api());
  }
  std::string source;
  std::string lowered_ir;
  // Set before build() to keep the objdump -d text of the functions whose names start with these
  // prefixes in `disassembly[prefix]` (empty when objdump is missing).
  std::vector<std::string> disassemble;
  std::map<std::string, std::string> disassembly;

  // Lowers (lower_cpu, or `lower` when given), emits, compiles and loads `f`. Failures are
  // reported as gtest failures with the compiler log and the source.
  void build(const PrimFunc& f, const AttrMap& configs = {},
             const std::function<PrimFunc(const PrimFunc&, PassContext&)>& lower = nullptr) {
    PassContext ctx;
    ctx.target = Target::parse("cpu");
    ctx.configs = configs;
    PrimFunc lowered = lower ? lower(f, ctx) : lower_cpu(f, ctx);
    lowered_ir = print_func(lowered);
    source = codegen_cpu(lowered);
    static int counter = 0;
    std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                ("tl_cpu_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "kernel.cc") << source;
    std::string cmd = "g++";
    for (auto& fl : cpu_compiler_flags(attr_bool(configs, "tl.enable_fast_math", false))) cmd += " '" + fl + "'";
    cmd += " '" + (dir / "kernel.cc").string() + "' -o '" + (dir / "kernel.so").string() + "' > '" +
           (dir / "log.txt").string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir / "log.txt");
      std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
      ADD_FAILURE() << "g++ failed:\n" << text.substr(0, 6000) << "\n--- source ---\n" << source;
      return;
    }
    handle_ = dlopen((dir / "kernel.so").c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      ADD_FAILURE() << "dlopen failed: " << dlerror();
      return;
    }
    entry_ = reinterpret_cast<TLKernelEntry>(dlsym(handle_, "tl_kernel_entry"));
    if (!entry_) ADD_FAILURE() << "tl_kernel_entry not exported";
    for (auto& sym : disassemble) disassembly[sym] = objdump_function((dir / "kernel.so").string(), sym);
    std::filesystem::remove_all(dir);
  }

 private:
  void* handle_ = nullptr;
  TLKernelEntry entry_ = nullptr;
};

inline TLArg ptr_arg(void* p) {
  TLArg a;
  a.ptr = p;
  return a;
}
inline TLArg int_arg(int64_t v) {
  TLArg a;
  a.i64 = v;
  return a;
}
inline TLArg float_arg(double v) {
  TLArg a;
  a.f64 = v;
  return a;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

// IR shorthands.
inline Expr c(int64_t v) { return make_int(v); }
inline Buffer global(const std::string& name, DataType t, std::vector<Expr> shape) {
  return Buffer(name, t, std::move(shape), MemScope::kGlobal);
}
inline Buffer shared(const std::string& name, DataType t, std::vector<Expr> shape) {
  return Buffer(name, t, std::move(shape), MemScope::kShared);
}
inline Buffer fragment(const std::string& name, DataType t, std::vector<Expr> shape) {
  return Buffer(name, t, std::move(shape), MemScope::kFragment);
}
inline Param tensor_param(const Buffer& b) { return Param{b.name(), Var(), b}; }
inline Param scalar_param(const Var& v) { return Param{v.name(), v, Buffer()}; }
inline BufferRegion region(const Buffer& b, std::vector<std::pair<Expr, Expr>> ranges) {
  std::vector<Range> r;
  for (auto& [m, e] : ranges) r.emplace_back(m, e);
  return BufferRegion(b, std::move(r));
}
inline BufferRegion full(const Buffer& b) { return BufferRegion::full(b); }

}  // namespace tl::test
