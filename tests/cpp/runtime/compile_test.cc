#include "runtime/compile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <thread>

#include "ir/error.h"
#include "runtime/args.h"
#include "runtime/build_memo.h"
#include "runtime/cache.h"
#include "runtime_test_util.h"

namespace tl {

namespace {

namespace fs = std::filesystem;
using testing::ScopedCacheDir;
using testing::SourceBackend;

PrimFunc axpy_func(const std::string& name = "axpy") {
  Var n("n");
  auto t = [&](const char* nm) {
    return Param{nm, Var(), Buffer(nm, DataType::Float32(), {n}, MemScope::kGlobal)};
  };
  return PrimFunc(name, {t("A"), t("B"), t("C"), Param{"scale", Var("scale", DataType::Float32()), Buffer()}},
                  make_nop());
}

CompileOptions cpu_options() {
  CompileOptions o;
  o.target = Target::parse("cpu");
  return o;
}

// Runs the compiled axpy on random data through the argument binder, checks it against a
// reference computed here, and returns the max error.
double run_axpy(CompiledKernel& k, int64_t n, float scale) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> a(n), b(n), c(n, -1.0f);
  for (auto& x : a) x = dist(rng);
  for (auto& x : b) x = dist(rng);
  ArgBinder binder(k.func(), k.target(), {2});
  auto tensor = [&](std::vector<float>& v, const int64_t* shape) {
    CallArg arg;
    arg.kind = CallArg::kTensor;
    arg.tensor.data = v.data();
    arg.tensor.ndim = 1;
    arg.tensor.shape = shape;
    arg.tensor.dtype = DataType::Float32();
    return arg;
  };
  CallArg s;
  s.kind = CallArg::kFloat;
  s.f = scale;
  std::vector<CallArg> args = {tensor(a, &n), tensor(b, &n), s};
  ArgBinder::State st;
  binder.bind(args.data(), args.size(), st);
  std::vector<int64_t> out_shape;
  binder.alloc_shape(2, st, &out_shape);
  EXPECT_EQ(out_shape, std::vector<int64_t>{n});
  void* out_ptr = c.data();
  std::vector<TLArg> packed;
  binder.pack(args.data(), &out_ptr, st, &packed);
  k.launch(packed, LaunchEnv{});
  double err = 0;
  for (int64_t i = 0; i < n; ++i) err = std::max(err, std::abs(double(c[i]) - (double(a[i]) * scale + b[i])));
  return err;
}

}  // namespace

TEST(Compile, BuildsLoadsAndRunsAHandWrittenKernel) {
  ScopedCacheDir cache("compile");
  clear_compile_memo();
  auto backend = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  auto k = compile_with_backend(axpy_func(), cpu_options(), backend);
  EXPECT_FALSE(k->cache_hit());
  EXPECT_EQ(k->kernel_source(), testing::kAxpyKernel);
  EXPECT_EQ(k->host_source(), "// hand-written kernel: host and kernel code are one file\n");
  EXPECT_TRUE(fs::exists(k->artifact_dir() + "/kernel.so"));
  EXPECT_EQ(k->artifact_dir().rfind(cache.path(), 0), 0u) << "artifacts go to TILELANG_CACHE_DIR";
  EXPECT_LT(run_axpy(*k, 1000, 2.5f), 1e-6);
  EXPECT_LT(run_axpy(*k, 1, -1.0f), 1e-6);  // a 1-block grid runs inline
  EXPECT_EQ(k->stage_names(), std::vector<std::string>{"identity"});
  EXPECT_EQ(k->stage("input").get(), k->func().get());

  // The same function object again: the memo hands back the same kernel.
  EXPECT_EQ(compile_with_backend(k->func(), cpu_options(), backend).get(), k.get());
  // An equal function built anew: the same loaded module, under the new function.
  PrimFunc twin = axpy_func();
  auto again = compile_with_backend(twin, cpu_options(), backend);
  EXPECT_EQ(&again->module(), &k->module());
  EXPECT_EQ(again->func().get(), twin.get());
  EXPECT_EQ(backend->build_calls, 1);
}

TEST(Compile, AlphaRenamedFunctionsShareTheBuildButKeepTheirNames) {
  ScopedCacheDir cache("alpha");
  clear_compile_memo();
  auto backend = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  auto make = [](const char* a, const char* b, const char* c, const char* n) {
    Var nv(n);
    auto t = [&](const char* nm) { return Param{nm, Var(), Buffer(nm, DataType::Float32(), {nv}, MemScope::kGlobal)}; };
    return PrimFunc("axpy", {t(a), t(b), t(c), Param{"scale", Var("scale", DataType::Float32()), Buffer()}}, make_nop());
  };
  auto k1 = compile_with_backend(make("A", "B", "C", "n"), cpu_options(), backend);
  auto k2 = compile_with_backend(make("X", "Y", "Z", "len"), cpu_options(), backend);
  EXPECT_EQ(k1->cache_key(), k2->cache_key());
  EXPECT_EQ(backend->build_calls, 1);
  EXPECT_EQ(k2->func().params()[0].name, "X");
  EXPECT_LT(run_axpy(*k2, 100, 2.0f), 1e-6);
}

TEST(Compile, DiskCacheHitSkipsBuildAndRecomputesStagesLazily) {
  ScopedCacheDir cache("hit");
  clear_compile_memo();
  auto first = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  compile_with_backend(axpy_func(), cpu_options(), first);
  clear_compile_memo();
  auto second = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  auto k = compile_with_backend(axpy_func(), cpu_options(), second);
  EXPECT_TRUE(k->cache_hit());
  EXPECT_EQ(second->build_calls, 0);
  EXPECT_EQ(second->lower_calls, 0);
  EXPECT_EQ(k->kernel_source(), testing::kAxpyKernel);
  EXPECT_LT(run_axpy(*k, 777, 0.5f), 1e-6);
  EXPECT_EQ(k->stage_names(), std::vector<std::string>{"identity"});
  EXPECT_EQ(second->lower_calls, 1);
  EXPECT_THROW(k->stage("no_such_pass"), ValueError);
}

TEST(Compile, CorruptCacheEntryIsRebuiltNotLoaded) {
  ScopedCacheDir cache("rebuild");
  clear_compile_memo();
  auto b1 = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  auto k1 = compile_with_backend(axpy_func(), cpu_options(), b1);
  std::string so = k1->artifact_dir() + "/kernel.so";
  k1.reset();
  clear_compile_memo();
  // Truncate the shared object: loading it would crash or fail.
  fs::resize_file(so, fs::file_size(so) / 2);
  auto b2 = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  auto k2 = compile_with_backend(axpy_func(), cpu_options(), b2);
  EXPECT_FALSE(k2->cache_hit());
  EXPECT_EQ(b2->build_calls, 1);
  EXPECT_LT(run_axpy(*k2, 300, 3.0f), 1e-6);
  EXPECT_TRUE(KernelCache::open_entry(k2->artifact_dir(), k2->cache_key()).has_value());
}

TEST(Compile, DisabledCacheWritesNothing) {
  ScopedCacheDir cache("disabled");
  clear_compile_memo();
  setenv("TILELANG_DISABLE_CACHE", "1", 1);
  auto b = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  auto k = compile_with_backend(axpy_func(), cpu_options(), b);
  unsetenv("TILELANG_DISABLE_CACHE");
  EXPECT_FALSE(fs::exists(cache.path() + "/v1"));
  EXPECT_LT(run_axpy(*k, 100, 1.0f), 1e-6);
}

TEST(Compile, KeyDependsOnConfigsFlagsAndName) {
  SourceBackend b(testing::kAxpyKernel);
  CompileOptions o = cpu_options();
  std::string k0 = compute_cache_key(axpy_func(), o, b);
  EXPECT_EQ(compute_cache_key(axpy_func(), o, b), k0);
  o.compile_flags = {"-DX=1"};
  std::string k1 = compute_cache_key(axpy_func(), o, b);
  o.pass_configs["tl.cpu_num_threads"] = Attr(int64_t(2));
  std::string k2 = compute_cache_key(axpy_func(), o, b);
  std::string k3 = compute_cache_key(axpy_func("other"), o, b);
  EXPECT_NE(k0, k1);
  EXPECT_NE(k1, k2);
  EXPECT_NE(k2, k3);
}

TEST(Compile, CompilerErrorsCarryCommandAndLog) {
  ScopedCacheDir cache("cerr");
  clear_compile_memo();
  auto b = std::make_shared<SourceBackend>("int main( { this is not C++ }\n");
  try {
    compile_with_backend(axpy_func("broken"), cpu_options(), b);
    FAIL() << "expected CompileError";
  } catch (const CompileError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("command: "), std::string::npos) << m;  // the compiler path varies (g++, /opt/gcc/bin/g++)
    EXPECT_NE(m.find("g++"), std::string::npos) << m;
    EXPECT_NE(m.find("kernel.cc"), std::string::npos) << m;
    EXPECT_NE(m.find("error"), std::string::npos) << m;
  }
  // Nothing half-written is left behind.
  EXPECT_TRUE(fs::is_empty(cache.path() + "/v1/staging"));
}

TEST(Compile, KernelErrorsAreRaisedAfterLaunchAndTheKernelStaysUsable) {
  ScopedCacheDir cache("kerr");
  clear_compile_memo();
  auto k = compile_with_backend(axpy_func(), cpu_options(), std::make_shared<SourceBackend>(testing::kAxpyKernel));
  int64_t n = 500;
  std::vector<float> a(n, 1.0f), b(n, 1.0f), c(n, 0.0f);
  a[321] = -1.0f;
  std::vector<TLArg> args(5);
  args[0].ptr = a.data();
  args[1].ptr = b.data();
  args[2].ptr = c.data();
  args[3].f64 = 2.0;
  args[4].i64 = n;
  try {
    k->launch(args, {});
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("device_assert failed: A[i] >= 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("axpy"), std::string::npos) << e.what();
  }
  a[321] = 1.0f;
  k->launch(args, {});
  for (float x : c) ASSERT_EQ(x, 3.0f);
}

TEST(Compile, PassConfigsAreValidated) {
  CompileOptions o = cpu_options();
  o.pass_configs["tl.no_such_option"] = Attr(true);
  try {
    compile_with_backend(axpy_func(), o, std::make_shared<SourceBackend>(testing::kAxpyKernel));
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("tl.no_such_option"), std::string::npos);
  }
}

TEST(Compile, ThreadCountConfig) {
  ScopedCacheDir cache("threads");
  clear_compile_memo();
  CompileOptions o = cpu_options();
  o.pass_configs["tl.cpu_num_threads"] = Attr(int64_t(1));
  auto k = compile_with_backend(axpy_func(), o, std::make_shared<SourceBackend>(testing::kAxpyKernel));
  EXPECT_EQ(k->info().at("num_threads").as_int(), 1);
  EXPECT_LT(run_axpy(*k, 4000, 1.5f), 1e-6);
}

TEST(Compile, ResolveTarget) {
  PrimFunc f = axpy_func();
  setenv("TILELANG_DISABLE_CUDA", "1", 1);  // harmless when probed already: then cuda has no backend here
  EXPECT_TRUE(resolve_target("auto", f).is_cpu() || resolve_target("auto", f).is_cuda());
  EXPECT_TRUE(resolve_target("cpu", f).is_cpu());
  EXPECT_EQ(resolve_target("ascend -model=A3", f).model, "A3");
  try {
    resolve_target("musa", f);
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown target 'musa'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("\"cpu\""), std::string::npos);
  }
  // A kernel marked is_npu resolves to ascend under "auto".
  Var bx("bx");
  Stmt k = make_kernel({make_int(4)}, {bx}, {}, {}, {{"is_npu", Attr(true)}}, make_nop());
  PrimFunc npu("npu", {}, k);
  EXPECT_TRUE(is_npu_kernel(npu));
  EXPECT_TRUE(resolve_target("auto", npu).is_ascend());
  unsetenv("TILELANG_DISABLE_CUDA");
}

namespace {
// axpy whose (unused) body differs by `tag`: IR and cache key differ per tag, the hand-written
// source does not.
PrimFunc axpy_tagged(int64_t tag) {
  Var n("n");
  auto t = [&](const char* nm) {
    return Param{nm, Var(), Buffer(nm, DataType::Float32(), {n}, MemScope::kGlobal)};
  };
  return PrimFunc("axpy", {t("A"), t("B"), t("C"), Param{"scale", Var("scale", DataType::Float32()), Buffer()}},
                  make_evaluate(make_int(tag)));
}
}  // namespace

TEST(Compile, DifferentIrWithTheSameSourceIsBuiltOnce) {
  ScopedCacheDir cache("samesrc");
  clear_compile_memo();
  auto backend = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  BuildMemoStats s0 = build_memo_stats();
  auto k1 = compile_with_backend(axpy_tagged(1), cpu_options(), backend);
  auto k2 = compile_with_backend(axpy_tagged(2), cpu_options(), backend);
  EXPECT_NE(k1->cache_key(), k2->cache_key());
  EXPECT_NE(k1->artifact_dir(), k2->artifact_dir());  // each key has its own cache entry
  EXPECT_EQ(backend->build_calls, 1);
  EXPECT_EQ(build_memo_stats().reuses - s0.reuses, 1u);
  EXPECT_LT(run_axpy(*k1, 100, 1.5f), 1e-6);
  EXPECT_LT(run_axpy(*k2, 200, -2.0f), 1e-6);
  // Other options (here a compile flag) are another build.
  CompileOptions o = cpu_options();
  o.compile_flags = {"-DTL_TEST_FLAG=1"};
  auto k3 = compile_with_backend(axpy_tagged(3), o, backend);
  EXPECT_EQ(backend->build_calls, 2);
  EXPECT_LT(run_axpy(*k3, 300, 0.25f), 1e-6);
}

TEST(Compile, ConcurrentCompilesOfOneSourceBuildOnce) {
  ScopedCacheDir cache("samesrc_mt");
  clear_compile_memo();
  auto backend = std::make_shared<SourceBackend>(testing::kAxpyKernel);
  std::vector<std::shared_ptr<CompiledKernel>> kernels(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] { kernels[i] = compile_with_backend(axpy_tagged(10 + i), cpu_options(), backend); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(backend->build_calls, 1);
  for (int i = 0; i < 4; ++i) EXPECT_LT(run_axpy(*kernels[i], 64 + i, 3.0f), 1e-6);
}

TEST(Compile, AFailedBuildIsNotRemembered) {
  ScopedCacheDir cache("samesrc_err");
  clear_compile_memo();
  auto b = std::make_shared<SourceBackend>("int main( { this is not C++ }\n");
  EXPECT_THROW(compile_with_backend(axpy_tagged(20), cpu_options(), b), CompileError);
  EXPECT_THROW(compile_with_backend(axpy_tagged(21), cpu_options(), b), CompileError);
  EXPECT_EQ(b->build_calls, 2);
}

}  // namespace tl
