#include "target/cuda/aot.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/parser.h"
#include "target/c_source.h"
#include "target/cpu/codegen_cpu.h"

namespace tl {

namespace {

const char* kDriverGlue = R"glue(
// ---- export_library: the CUDA driver API through dlopen (src/target/cuda/aot.cc) ----
#include <dlfcn.h>
#include <mutex>

static void tl_aot_set_error(const char* message);
__attribute__((format(printf, 1, 2))) static int32_t tl_aot_fail(const char* fmt, ...);

namespace {
struct TLAotDriver {
  const char* error = nullptr;
  int (*init)(unsigned);
  int (*ctx_get_current)(void**);
  int (*ctx_set_current)(void*);
  int (*ctx_get_device)(int*);
  int (*device_get)(int*, int);
  int (*primary_ctx_retain)(void**, int);
  int (*device_get_attribute)(int*, int, int);
  int (*module_load_data)(void**, const void*);
  int (*module_get_function)(void**, void*, const char*);
  int (*func_set_attribute)(void*, int, int);
  int (*launch_kernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                       void**);
  int (*get_error_string)(int, const char**);
};

template <typename F>
bool tl_aot_sym(void* lib, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  return *out != nullptr;
}

const TLAotDriver& tl_aot_driver() {
  static TLAotDriver d = [] {
    TLAotDriver r{};
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      r.error = "cannot load libcuda.so.1 (the NVIDIA driver): is a GPU driver installed?";
      return r;
    }
    bool ok = tl_aot_sym(lib, "cuInit", &r.init) && tl_aot_sym(lib, "cuCtxGetCurrent", &r.ctx_get_current) &&
              tl_aot_sym(lib, "cuCtxSetCurrent", &r.ctx_set_current) &&
              tl_aot_sym(lib, "cuCtxGetDevice", &r.ctx_get_device) && tl_aot_sym(lib, "cuDeviceGet", &r.device_get) &&
              tl_aot_sym(lib, "cuDevicePrimaryCtxRetain", &r.primary_ctx_retain) &&
              tl_aot_sym(lib, "cuDeviceGetAttribute", &r.device_get_attribute) &&
              tl_aot_sym(lib, "cuModuleLoadData", &r.module_load_data) &&
              tl_aot_sym(lib, "cuModuleGetFunction", &r.module_get_function) &&
              tl_aot_sym(lib, "cuFuncSetAttribute", &r.func_set_attribute) &&
              tl_aot_sym(lib, "cuLaunchKernel", &r.launch_kernel) &&
              tl_aot_sym(lib, "cuGetErrorString", &r.get_error_string);
    if (!ok) r.error = "libcuda.so.1 lacks a driver API function this library needs (driver too old?)";
    else if (r.init(0) != 0) r.error = "cuInit failed (no usable GPU?)";
    return r;
  }();
  return d;
}

int32_t tl_aot_cu_fail(const TLAotDriver& d, int rc, const char* what) {
  const char* s = nullptr;
  if (d.get_error_string) d.get_error_string(rc, &s);
  return tl_aot_fail("%s failed: CUDA error %d (%s)", what, rc, s ? s : "unknown");
}

// One loaded module per CUDA context (the calling thread's current context; if it has none,
// device 0's primary context, made current).
struct TLAotModule {
  void* ctx = nullptr;
  int device = 0;
  int sm_count = 0;
  void* fns[TL_AOT_NUM_KERNELS] = {};
};
std::mutex tl_aot_modules_mu;
TLAotModule tl_aot_modules[64];
int tl_aot_num_modules = 0;

int32_t tl_aot_module(const TLAotModule** out) {
  const TLAotDriver& d = tl_aot_driver();
  if (d.error) {
    tl_aot_set_error(d.error);
    return 1;
  }
  void* ctx = nullptr;
  int rc = d.ctx_get_current(&ctx);
  if (rc != 0) return tl_aot_cu_fail(d, rc, "cuCtxGetCurrent"), 1;
  if (!ctx) {
    int dev = 0;
    if ((rc = d.device_get(&dev, 0)) != 0) return tl_aot_cu_fail(d, rc, "cuDeviceGet(0)"), 1;
    if ((rc = d.primary_ctx_retain(&ctx, dev)) != 0) return tl_aot_cu_fail(d, rc, "cuDevicePrimaryCtxRetain"), 1;
    if ((rc = d.ctx_set_current(ctx)) != 0) return tl_aot_cu_fail(d, rc, "cuCtxSetCurrent"), 1;
  }
  std::lock_guard<std::mutex> lock(tl_aot_modules_mu);
  for (int i = 0; i < tl_aot_num_modules; ++i)
    if (tl_aot_modules[i].ctx == ctx) {
      *out = &tl_aot_modules[i];
      return 0;
    }
  if (tl_aot_num_modules == 64) return tl_aot_fail("more than 64 CUDA contexts used this library"), 1;
  TLAotModule m;
  m.ctx = ctx;
  if ((rc = d.ctx_get_device(&m.device)) != 0) return tl_aot_cu_fail(d, rc, "cuCtxGetDevice"), 1;
  if ((rc = d.device_get_attribute(&m.sm_count, 16 /* MULTIPROCESSOR_COUNT */, m.device)) != 0)
    return tl_aot_cu_fail(d, rc, "cuDeviceGetAttribute"), 1;
  void* module = nullptr;
  rc = d.module_load_data(&module, tl_aot_cubin);
  if (rc != 0 && sizeof(tl_aot_ptx) > 1) rc = d.module_load_data(&module, tl_aot_ptx);  // JIT from the PTX
  if (rc != 0)
    return tl_aot_fail("loading the kernel (a cubin for " TL_AOT_ARCH " and its PTX) failed: CUDA error %d; the "
                       "device must be of that architecture or a newer one", rc), 1;
  for (int k = 0; k < TL_AOT_NUM_KERNELS; ++k) {
    if ((rc = d.module_get_function(&m.fns[k], module, tl_aot_kernel_names[k])) != 0)
      return tl_aot_cu_fail(d, rc, "cuModuleGetFunction"), 1;
    if (tl_aot_dyn_smem[k] > 0 &&
        (rc = d.func_set_attribute(m.fns[k], 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, tl_aot_dyn_smem[k])) != 0)
      return tl_aot_cu_fail(d, rc, "cuFuncSetAttribute(dynamic shared memory)"), 1;
  }
  tl_aot_modules[tl_aot_num_modules] = m;
  *out = &tl_aot_modules[tl_aot_num_modules++];
  return 0;
}
}  // namespace
)glue";

}  // namespace

std::string aot_cuda_launch_source(const CudaLaunchInfo& first, const std::string& cubin, const std::string& ptx,
                                   const std::string& arch,
                                   size_t num_params, size_t num_dyn) {
  std::vector<CudaLaunchInfo> launches = {first};
  launches[0].then.clear();
  for (const CudaLaunchInfo& t : first.then) launches.push_back(t);
  for (const CudaLaunchInfo& l : launches) {
    if (!l.tensor_maps.empty())
      throw_error<NotImplemented>("not implemented: export_library of a cuda kernel that uses TMA tensor maps ('",
                                  l.kernel_name, "'); export it for an architecture without TMA: target=\"cuda -arch=sm_90\" "
                                  "(not sm_90a) on Hopper, \"cuda -arch=sm_80\" for Ampere and later (docs/AOT.md)");
    if (l.has_device_assert)
      throw_error<NotImplemented>("not implemented: export_library of a cuda kernel with T.device_assert ('",
                                  l.kernel_name, "')");
  }
  // Grid extents as C++ over the argument slots, named param_<i> / dyn_<j>.
  std::map<std::string, Var> vars;
  cpu_codegen::CodeGenCPU names;
  std::vector<Var> slots;
  for (size_t i = 0; i < num_params + num_dyn; ++i) {
    std::string n = i < num_params ? "param_" + std::to_string(i) : "dyn_" + std::to_string(i - num_params);
    Var v(n, DataType::Int64());
    vars[n] = v;
    names.bind_name(v, n);
    slots.push_back(v);
  }
  std::ostringstream s;
  s << "\n#define TL_AOT_NUM_KERNELS " << launches.size() << "\n";
  s << "#define TL_AOT_ARCH " << c_string_literal(arch) << "\n";
  s << "alignas(64) static const unsigned char tl_aot_cubin[] = {";
  for (size_t i = 0; i < cubin.size(); ++i) {
    if (i % 24 == 0) s << "\n ";
    s << static_cast<unsigned>(static_cast<unsigned char>(cubin[i])) << ",";
  }
  s << "0};\nalignas(64) static const unsigned char tl_aot_ptx[] = {";
  for (size_t i = 0; i < ptx.size(); ++i) {
    if (i % 24 == 0) s << "\n ";
    s << static_cast<unsigned>(static_cast<unsigned char>(ptx[i])) << ",";
  }
  s << "0};\nstatic const char* const tl_aot_kernel_names[] = {";
  for (const CudaLaunchInfo& l : launches) s << c_string_literal(l.kernel_name) << ", ";
  s << "};\nstatic const int tl_aot_dyn_smem[] = {";
  for (const CudaLaunchInfo& l : launches) s << l.dyn_smem_bytes << ", ";
  s << "};\n" << kDriverGlue;

  s << "\nstatic int32_t tl_aot_launch(const TLArg* args, int32_t, void* stream) {\n"
    << "  const TLAotModule* m = nullptr;\n"
    << "  if (tl_aot_module(&m) != 0) return 1;\n"
    << "  const TLAotDriver& d = tl_aot_driver();\n";
  for (size_t i = 0; i < slots.size(); ++i)
    s << "  const int64_t " << slots[i].name() << " = args[" << i << "].i64;\n  (void)" << slots[i].name() << ";\n";
  for (size_t k = 0; k < launches.size(); ++k) {
    const CudaLaunchInfo& l = launches[k];
    s << "  {  // " << c_comment_text(l.kernel_name) << "\n";
    for (size_t g = 0; g < 3; ++g) {
      std::string e = "1";
      if (g < l.grid.size()) e = names.expr(parse_expr(l.grid[g], vars, {}, "<grid>"));
      s << "    int64_t g" << g << " = (int64_t)(" << e << ");\n";
    }
    if (l.persistent)
      s << "    g0 = g0 * g1 * g2 < m->sm_count ? g0 * g1 * g2 : (m->sm_count > 0 ? m->sm_count : 1);\n"
        << "    g1 = g2 = 1;\n";
    s << "    if (g0 > 0 && g1 > 0 && g2 > 0) {\n"
      << "      if (g0 > 2147483647LL || g1 > 65535 || g2 > 65535)\n"
      << "        return tl_aot_fail(\"kernel " << c_comment_text(l.kernel_name)
      << ": grid (%lld, %lld, %lld) exceeds the CUDA limits\", (long long)g0, (long long)g1, (long long)g2);\n";
    std::vector<std::string> refs;
    for (size_t i = 0; i < l.params.size(); ++i) {
      const CudaLaunchInfo::Param& p = l.params[i];
      bool is_param = p.source.rfind("param:", 0) == 0, is_dyn = p.source.rfind("dyn:", 0) == 0;
      size_t slot = (is_param || is_dyn) ? std::stoul(p.source.substr(is_param ? 6 : 4)) + (is_dyn ? num_params : 0)
                                         : num_params + num_dyn;
      if (slot >= num_params + num_dyn)
        throw_error<ValueError>("corrupt cuda launch description: parameter '", p.name, "' has source '", p.source, "'");
      std::string a = "args[" + std::to_string(slot) + "]", n = "p" + std::to_string(i);
      static const std::map<std::string, std::string> ints = {
          {"i64", "int64_t"}, {"u64", "uint64_t"}, {"i32", "int32_t"}, {"u32", "uint32_t"}, {"i16", "int16_t"},
          {"u16", "uint16_t"}, {"i8", "int8_t"},   {"u8", "uint8_t"},  {"bool", "int8_t"}};
      if (p.kind == "ptr") {
        s << "      void* " << n << " = " << a << ".ptr;\n"
          << "      if ((uintptr_t)" << n << " % 16 != 0) return tl_aot_fail(\"argument '"
          << c_comment_text(p.name) << "' points to %p, which is not 16-byte aligned\", " << n << ");\n";
      } else if (ints.count(p.kind)) {
        s << "      " << ints.at(p.kind) << " " << n << " = (" << ints.at(p.kind) << ")" << a
          << (p.kind == "bool" ? ".i64 != 0;\n" : ".i64;\n");
      } else if (p.kind == "f32" || p.kind == "f64") {
        std::string t = p.kind == "f32" ? "float" : "double";
        s << "      " << t << " " << n << " = (" << t << ")" << a << ".f64;\n";
      } else {
        throw_error<NotImplemented>("not implemented: export_library of a cuda kernel with a ", p.kind,
                                    " scalar argument ('", p.name, "')");
      }
      refs.push_back("&" + n);
    }
    s << "      void* kp[] = {";
    for (const std::string& r : refs) s << r << ", ";
    s << "nullptr};\n"
      << "      int rc = d.launch_kernel(m->fns[" << k << "], (unsigned)g0, (unsigned)g1, (unsigned)g2, " << l.block[0]
      << ", " << l.block[1] << ", " << l.block[2] << ", " << l.dyn_smem_bytes << ", stream, kp, nullptr);\n"
      << "      if (rc != 0) return tl_aot_cu_fail(d, rc, \"cuLaunchKernel(" << c_comment_text(l.kernel_name)
      << ")\"), 1;\n    }\n  }\n";
  }
  s << "  return 0;\n}\n";
  return s.str();
}

}  // namespace tl
