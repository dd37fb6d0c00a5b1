#include "target/cuda/backend.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "ir/parser.h"
#include "runtime/paths.h"
#include "layout/layout.h"
#include "target/cuda/nvrtc.h"
#include "target/cuda/pipeline.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr const char* kLaunchBegin = "/* tl-launch\n";
constexpr const char* kLaunchEnd = "*/\n";

void write_file(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  if (!out) throw_error<RuntimeError>("cannot write cuda kernel artifact ", path);
}

struct Slot {
  alignas(8) unsigned char bytes[8];
};

void put(Slot* s, const void* v, size_t n) {
  std::memset(s->bytes, 0, sizeof(s->bytes));
  std::memcpy(s->bytes, v, n);
}

// The value converted to T (the parameter's C type), stored in the slot.
template <typename T, typename V>
void put_as(Slot* s, V v) {
  T t = static_cast<T>(v);
  put(s, &t, sizeof(T));
}

}  // namespace

std::string cuda_compile_arch(const Target& target) {
  if (!target.arch.empty()) return target.arch;
  if (cuda_device_count() > 0) {
    std::string a = cuda_device_info(0).arch();
    return a == "sm_90" ? "sm_90a" : a;
  }
  return "sm_80";
}

std::string extract_launch_info(const std::string& source) {
  auto b = source.rfind(kLaunchBegin);
  if (b == std::string::npos) throw_error<ValueError>("cuda kernel source without a launch description");
  b += std::strlen(kLaunchBegin);
  auto e = source.find(kLaunchEnd, b);
  if (e == std::string::npos) throw_error<ValueError>("cuda kernel source with a truncated launch description");
  return source.substr(b, e - b);
}

// ---------------------------------------------------------------------------------------------

CudaKernelModule::CudaKernelModule(std::string cubin, CudaLaunchInfo info, size_t num_params, size_t num_dyn)
    : cubin_(std::move(cubin)), info_(std::move(info)), num_params_(num_params), num_dyn_(num_dyn) {
  std::map<std::string, Var> vars;
  for (size_t i = 0; i < num_params_; ++i) {
    slot_vars_.push_back(Var("param_" + std::to_string(i), DataType::Int64()));
    vars[slot_vars_.back().name()] = slot_vars_.back();
  }
  for (size_t i = 0; i < num_dyn_; ++i) {
    slot_vars_.push_back(Var("dyn_" + std::to_string(i), DataType::Int64()));
    vars[slot_vars_.back().name()] = slot_vars_.back();
  }
  static const std::map<std::string, ParamPlan::Kind> kinds = {
      {"ptr", ParamPlan::kPtr},     {"i64", ParamPlan::kInt64}, {"u64", ParamPlan::kInt64},
      {"i32", ParamPlan::kInt32},   {"u32", ParamPlan::kInt32}, {"i16", ParamPlan::kInt16},
      {"u16", ParamPlan::kInt16},   {"i8", ParamPlan::kInt8},   {"u8", ParamPlan::kInt8},
      {"bool", ParamPlan::kBool},   {"f64", ParamPlan::kFloat64}, {"f32", ParamPlan::kFloat32}};
  std::vector<CudaLaunchInfo> infos = {info_};
  infos[0].then.clear();
  for (const CudaLaunchInfo& t : info_.then) infos.push_back(t);
  for (CudaLaunchInfo& li : infos) {
    Launch l;
    l.info = std::move(li);
    for (const std::string& g : l.info.grid) l.grid.push_back(parse_expr(g, vars, {}, "<grid>"));
    l.static_grid = l.grid.size() == 3;
    for (size_t i = 0; i < l.grid.size() && l.static_grid; ++i) l.static_grid = is_const_int(l.grid[i], &l.static_extents[i]);
    for (const CudaLaunchInfo::Param& p : l.info.params) {
      ParamPlan plan;
      auto k = kinds.find(p.kind);
      if (k != kinds.end()) plan.kind = k->second;
      // "param:<i>" (a PrimFunc parameter) or "dyn:<j>" (a dynamic variable, after the parameters).
      bool is_param = p.source.rfind("param:", 0) == 0;
      bool is_dyn = p.source.rfind("dyn:", 0) == 0;
      std::string index = p.source.substr(is_param ? 6 : 4);
      if ((!is_param && !is_dyn) || index.empty() || index.find_first_not_of("0123456789") != std::string::npos)
        throw_error<ValueError>("corrupt cuda launch description: parameter '", p.name, "' has source '", p.source, "'");
      plan.slot = (is_param ? 0 : num_params_) + std::stoul(index);
      if (plan.slot >= num_params_ + num_dyn_ || (is_param && plan.slot >= num_params_))
        throw_error<ValueError>("corrupt cuda launch description: parameter '", p.name, "' reads argument ", p.source,
                                " of a kernel with ", num_params_, " parameters and ", num_dyn_, " dynamic variables");
      l.param_plan.push_back(plan);
    }
    launches_.push_back(std::move(l));
  }
}

CudaKernelModule::~CudaKernelModule() = default;

CudaKernelModule::PerDevice& CudaKernelModule::on_device(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (device < 0) throw_error<ArgumentError>("cuda kernels need tensors on a cuda device (got device ", device, ")");
  if (devices_.size() <= static_cast<size_t>(device)) devices_.resize(static_cast<size_t>(device) + 1);
  auto& d = devices_[static_cast<size_t>(device)];
  if (!d) {
    auto pd = std::make_unique<PerDevice>();
    pd->module = std::make_unique<CudaModule>(cubin_, device, "kernel '" + info_.kernel_name + "'");
    for (const Launch& l : launches_) {
      pd->fns.push_back(pd->module->function(l.info.kernel_name));
      if (l.info.dyn_smem_bytes > 0)
        pd->module->set_dynamic_smem(pd->fns.back(), static_cast<int>(l.info.dyn_smem_bytes), l.info.kernel_name);
    }
    d = std::move(pd);
  }
  return *d;
}

void CudaKernelModule::launch(const std::vector<TLArg>& args, const LaunchEnv& env) {
  if (args.size() < num_params_ + num_dyn_)
    throw_error<ArgumentError>("kernel '", info_.kernel_name, "' expects ", num_params_ + num_dyn_,
                               " argument slots, got ", args.size());
  for (size_t i = 0; i < launches_.size(); ++i) launch_one(i, args, env);
}

// Everything is checked before the device is touched (the module loads at the first launch).
void CudaKernelModule::launch_one(size_t index, const std::vector<TLArg>& args, const LaunchEnv& env) {
  const Launch& l = launches_[index];
  const CudaLaunchInfo& info = l.info;
  // Grid from the scalar arguments.
  int64_t g[3];
  if (l.static_grid) {
    std::copy(l.static_extents, l.static_extents + 3, g);
  } else {
    std::map<Var, int64_t, VarLess> env_vals;
    for (size_t i = 0; i < slot_vars_.size(); ++i) env_vals[slot_vars_[i]] = args[i].i64;
    for (int i = 0; i < 3; ++i) g[i] = eval_index(l.grid[static_cast<size_t>(i)], env_vals);
  }
  for (int i = 0; i < 3; ++i) {
    if (g[i] <= 0) return;  // an empty grid (a zero-sized dimension): nothing to do
    if (g[i] > (i == 0 ? 2147483647LL : 65535LL))
      throw_error<ArgumentError>("kernel '", info.kernel_name, "': grid dimension ", i, " = ", g[i],
                                 " exceeds the CUDA limit");
  }
  LaunchDims grid, block;
  grid.x = static_cast<uint32_t>(g[0]);
  grid.y = static_cast<uint32_t>(g[1]);
  grid.z = static_cast<uint32_t>(g[2]);
  block.x = static_cast<uint32_t>(info.block[0]);
  block.y = static_cast<uint32_t>(info.block[1]);
  block.z = static_cast<uint32_t>(info.block[2]);
  // Argument storage on the stack for the usual parameter counts (this runs on every launch).
  constexpr size_t kStackParams = 24;
  Slot stack_slots[kStackParams];
  void* stack_ptrs[kStackParams];
  std::vector<Slot> heap_slots;
  std::vector<void*> heap_ptrs;
  Slot* slots = stack_slots;
  void** ptrs = stack_ptrs;
  if (info.params.size() > kStackParams) {
    heap_slots.resize(info.params.size());
    heap_ptrs.resize(info.params.size());
    slots = heap_slots.data();
    ptrs = heap_ptrs.data();
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ParamPlan& plan = l.param_plan[i];
    const TLArg& a = args[plan.slot];
    Slot* s = &slots[i];
    switch (plan.kind) {
      case ParamPlan::kPtr:
        if (a.ptr && (reinterpret_cast<uintptr_t>(a.ptr) % 16) != 0)
          throw_error<ArgumentError>("argument '", info.params[i].name, "' of kernel '", info.kernel_name,
                                     "' points to ", a.ptr,
                                     ", which is not 16-byte aligned; the cuda kernels read tensors with 16-byte "
                                     "accesses. Pass a tensor that starts at an aligned address (e.g. .clone())");
        put(s, &a.ptr, sizeof(void*));
        break;
      case ParamPlan::kInt64: put(s, &a.i64, 8); break;
      case ParamPlan::kInt32: put_as<int32_t>(s, a.i64); break;
      case ParamPlan::kInt16: put_as<int16_t>(s, a.i64); break;
      case ParamPlan::kInt8: put_as<int8_t>(s, a.i64); break;
      case ParamPlan::kBool: put_as<int8_t>(s, a.i64 != 0); break;
      case ParamPlan::kFloat64: put(s, &a.f64, 8); break;
      case ParamPlan::kFloat32: put_as<float>(s, a.f64); break;
      case ParamPlan::kUnsupported:
        throw_error<NotImplemented>("not implemented: a ", info.params[i].kind,
                                    " scalar kernel argument on target cuda ('", info.params[i].name, "')");
    }
    ptrs[i] = s->bytes;
  }
  PerDevice& d = on_device(env.device_id);
  d.module->launch(d.fns[index], grid, block, static_cast<int>(info.dyn_smem_bytes), env.stream, ptrs,
                   info.kernel_name);
  if (info.has_device_assert) d.module->check_device_errors(env.stream, info.kernel_name);
}

AttrMap CudaKernelModule::info() const {
  AttrMap m;
  m["kernel_name"] = Attr(info_.kernel_name);
  m["dynamic_shared_memory_bytes"] = Attr(info_.dyn_smem_bytes);
  m["threads"] = Attr(info_.block[0] * info_.block[1] * info_.block[2]);
  m["num_kernels"] = Attr(static_cast<int64_t>(launches_.size()));
  // A launch that waits for the kernel (to read the device_assert slot); others are asynchronous.
  bool sync = false;
  for (const Launch& l : launches_) sync = sync || l.info.has_device_assert;
  m["launch_synchronizes"] = Attr(sync);
  return m;
}

// ---------------------------------------------------------------------------------------------

PrimFunc CudaBackend::lower(const PrimFunc& f, PassContext& ctx) { return lower_cuda(f, ctx); }

std::string CudaBackend::codegen(const PrimFunc& lowered, const PassContext& ctx, std::string* host_source) {
  CudaLaunchInfo info;
  std::string src = codegen_cuda(lowered, &info);
  std::string desc = info.serialize();
  if (host_source) *host_source = "// launch description (the cuda target has no host code)\n" + desc;
  return src + "\n" + kLaunchBegin + desc + kLaunchEnd;
}

void CudaBackend::build(const std::string& kernel_source, const std::string& dir, const CompileOptions& opts) {
  NvrtcOptions o;
  o.arch = cuda_compile_arch(opts.target);
  o.fast_math = config_bool(opts.pass_configs, "tl.enable_fast_math");
  o.extra_flags = opts.compile_flags;
  NvrtcResult r = nvrtc_compile(kernel_source, "kernel.cu", o);
  for (const KernelResourceUsage& u : r.usage)
    if (u.spill_store_bytes > 0 && opts.verbose)
      std::fprintf(stderr, "tilelang: kernel %s spills %d bytes to local memory (%d registers)\n",
                   u.function.c_str(), u.spill_store_bytes, u.registers);
  write_file(dir + "/kernel.cu", kernel_source);
  write_file(dir + "/kernel.meta", extract_launch_info(kernel_source));
  write_file(dir + "/kernel.cubin", r.cubin);
  std::ostringstream usage;
  for (const KernelResourceUsage& u : r.usage)
    usage << u.function << " registers=" << u.registers << " spill_stores=" << u.spill_store_bytes
          << " stack=" << u.stack_frame_bytes << " static_smem=" << u.static_smem_bytes << "\n";
  write_file(dir + "/resource_usage.txt", usage.str());
}

std::unique_ptr<KernelModule> CudaBackend::load(const ArtifactFiles& files, const PrimFunc& original,
                                                const PrimFunc* lowered, const CompileOptions& opts) {
  // Read through the verified descriptors: the cubin loaded is the cubin hashed.
  CudaLaunchInfo info = CudaLaunchInfo::parse(files.read("kernel.meta"));
  return std::make_unique<CudaKernelModule>(files.read("kernel.cubin"), std::move(info), original.params().size(),
                                            original.dynamic_vars().size());
}

std::vector<std::string> CudaBackend::artifact_files() const { return {"kernel.cubin", "kernel.meta"}; }

std::string CudaBackend::compiler_version(const CompileOptions& opts) {
  static std::mutex mu;
  static std::string headers;
  std::lock_guard<std::mutex> lock(mu);
  if (headers.empty()) headers = hash_directory(cuda_include_dir() + "/tl/cuda");
  return "nvrtc " + nvrtc_version() + "\narch " + cuda_compile_arch(opts.target) + "\nheaders " + headers + "\n";
}

static BackendRegistration cuda_backend_registration(Target::kCUDA, [] { return std::make_unique<CudaBackend>(); });

}  // namespace tl
