// The cpu TargetBackend: lower_cpu -> codegen_cpu -> the system C++ compiler -> dlopen.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "ir/error.h"
#include "runtime/backend.h"
#include "runtime/cache.h"
#include "runtime/export_library.h"
#include "runtime/paths.h"
#include "runtime/process.h"
#include "runtime/sha256.h"
#include "target/cpu/aot.h"
#include "target/cpu/coarsen_gemm_blocks.h"
#include "target/cpu/codegen.h"
#include "target/cpu/host_isa.h"
#include "target/cpu/module.h"
#include "target/cpu/pipeline.h"
#include "target/cpu/stream_global_stores.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

// The system compiler: $CXX (which may carry arguments, e.g. "ccache g++"), else g++.
std::vector<std::string> system_cxx() {
  std::vector<std::string> argv;
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) {
    std::istringstream is(cxx);
    for (std::string w; is >> w;) argv.push_back(w);
  }
  if (argv.empty()) argv.push_back("g++");
  return argv;
}

// The host CPU's identity (-mtune=native, and what cpuid reports beyond the ISA set of the key), so
// that a cache shared between machines does not hand one CPU's kernels to another.
const std::string& host_cpu_identity() {
  static const std::string id = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line)) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
      if (!model.empty() && !flags.empty()) break;
    }
    return model + " flags-sha256 " + sha256_hex(flags);
  }();
  return id;
}

double compile_timeout_s() {
  const char* t = std::getenv("TILELANG_COMPILE_TIMEOUT");
  double v = t ? std::atof(t) : 0;
  return v > 0 ? v : 600.0;
}

class CpuBackend : public TargetBackend {
 public:
  PrimFunc lower(const PrimFunc& f, PassContext& ctx) override {
    return lower_cpu(f, ctx);
  }

  std::string codegen(const PrimFunc& lowered, const PassContext& ctx, std::string* host_source) override {
    if (host_source) host_source->clear();  // host and kernel code are one C++ file on cpu
    return codegen_cpu(lowered, !config_bool(ctx.configs, "tl.disable_cpu_gemm_pack_reuse"));
  }

  void build(const std::string& kernel_source, const std::string& dir, const CompileOptions& opts) override {
    // The ISA set the kernel is compiled for (host's, capped by TL_CPU_ISA / tl.cpu_isa) is also
    // recorded in the object, so that loading it on a CPU without one of them is a typed error
    // rather than SIGILL (load_cpu_module).
    const CpuIsa isa = target_cpu_isa(opts.pass_configs);
    write_text_file(dir + "/kernel.cc", kernel_source + "\nextern \"C\" __attribute__((visibility(\"default\"))) "
                                                        "const char tl_kernel_build_isa[] = \"" + isa.names() + "\";\n");
    std::vector<std::string> argv = system_cxx();
    // cpu_compiler_flags carries -shared -fPIC and -I for our headers; user flags come last so
    // they can override (e.g. -O3).
    for (auto& f : flags_for_compiler(opts, isa)) argv.push_back(f);
    for (auto& f : opts.compile_flags) argv.push_back(f);
    ProcessOptions po;
    po.timeout_s = compile_timeout_s();
    po.cwd = dir;
    // GCC links crtfastmath.o into anything linked with -ffast-math, -Ofast or
    // -funsafe-math-optimizations, shared libraries included (before GCC 13): its constructor sets
    // flush-to-zero and denormals-are-zero in the loading thread, which would change the numerics of
    // the whole process (numpy, torch) once a fast-math kernel is loaded. Such kernels are compiled
    // with those flags and linked without them.
    std::vector<std::string> link_flags;
    bool fast = false;
    for (size_t i = base_args(); i < argv.size(); ++i) {
      const std::string& f = argv[i];
      bool unsafe = f == "-ffast-math" || f == "-Ofast" || f == "-funsafe-math-optimizations";
      fast |= unsafe;
      if (!unsafe && f.rfind("-I", 0) != 0) link_flags.push_back(f);
    }
    if (!fast) {
      argv.insert(argv.end(), {"-o", dir + "/kernel.so", dir + "/kernel.cc"});
      run_build_step(argv, po, opts.verbose, dir + "/kernel.cc");
      return;
    }
    argv.insert(argv.end(), {"-c", "-o", dir + "/kernel.o", dir + "/kernel.cc"});
    run_build_step(argv, po, opts.verbose, dir + "/kernel.cc");
    std::vector<std::string> link = system_cxx();
    link.insert(link.end(), link_flags.begin(), link_flags.end());
    link.insert(link.end(), {"-o", dir + "/kernel.so", dir + "/kernel.o"});
    run_build_step(link, po, opts.verbose, "");
    std::remove((dir + "/kernel.o").c_str());
  }

 private:
  static size_t base_args() { return system_cxx().size(); }

  // cpu_compiler_flags for the compiler in use: clang++ (CXX=clang++) lacks GCC's
  // -fvect-cost-model (its vectorizer has no such switch), which is dropped for it.
  std::vector<std::string> flags_for_compiler(const CompileOptions& opts, const CpuIsa& isa) {
    std::vector<std::string> flags =
        cpu_compiler_flags(config_bool(opts.pass_configs, "tl.enable_fast_math"), cpu_isa_flags(isa));
    if (toolchain_version().find("clang") == std::string::npos) return flags;
    std::vector<std::string> out;
    for (auto& f : flags)
      if (f.rfind("-fvect-cost-model", 0) != 0) out.push_back(f);
    return out;
  }
  static void run_build_step(const std::vector<std::string>& argv, const ProcessOptions& po, bool verbose,
                             const std::string& generated_file) {
    if (verbose) std::fprintf(stderr, "[tilelang] %s\n", format_command(argv).c_str());
    ProcessResult r = run_compiler(argv, "building the cpu kernel", po, generated_file);
    if (verbose && !r.err.empty()) std::fprintf(stderr, "%s", r.err.c_str());
  }

 public:

  std::unique_ptr<KernelModule> load(const ArtifactFiles& files, const PrimFunc& original, const PrimFunc*,
                                     const CompileOptions& opts) override {
    int threads = static_cast<int>(config_int(opts.pass_configs, "tl.cpu_num_threads", 0));
    if (threads < 0) throw_error<ValueError>("pass config 'tl.cpu_num_threads' must be >= 0 (0: all cores), got ", threads);
    // dlopen through the verified descriptor (ArtifactFiles::load_path): the bytes hashed are the bytes run.
    ArtifactFiles::LoadPath so = files.load_path("kernel.so");
    return load_cpu_module(so.path(), files.dir() + "/kernel.so", original.name(), threads);
  }

  std::vector<std::string> artifact_files() const override { return {"kernel.so", "kernel.cc"}; }

  // The kernel source, the pool and the C entry in one translation unit, built with the kernel's
  // own flags (ISA set, fast math, user flags): the library runs on CPUs with that ISA set.
  void export_library(const AotRequest& req) override {
    const CpuIsa isa = target_cpu_isa(req.options.pass_configs);
    std::vector<std::string> flags = flags_for_compiler(req.options, isa);
    for (auto& f : req.options.compile_flags) flags.push_back(f);
    build_aot_library(req.kernel_source + aot_cpu_launch_source(req.symbol) + req.entry_source, req, flags);
  }

  std::string compiler_version(const CompileOptions& opts) override {
    // The ISA set kernels are compiled for is part of the key: TL_CPU_ISA=avx2 (or another host)
    // never reuses an AVX-512 or AMX kernel.
    // So are the flags derived from it and the environment (TL_CPU_VECTOR_WIDTH).
    // And the worker count coarsen_gemm_blocks plans the grid for (tl.cpu_num_threads, itself part of
    // the key, or the host's hardware threads), and the output size from which stream_global_stores
    // streams a memory-bound kernel's copies (the host's last-level cache).
    const CpuIsa isa = target_cpu_isa(opts.pass_configs);
    return toolchain_version() + "isa " + isa.names() + "\nisa flags " + format_command(cpu_isa_flags(isa)) +
           "\ngrid workers " + std::to_string(cpu_grid_workers(opts.pass_configs)) +
           "\nstream min output bytes " + std::to_string(stream_min_output_bytes(opts.pass_configs)) + "\n";
  }

 private:
  std::string toolchain_version() {
    static std::mutex mu;
    static std::unordered_map<std::string, std::string> memo;
    std::vector<std::string> cxx = system_cxx();
    std::string key = format_command(cxx);
    // Memoized per compiler and include directory: TILELANG_INCLUDE_DIR may change within a process
    // (bench/cpu_flash.py --old-include builds the same kernel with an earlier tree's headers), and
    // a key with the first directory's header hash would hand back the kernel built from those.
    const std::string include_dir = cpu_include_dir();
    const std::string memo_key = key + "\n" + include_dir;
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(memo_key);
    if (it != memo.end()) return it->second;
    std::vector<std::string> argv = cxx;
    argv.push_back("--version");
    ProcessResult r;
    try {
      r = run_process(argv, {30.0, "", ""});
    } catch (const Error& e) {
      throw_error<CompileError>("cannot run the system C++ compiler '", key, "' (set CXX to a working compiler): ",
                                e.what());
    }
    if (!r.ok())
      throw_error<CompileError>("the system C++ compiler '", key, "' failed on --version (exit ", r.exit_code,
                                "): ", r.err);
    std::string v = "cxx " + key + "\n" + r.out + "host " + host_cpu_identity() + "\nheaders " +
                    hash_directory(include_dir + "/tl/cpu") + " " + hash_directory(include_dir + "/tl/common") + "\n";
    memo[memo_key] = v;
    return v;
  }
};

BackendRegistration cpu_registration(Target::kCPU, [] { return std::make_unique<CpuBackend>(); });

}  // namespace
}  // namespace tl
