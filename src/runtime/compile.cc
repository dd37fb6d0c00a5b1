#include "runtime/compile.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "runtime/build_memo.h"
#include "runtime/cache.h"
#include "runtime/cuda_probe.h"
#include "runtime/large_stack.h"
#include "runtime/paths.h"
#include "target/c_source.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

// Lowering and code generation run concurrently, as builds do (the autotuner lowers and compiles
// its configurations in parallel threads): the process-wide registries they read (passes, tile ops,
// per-target tile-op lowerings, backends) are filled by static initializers and only read
// afterwards, IR nodes are immutable, and each lowering works on its own PassContext.
// (They used to run one at a time: 24 flash-attention configurations spent ~1.3-1.9 s lowering
// serially while the other compile threads waited, docs/PERFORMANCE.md "TileSight".)
// TILELANG_SERIAL_LOWERING=1 serializes them again, to rule out a race when diagnosing one. They
// are serialized as well while IR dumps or pass timings are on (TL_DUMP_IR / tl.enable_dump_ir,
// TL_PASS_TIMING): concurrent lowerings of functions with one name would write the same dump files
// and interleave their timing reports.
class LoweringGuard {
 public:
  explicit LoweringGuard(const AttrMap& configs) {
    // Read on every lowering, as PassRunner reads TL_DUMP_IR / TL_PASS_TIMING.
    auto on = [](const char* var) {
      const char* e = std::getenv(var);
      return e && *e && std::string(e) != "0";
    };
    const char* dump = std::getenv("TL_DUMP_IR");
    const bool serial = on("TILELANG_SERIAL_LOWERING") || on("TL_PASS_TIMING") || (dump && *dump);
    static std::mutex m;
    if (serial || config_bool(configs, "tl.enable_dump_ir")) lock_ = std::unique_lock<std::mutex>(m);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// The in-process memo: cache key -> compiled kernel, least recently used evicted first.
class CompileMemo {
 public:
  std::shared_ptr<CompiledKernel> find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }
  void insert(const std::string& key, std::shared_ptr<CompiledKernel> k) {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(key, std::move(k));
    index_[key] = order_.begin();
    while (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    index_.clear();
    order_.clear();
  }

 private:
  static constexpr size_t kCapacity = 512;
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<CompiledKernel>>> order_;
  std::map<std::string, std::list<std::pair<std::string, std::shared_ptr<CompiledKernel>>>::iterator> index_;
};

CompileMemo& memo() {
  static CompileMemo* m = new CompileMemo();
  return *m;
}

// prelower() results waiting for their compile: cache key -> the lowering, least recently used
// dropped first (a tuner that ranks many configurations compiles only a few of them).
struct PreLowered {
  PrimFunc lowered;
  std::string kernel_source, host_source;
  std::vector<std::pair<std::string, PrimFunc>> stages;
};

class PreLoweredMemo {
 public:
  std::shared_ptr<const PreLowered> find(const std::string& key, bool take) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = order_.begin(); it != order_.end(); ++it) {
      if (it->first != key) continue;
      std::shared_ptr<const PreLowered> p = it->second;
      if (take) order_.erase(it);
      else order_.splice(order_.begin(), order_, it);
      return p;
    }
    return nullptr;
  }
  void insert(const std::string& key, std::shared_ptr<const PreLowered> p) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = order_.begin(); it != order_.end(); ++it)
      if (it->first == key) {
        order_.erase(it);
        break;
      }
    order_.emplace_front(key, std::move(p));
    if (order_.size() > kCapacity) order_.pop_back();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    order_.clear();
  }

 private:
  static constexpr size_t kCapacity = 64;
  std::mutex mu_;
  std::list<std::pair<std::string, std::shared_ptr<const PreLowered>>> order_;
};

PreLoweredMemo& prelowered() {
  static PreLoweredMemo* m = new PreLoweredMemo();
  return *m;
}

std::atomic<int64_t> g_prelower_reused{0};

std::string configs_text(const AttrMap& configs) {
  std::string s;
  for (auto& [k, v] : configs) s += k + "=" + print_attr(v) + "\n";
  return s;
}

// Once per cache root and process: the cache is not private, so this process compiles without it.
void warn_untrusted_cache(const std::string& root, const std::string& why) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard<std::mutex> lock(mu);
  if (!warned.insert(root).second) return;
  std::fprintf(stderr,
               "[tilelang] warning: not using the kernel cache '%s': %s. Kernels are compiled without it. Make "
               "the directory private (chmod 700, owned by you) or set TILELANG_CACHE_DIR to a private "
               "directory; TILELANG_DISABLE_CACHE=1 silences this.\n",
               root.c_str(), why.c_str());
}

const char* kSourceFile = "kernel_source.txt";
const char* kHostSourceFile = "host_source.txt";

}  // namespace

bool is_npu_kernel(const PrimFunc& f) {
  bool npu = false;
  std::function<void(const Stmt&)> visit = [&](const Stmt& s) {
    if (!s.defined() || npu) return;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (auto& x : s.as<SeqStmtNode>()->seq) visit(x);
        break;
      case StmtKind::kLet: visit(s.as<LetStmtNode>()->body); break;
      case StmtKind::kFor: visit(s.as<ForNode>()->body); break;
      case StmtKind::kIf:
        visit(s.as<IfThenElseNode>()->then_case);
        visit(s.as<IfThenElseNode>()->else_case);
        break;
      case StmtKind::kAllocate: visit(s.as<AllocateNode>()->body); break;
      case StmtKind::kAttr: visit(s.as<AttrStmtNode>()->body); break;
      case StmtKind::kKernel: {
        auto* k = s.as<KernelLaunchNode>();
        if (attr_bool(k->attrs, "is_npu", false)) npu = true;
        else visit(k->body);
        break;
      }
      default: break;
    }
  };
  visit(f.body());
  return npu;
}

Target resolve_target(const std::string& text, const PrimFunc& f) {
  bool npu = f.defined() && is_npu_kernel(f);
  bool want_probe = text.empty() || text == "auto" || text.rfind("cuda", 0) == 0 || text.rfind("nvidia", 0) == 0;
  bool cuda = false;
  if (want_probe && !npu) cuda = probe_cuda().available && has_backend(Target::kCUDA);
  Target t = Target::parse(text, cuda, npu);
  if (t.is_cuda() && text.find("arch") == std::string::npos && probe_cuda().available)
    t.arch = cuda_arch_for(probe_cuda().major, probe_cuda().minor);
  return t;
}

std::string compute_cache_key(const PrimFunc& f, const CompileOptions& opts, TargetBackend& backend) {
  CacheKeyParts parts;
  // Alpha-renamed: functions differing only in variable names share an entry. The kernel name
  // stays in the text (it is the symbol the artifacts are built for).
  parts.ir_text = canonical_text(f);
  parts.target = opts.target.str();
  parts.pass_configs = configs_text(opts.pass_configs);
  for (auto& fl : opts.compile_flags) parts.compile_flags += fl + "\n";
  parts.compiler_version = tl_build_identity() + "\n" + backend.compiler_version(opts);
  return make_cache_key(parts);
}

namespace {
// What backend->build() depends on: the source it compiles, the target, the pass configs and flags
// it reads, the toolchain.
std::string build_key(const std::string& kernel_source, const CompileOptions& opts, TargetBackend& backend) {
  CacheKeyParts parts;
  parts.ir_text = "kernel source\n" + kernel_source;
  parts.target = opts.target.str();
  parts.pass_configs = configs_text(opts.pass_configs);
  for (auto& fl : opts.compile_flags) parts.compile_flags += fl + "\n";
  parts.compiler_version = tl_build_identity() + "\n" + backend.compiler_version(opts);
  return make_cache_key(parts);
}
}  // namespace

void clear_compile_memo() {
  memo().clear();
  prelowered().clear();
  clear_build_memo();
}

std::pair<PrimFunc, std::string> prelower(const PrimFunc& f, const CompileOptions& opts_in) {
  if (!f.defined()) throw_error<ValueError>("prelower: no function given");
  CompileOptions opts = opts_in;
  opts.pass_configs = validate_pass_configs(opts_in.pass_configs);
  std::shared_ptr<TargetBackend> backend(make_backend(opts.target));
  std::string key = compute_cache_key(f, opts, *backend);
  if (auto p = prelowered().find(key, false)) return {p->lowered, p->kernel_source};
  auto p = std::make_shared<PreLowered>();
  {
    LoweringGuard serial_if_asked(opts.pass_configs);
    PassContext ctx;
    ctx.target = opts.target;
    ctx.configs = opts.pass_configs;
    run_with_large_stack([&] {
      p->lowered = backend->lower(f, ctx);
      p->kernel_source = backend->codegen(p->lowered, ctx, &p->host_source);
    });
    p->stages = std::move(ctx.stages);
  }
  if (!memo().find(key)) prelowered().insert(key, p);
  return {p->lowered, p->kernel_source};
}

int64_t prelower_reuse_count() { return g_prelower_reused.load(); }

std::string cache_root() { return KernelCache::default_root(); }

std::shared_ptr<CompiledKernel> compile(const PrimFunc& f, const CompileOptions& opts) {
  return compile_with_backend(f, opts, std::shared_ptr<TargetBackend>(make_backend(opts.target)));
}

std::shared_ptr<CompiledKernel> compile_with_backend(const PrimFunc& f, const CompileOptions& opts_in,
                                                     std::shared_ptr<TargetBackend> backend) {
  if (!f.defined()) throw_error<ValueError>("compile: no function given");
  auto t0 = std::chrono::steady_clock::now();
  CompileOptions opts = opts_in;
  opts.pass_configs = validate_pass_configs(opts_in.pass_configs);
  // TileLang-Ascend's AscendC route relies on bisheng's implicit syncs (ir/target.h); a config the
  // user gives wins. Set before the cache key, which includes the configs.
  if (opts.target.vendor_sync && !opts.pass_configs.count("tl.ascend_vendor_auto_sync"))
    opts.pass_configs["tl.ascend_vendor_auto_sync"] = Attr(true);

  std::string key = compute_cache_key(f, opts, *backend);
  if (auto hit = memo().find(key)) {
    if (opts.verbose) std::fprintf(stderr, "[tilelang] %s: reusing the kernel compiled earlier in this process\n", f.name().c_str());
    return hit->func().get() == f.get() ? hit : hit->with_func(f);
  }

  auto kernel = std::shared_ptr<CompiledKernel>(new CompiledKernel());
  kernel->func_ = f;
  kernel->options_ = opts;
  kernel->cache_key_ = key;
  kernel->backend_ = backend;

  bool use_cache = backend->cacheable() && !KernelCache::disabled_by_env();
  KernelCache cache(KernelCache::default_root());
  if (use_cache) {
    std::string why = cache.untrusted_root();
    if (!why.empty()) {
      warn_untrusted_cache(cache.root(), why);
      use_cache = false;
    }
  }
  std::vector<std::string> required = backend->artifact_files();
  required.insert(required.end(), {kSourceFile, kHostSourceFile});
  if (use_cache) {
    if (auto files = cache.lookup(key, required)) {
      // Everything is read through the verified descriptors. A failure to load a valid-looking
      // entry falls through to a rebuild rather than failing the user's compile.
      try {
        kernel->kernel_source_ = files->read(kSourceFile);
        kernel->host_source_ = files->read(kHostSourceFile);
        kernel->module_ = backend->load(*files, f, nullptr, opts);
        kernel->artifact_dir_ = files->dir();
        kernel->cache_hit_ = true;
      } catch (const ValueError&) {
        throw;
      } catch (const Error& e) {
        if (opts.verbose) std::fprintf(stderr, "[tilelang] cache entry %s unusable (%s); rebuilding\n", files->dir().c_str(), e.what());
        kernel->module_.reset();
      }
    }
  }

  if (!kernel->module_) {
    PrimFunc lowered;
    if (auto pre = prelowered().find(key, true)) {  // lowered by prelower() (the tuner's estimate)
      lowered = pre->lowered;
      kernel->kernel_source_ = pre->kernel_source;
      kernel->host_source_ = pre->host_source;
      kernel->stages_ = pre->stages;
      kernel->stages_ready_ = true;
      g_prelower_reused.fetch_add(1);
      if (opts.verbose)
        std::fprintf(stderr, "[tilelang] %s: reusing the lowering done for its estimate\n", f.name().c_str());
    } else {
      LoweringGuard serial_if_asked(opts.pass_configs);
      PassContext ctx;
      ctx.target = opts.target;
      ctx.configs = opts.pass_configs;
      ctx.verbose = opts.verbose;
      // On a large stack: the passes and code generators recurse over the IR (runtime/large_stack.h).
      run_with_large_stack([&] {
        lowered = backend->lower(f, ctx);
        kernel->kernel_source_ = backend->codegen(lowered, ctx, &kernel->host_source_);
      });
      kernel->stages_ = std::move(ctx.stages);
      kernel->stages_ready_ = true;
    }
    auto write_artifacts = [&](const std::string& dir) {
      auto build = [&](const std::string& d) { backend->build(kernel->kernel_source_, d, opts); };
      // Functions whose IR differs but whose generated source is the same (an autotuner's configs
      // differing only in what this target ignores) share one build (runtime/build_memo.h).
      // (Not for targets whose artifact is the lowered IR itself: their build is not a pure function
      // of the source.)
      bool reused = false;
      if (backend->cacheable())
        reused = build_once(build_key(kernel->kernel_source_, opts, *backend), dir, build);
      else
        build(dir);
      if (reused && opts.verbose)
        std::fprintf(stderr, "[tilelang] %s: the same kernel source was built earlier in this process; reusing "
                     "its artifacts\n", f.name().c_str());
      write_text_file(dir + "/" + kSourceFile, kernel->kernel_source_);
      write_text_file(dir + "/" + kHostSourceFile, kernel->host_source_);
      write_text_file(dir + "/meta.txt", "kernel " + c_string_literal(f.name()) + "\ntarget " + opts.target.str() + "\n");
    };
    if (use_cache) {
      StagingDir staging = cache.begin_write(key);
      try {
        write_artifacts(staging.path());
      } catch (...) {
        cache.abort(staging);
        throw;
      }
      // Loaded through the descriptors the MANIFEST was hashed from (the entry may be cleared by
      // another process right after the commit: the descriptors keep the files alive).
      ArtifactFiles files = cache.commit(key, staging, required);
      kernel->artifact_dir_ = files.dir();
      kernel->module_ = backend->load(files, f, &lowered, opts);
    } else {
      // No cache: a private temporary directory, removed once the artifacts are loaded (a loaded
      // shared object stays mapped after its file is gone).
      std::string dir = make_temp_dir("tilelang-");
      try {
        write_artifacts(dir);
        ArtifactFiles files = ArtifactFiles::open_all(dir);
        kernel->module_ = backend->load(files, f, &lowered, opts);
      } catch (...) {
        remove_tree(dir);
        throw;
      }
      remove_tree(dir);
    }
  }
  kernel->compile_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opts.verbose)
    std::fprintf(stderr, "[tilelang] %s for %s: %s in %.3f s (cache key %s)\n", f.name().c_str(),
                 opts.target.str().c_str(), kernel->cache_hit_ ? "loaded from the cache" : "compiled",
                 kernel->compile_seconds_, key.substr(0, 16).c_str());
  memo().insert(key, kernel);
  return kernel;
}

std::shared_ptr<CompiledKernel> CompiledKernel::with_func(const PrimFunc& f) const {
  auto k = std::shared_ptr<CompiledKernel>(new CompiledKernel());
  k->func_ = f;
  k->options_ = options_;
  k->kernel_source_ = kernel_source_;
  k->host_source_ = host_source_;
  k->cache_key_ = cache_key_;
  k->artifact_dir_ = artifact_dir_;
  k->cache_hit_ = true;
  k->module_ = module_;
  k->backend_ = backend_;
  return k;
}

void CompiledKernel::ensure_stages() {
  std::lock_guard<std::mutex> lock(stages_mutex_);
  if (stages_ready_) return;
  LoweringGuard serial_if_asked(options_.pass_configs);
  PassContext ctx;
  ctx.target = options_.target;
  ctx.configs = options_.pass_configs;
  PrimFunc lowered;
  run_with_large_stack([&] { lowered = backend_->lower(func_, ctx); });
  stages_ = std::move(ctx.stages);
  if (stages_.empty()) stages_.emplace_back("lowered", lowered);
  stages_ready_ = true;
}

std::vector<std::string> CompiledKernel::stage_names() {
  ensure_stages();
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (auto& [name, fn] : stages_) {
    int n = ++seen[name];
    names.push_back(n == 1 ? name : name + "#" + std::to_string(n));
  }
  return names;
}

PrimFunc CompiledKernel::stage(const std::string& name) {
  if (name == "input" || name == "original") return func_;
  ensure_stages();
  if (name == "final" || name == "lowered") {
    if (stages_.empty()) return func_;
    return stages_.back().second;
  }
  std::vector<std::string> names = stage_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return stages_[i].second;
  std::string list = "\"input\", \"final\"";
  for (auto& n : names) list += ", \"" + n + "\"";
  throw_error<ValueError>("unknown IR stage '", name, "' for kernel '", func_.name(), "'; available stages: ", list);
}

}  // namespace tl
