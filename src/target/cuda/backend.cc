#include "target/cuda/backend.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "ir/parser.h"
#include "runtime/cache.h"
#include "runtime/distributed.h"
#include "runtime/export_library.h"
#include "runtime/paths.h"
#include "layout/layout.h"
#include "target/cuda/aot.h"
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
    for (const CudaLaunchInfo::TensorMap& m : l.info.tensor_maps) {
      auto st = std::make_unique<TensorMapState>();
      if (m.param >= num_params_ || m.dims.size() != m.box.size() || m.strides.size() + 1 != m.box.size())
        throw_error<ValueError>("corrupt cuda launch description: tensor map '", m.name, "'");
      for (const std::string& d : m.dims) st->dims.push_back(parse_expr(d, vars, {}, "<tmap>"));
      for (const std::string& d : m.strides) st->strides.push_back(parse_expr(d, vars, {}, "<tmap>"));
      // Static shapes (the usual case): no expression evaluation at launch.
      st->constant = true;
      for (size_t d = 0; d < st->dims.size() && st->constant; ++d) {
        int64_t v = 0;
        st->constant = is_const_int(st->dims[d], &v);
        st->const_dims[d] = static_cast<uint64_t>(v < 1 ? 1 : v);
      }
      for (size_t d = 0; d < st->strides.size() && st->constant; ++d) {
        int64_t v = 0;
        st->constant = is_const_int(st->strides[d], &v);
        st->const_strides[d] = static_cast<uint64_t>(v);
      }
      l.tensor_maps.push_back(std::move(st));
    }
    for (const CudaLaunchInfo::Param& p : l.info.params) {
      ParamPlan plan;
      if (p.kind == "tmap") {
        // "tmap:<i>": the i-th tensor map of this kernel, encoded at launch.
        std::string index = p.source.rfind("tmap:", 0) == 0 ? p.source.substr(5) : "";
        if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos ||
            std::stoul(index) >= l.tensor_maps.size())
          throw_error<ValueError>("corrupt cuda launch description: parameter '", p.name, "' has source '", p.source, "'");
        plan.kind = ParamPlan::kTensorMap;
        plan.slot = std::stoul(index);
        l.param_plan.push_back(plan);
        continue;
      }
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
  if (info.persistent) {  // one CTA per SM at most; the CTAs loop over the tiles
    const int64_t sms = cuda_device_info(env.device_id).sm_count;
    g[0] = std::min<int64_t>(g[0] * g[1] * g[2], sms > 0 ? sms : 1);
    g[1] = g[2] = 1;
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
  // Tensor maps: 128-byte parameters, re-encoded only when a tensor's pointer or shape changes.
  constexpr size_t kStackMaps = 8;
  struct alignas(64) MapBytes {
    unsigned char b[128];
  };
  MapBytes stack_maps[kStackMaps];
  std::vector<MapBytes> heap_maps;
  MapBytes* maps = stack_maps;
  if (l.tensor_maps.size() > kStackMaps) {
    heap_maps.resize(l.tensor_maps.size());
    maps = heap_maps.data();
  }
  if (!l.tensor_maps.empty()) {
    std::map<Var, int64_t, VarLess> env_vals;  // filled only for a map with symbolic dims or strides
    std::lock_guard<std::mutex> lock(tmap_mutex_);
    for (size_t t = 0; t < l.tensor_maps.size(); ++t) {
      TensorMapState& st = *l.tensor_maps[t];
      const CudaLaunchInfo::TensorMap& m = info.tensor_maps[t];
      void* ptr = args[m.param].ptr;
      if (st.constant && st.valid && st.ptr == ptr) {  // the map of the last launch still holds
        std::memcpy(maps[t].b, st.map, 128);
        continue;
      }
      if (!st.constant && env_vals.empty())
        for (size_t i = 0; i < slot_vars_.size(); ++i) env_vals[slot_vars_[i]] = args[i].i64;
      uint64_t dims[5] = {0}, strides[5] = {0};
      uint32_t box[5] = {0};
      for (size_t d = 0; d < st.dims.size(); ++d) {
        int64_t v = st.constant ? static_cast<int64_t>(st.const_dims[d]) : eval_index(st.dims[d], env_vals);
        dims[d] = static_cast<uint64_t>(v < 1 ? 1 : v);
        box[d] = static_cast<uint32_t>(m.box[d]);
      }
      for (size_t d = 0; d < st.strides.size(); ++d)
        strides[d] = st.constant ? st.const_strides[d] : static_cast<uint64_t>(eval_index(st.strides[d], env_vals));
      bool same = st.valid && st.ptr == ptr;
      for (size_t d = 0; same && d < st.dims.size(); ++d) same = st.last_dims[d] == dims[d];
      for (size_t d = 0; same && d < st.strides.size(); ++d) same = st.last_strides[d] == strides[d];
      if (!same) {
        // The driver encodes in the calling thread's current context: a thread that has not
        // launched on this device yet (the autotuner's timing thread) has none.
        cuda_set_device(env.device_id);
        cuda_encode_tensor_map(st.map, m.dtype, static_cast<int>(m.box.size()), ptr, dims, strides, box, m.swizzle,
                               "argument " + std::to_string(m.param) + " of kernel '" + info.kernel_name + "'");
        st.ptr = ptr;
        std::copy(dims, dims + 5, st.last_dims);
        std::copy(strides, strides + 5, st.last_strides);
        st.valid = true;
      }
      std::memcpy(maps[t].b, st.map, 128);
    }
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ParamPlan& plan = l.param_plan[i];
    if (plan.kind == ParamPlan::kTensorMap) {
      ptrs[i] = maps[plan.slot].b;
      continue;
    }
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
      case ParamPlan::kTensorMap: break;
      case ParamPlan::kUnsupported:
        throw_error<NotImplemented>("not implemented: a ", info.params[i].kind,
                                    " scalar kernel argument on target cuda ('", info.params[i].name, "')");
    }
    ptrs[i] = s->bytes;
  }
  PerDevice& d = on_device(env.device_id);
  if (info_.distributed) {
    uint64_t gen = 0;
    DistContext c = dist_context_for_launch(info_.kernel_name, &gen);
    if (gen != d.dist_generation) {
      if (!d.module->write_global("tl_dist_ctx", &c, sizeof c))
        throw_error<RuntimeError>("kernel '", info_.kernel_name, "' is marked distributed but defines no tl_dist_ctx");
      d.dist_generation = gen;
    }
  }
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
  // Float exp2 flushes subnormal results unless asked not to (include/tl/cuda/math.h).
  if (config_bool(ctx.configs, "tl.disable_exp2_ftz")) {
    size_t eol = src.find('\n');
    src.insert(eol == std::string::npos ? 0 : eol + 1, "#define TL_EXP2_SUBNORMAL 1\n");
  }
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
  // ptxas serializes every wgmma of a kernel whose wgmma pipeline crosses a call (the printf of a
  // T.print in the pipelined loop; T.wait's timeout report did, include/tl/cuda/dist.h) or whose waits
  // it cannot attribute: a silent loss of 10% or more, so it is said always, once per build (a cached
  // kernel is not rebuilt).
  const std::string serialized = wgmma_serialization_note(r.log);
  if (!serialized.empty())
    std::fprintf(stderr,
                 "tilelang: warning: ptxas serialized the wgmma instructions of this kernel, which costs speed "
                 "(%s); move calls (T.print, T.printf) out of the pipelined loop\n",
                 serialized.c_str());
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

// The kernel compiled once more by NVRTC, for its cubin and its PTX, both embedded in host code
// that the system compiler builds (aot.h): the driver loads the cubin, or JIT-compiles the PTX on
// a newer architecture than the cubin's.
void CudaBackend::export_library(const AotRequest& req) {
  CudaLaunchInfo info = CudaLaunchInfo::parse(extract_launch_info(req.kernel_source));
  NvrtcOptions o;
  o.arch = cuda_compile_arch(req.options.target);
  o.fast_math = config_bool(req.options.pass_configs, "tl.enable_fast_math");
  o.extra_flags = req.options.compile_flags;
  o.want_ptx = true;
  NvrtcResult r = nvrtc_compile(req.kernel_source, "kernel.cu", o);
  std::string source = "#include \"tl/cpu/kernel.h\"\n" +
                       aot_cuda_launch_source(info, r.cubin, r.ptx, o.arch, req.original.params().size(),
                                              req.original.dynamic_vars().size()) +
                       req.entry_source;
  build_aot_library(source, req, {"-std=c++17", "-O2", "-fPIC", "-I" + tl_include_dir()});
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
