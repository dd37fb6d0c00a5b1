// Low-level CUDA access for tests and tools (tilelang._core.cuda): NVRTC compilation, device
// facts, raw device memory and module launches. Kernels compiled by tilelang.compile do not go
// through here; the runtime launches them from C++.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/map.h>

#include <chrono>
#include <cstring>
#include <memory>

#include "bindings/bindings.h"
#include "bindings/ir_bind_convert.h"
#include "ir/dtype.h"
#include "ir/error.h"
#include "layout/mma_layout.h"
#include "runtime/large_stack.h"
#include "target/cuda/backend.h"
#include "target/cuda/driver.h"
#include "target/cuda/emulator.h"
#include "target/cuda/pipeline.h"
#include "transform/pass_config.h"
#include "target/cuda/dynlib.h"
#include "target/cuda/nvrtc.h"

namespace nb = nanobind;

namespace tl::bind {

namespace {

nb::dict usage_dict(const KernelResourceUsage& u) {
  nb::dict d;
  d["function"] = u.function;
  d["registers"] = u.registers;
  d["stack_frame_bytes"] = u.stack_frame_bytes;
  d["spill_store_bytes"] = u.spill_store_bytes;
  d["spill_load_bytes"] = u.spill_load_bytes;
  d["static_smem_bytes"] = u.static_smem_bytes;
  return d;
}

nb::list usage_list(const std::vector<KernelResourceUsage>& usage) {
  nb::list l;
  for (const KernelResourceUsage& u : usage) l.append(usage_dict(u));
  return l;
}

// "cuda -arch=<arch>", sm_80 when arch is empty.
Target cuda_target(const std::string& arch) {
  return Target::parse("cuda -arch=" + (arch.empty() ? std::string("sm_80") : arch));
}

// The runtime's argument slots (TLArg) from ("ptr" | "i64" | "f64", value) pairs.
std::vector<TLArg> runtime_slots(const std::vector<std::pair<std::string, nb::object>>& args, const char* caller) {
  std::vector<TLArg> slots(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& kind = args[i].first;
    if (kind == "ptr") slots[i].ptr = reinterpret_cast<void*>(nb::cast<uintptr_t>(args[i].second));
    else if (kind == "i64") slots[i].i64 = nb::cast<int64_t>(args[i].second);
    else if (kind == "f64") slots[i].f64 = nb::cast<double>(args[i].second);
    else throw_error<ValueError>(caller, ": argument kinds are ptr, i64, f64 (the runtime's slots)");
  }
  return slots;
}

// One raw kernel argument: ("ptr" | "u64" | "i64" | "i32" | "u32" | "f32" | "f64", value).
struct ArgSlot {
  alignas(8) unsigned char bytes[8];
};

template <typename T>
void put_arg(ArgSlot& slot, nb::handle value) {
  T v = nb::cast<T>(value);
  std::memcpy(slot.bytes, &v, sizeof(T));
}

void put_raw_arg(ArgSlot& slot, const std::string& kind, nb::handle value) {
  if (kind == "ptr" || kind == "u64") put_arg<uint64_t>(slot, value);
  else if (kind == "i64") put_arg<int64_t>(slot, value);
  else if (kind == "i32") put_arg<int32_t>(slot, value);
  else if (kind == "u32") put_arg<uint32_t>(slot, value);
  else if (kind == "f32") put_arg<float>(slot, value);
  else if (kind == "f64") put_arg<double>(slot, value);
  else throw_error<ValueError>("launch: unknown argument kind '", kind, "' (ptr, u64, i64, i32, u32, f32, f64)");
}

// Grid or block dimensions from a list of 1 to 3 entries (missing ones are 1).
LaunchDims launch_dims(const std::vector<uint32_t>& d) {
  if (d.empty() || d.size() > 3) throw_error<ValueError>("launch: grid and block take 1 to 3 dimensions");
  LaunchDims r;
  r.x = d[0];
  r.y = d.size() > 1 ? d[1] : 1;
  r.z = d.size() > 2 ? d[2] : 1;
  return r;
}

}  // namespace

void bind_cuda(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("cuda", "Low-level CUDA access (NVRTC, driver) for tests and tools");

  m.def("nvrtc_available", [] {
    std::string why;
    bool ok = nvrtc_available(&why);
    return std::make_pair(ok, why);
  });
  m.def("nvrtc_version", &nvrtc_version);
  m.def("include_dir", &cuda_include_dir);
  m.def(
      "compile",
      [](const std::string& source, const std::string& name, const std::string& arch, bool fast_math, bool want_ptx,
         std::vector<std::string> flags) {
        NvrtcOptions o;
        o.arch = arch;
        o.fast_math = fast_math;
        o.want_ptx = want_ptx;
        o.extra_flags = std::move(flags);
        NvrtcResult r;
        {
          nb::gil_scoped_release release;  // other Python threads run meanwhile (the tuner's warm-up)
          r = nvrtc_compile(source, name, o);
        }
        nb::dict d;
        d["cubin"] = nb::bytes(r.cubin.data(), r.cubin.size());
        d["ptx"] = r.ptx;
        d["log"] = r.log;
        d["seconds"] = r.seconds;
        d["usage"] = usage_list(r.usage);
        return d;
      },
      nb::arg("source"), nb::arg("name") = "kernel.cu", nb::arg("arch") = "sm_80", nb::arg("fast_math") = false,
      nb::arg("want_ptx") = false, nb::arg("flags") = std::vector<std::string>{});

  // (lane, element, row, col) of every element of a warp-level mma.sync fragment, from the layout
  // library: the GPU tests feed the hardware with these to check the layouts.
  m.def("mma_fragment_table", [](const std::string& operand, const std::string& dtype) {
    DataType t = parse_dtype(dtype);
    Fragment f = operand == "A"   ? mma_warp_fragment_a(t)
                 : operand == "B" ? mma_warp_fragment_b(t)
                 : operand == "C" ? mma_warp_fragment_c()
                                  : throw ValueError("mma_fragment_table: operand must be A, B or C");
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> rows;
    for (int64_t lane = 0; lane < f.num_threads(); ++lane)
      for (int64_t r = 0; r < f.num_regs(); ++r) {
        std::vector<int64_t> idx;
        if (f.index_at(lane, r, &idx)) rows.emplace_back(lane, r, idx[0], idx[1]);
      }
    return rows;
  });

  m.def("driver_available", [] {
    std::string why;
    bool ok = cuda_driver_available(&why);
    return std::make_pair(ok, why);
  });
  m.def("driver_facts", [] {
    CudaDriverFacts f = cuda_driver_facts();
    nb::dict d;
    d["path"] = f.path;
    d["version"] = f.version;
    d["resolution"] = f.resolution;
    return d;
  });
  m.def("nvrtc_path", &nvrtc_library_path);
  m.def("install_crash_backtrace", &install_fatal_signal_backtrace,
        "On a fatal signal, print the native backtrace (with each frame's library) before Python's faulthandler");
  m.def("validate_image", [](nb::bytes image) {
    validate_module_image(std::string(image.c_str(), image.size()), "image");
  });
  m.def("device_count", &cuda_device_count);
  m.def("device_info", [](int dev) {
    const CudaDeviceInfo& i = cuda_device_info(dev);
    nb::dict d;
    d["name"] = i.name;
    d["arch"] = i.arch();
    d["cc"] = nb::make_tuple(i.cc_major, i.cc_minor);
    d["sm_count"] = i.sm_count;
    d["max_threads_per_block"] = i.max_threads_per_block;
    d["max_smem_per_block"] = i.max_smem_per_block;
    d["max_smem_per_block_optin"] = i.max_smem_per_block_optin;
    d["max_smem_per_sm"] = i.max_smem_per_sm;
    d["l2_bytes"] = i.l2_bytes;
    return d;
  });
  m.def("malloc", [](size_t bytes, int dev) { return reinterpret_cast<uintptr_t>(cuda_malloc(bytes, dev)); });
  m.def("free", [](uintptr_t p, int dev) { cuda_free(reinterpret_cast<void*>(p), dev); });
  m.def("memcpy_htod", [](uintptr_t dst, nb::bytes src, int dev) {
    cuda_memcpy_htod(reinterpret_cast<void*>(dst), src.c_str(), src.size(), dev);
  });
  m.def("memcpy_dtoh", [](uintptr_t src, size_t bytes, int dev) {
    std::string buf(bytes, '\0');
    cuda_memcpy_dtoh(buf.data(), reinterpret_cast<void*>(src), bytes, dev);
    return nb::bytes(buf.data(), buf.size());
  });
  m.def("memset", [](uintptr_t dst, int byte, size_t bytes, int dev) {
    cuda_memset(reinterpret_cast<void*>(dst), byte, bytes, dev);
  });
  m.def("synchronize", &cuda_device_synchronize);
  // CUDA IPC for the symmetric heaps of tilelang.distributed.
  m.def("ipc_get_handle", [](uintptr_t p, int dev) {
    std::string h = cuda_ipc_get_handle(reinterpret_cast<void*>(p), dev);
    return nb::bytes(h.data(), h.size());
  });
  m.def("ipc_open_handle", [](nb::bytes h, int dev) {
    return reinterpret_cast<uintptr_t>(cuda_ipc_open_handle(std::string(h.c_str(), h.size()), dev));
  });
  m.def("ipc_close_handle", [](uintptr_t p, int dev) { cuda_ipc_close_handle(reinterpret_cast<void*>(p), dev); });
  // tilelang.distributed.CopyEngineAllGather: a chunk's ready flag set in stream order.
  m.def("stream_write_value32", [](uintptr_t stream, uintptr_t addr, uint32_t value, int dev) {
    cuda_stream_write_value32(reinterpret_cast<void*>(stream), reinterpret_cast<void*>(addr), value, dev);
  });
  m.def("memcpy_async", [](uintptr_t dst, uintptr_t src, size_t bytes, uintptr_t stream, int dev) {
    cuda_memcpy_async(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes,
                      reinterpret_cast<void*>(stream), dev);
  });
  m.def("pointer_device", [](uintptr_t p) { return cuda_pointer_device(reinterpret_cast<void*>(p)); });

  // The cuda backend without the runtime: lower + codegen + NVRTC for a PrimFunc, and a launcher
  // taking the runtime's argument slots. Used by tests/python/cuda and bench/gpu_*.py.
  m.def(
      "build_func",
      [](const PrimFunc& f, const std::string& arch, const std::map<std::string, nb::object>& configs,
         std::vector<std::string> flags) {
        AttrMap raw;
        for (auto& [k, v] : configs) {
          if (nb::isinstance<nb::bool_>(v)) raw[k] = Attr(nb::cast<bool>(v));
          else if (nb::isinstance<nb::int_>(v)) raw[k] = Attr(detail::int64_from_py(v, "pass config '" + k + "'"));
          else raw[k] = Attr(nb::cast<std::string>(nb::str(v)));
        }
        CompileOptions opts;
        opts.target = Target::parse(arch.empty() ? "cuda" : "cuda -arch=" + arch);
        if (arch.empty()) opts.target.arch = "";
        opts.pass_configs = validate_pass_configs(raw);
        opts.compile_flags = std::move(flags);
        PassContext ctx;
        ctx.target = opts.target;
        ctx.target.arch = cuda_compile_arch(opts.target);
        ctx.configs = opts.pass_configs;
        CudaBackend be;
        PrimFunc lowered;
        std::string host, src;
        run_with_large_stack([&] {  // as tilelang.compile does (runtime/large_stack.h)
          lowered = be.lower(f, ctx);
          src = be.codegen(lowered, ctx, &host);
        });
        NvrtcOptions o;
        o.arch = ctx.target.arch;
        o.fast_math = config_bool(opts.pass_configs, "tl.enable_fast_math");
        o.extra_flags = opts.compile_flags;
        NvrtcResult r = nvrtc_compile(src, "kernel.cu", o);
        nb::dict d;
        d["source"] = src;
        d["meta"] = extract_launch_info(src);
        d["cubin"] = nb::bytes(r.cubin.data(), r.cubin.size());
        d["arch"] = o.arch;
        d["seconds"] = r.seconds;
        d["log"] = r.log;
        d["usage"] = usage_list(r.usage);
        d["num_params"] = f.params().size();
        d["num_dyn"] = f.dynamic_vars().size();
        return d;
      },
      nb::arg("func"), nb::arg("arch") = "", nb::arg("configs") = std::map<std::string, nb::object>{},
      nb::arg("flags") = std::vector<std::string>{});
  m.def("lower_func", [](const PrimFunc& f, const std::string& arch, const std::map<std::string, bool>& configs) {
    PassContext ctx;
    ctx.target = cuda_target(arch);
    AttrMap raw;
    for (auto& [k, v] : configs) raw[k] = Attr(v);
    ctx.configs = validate_pass_configs(raw);
    CudaBackend be;
    PrimFunc lowered = be.lower(f, ctx);
    std::string host;
    return std::make_pair(lowered, be.codegen(lowered, ctx, &host));
  }, nb::arg("func"), nb::arg("arch") = "sm_80", nb::arg("configs") = std::map<std::string, bool>{});

  // Runs the lowered kernel on the CPU emulator (src/target/cuda/emulator.h): tensors are host
  // pointers (numpy), updated in place. Returns {"races": [...], "device_assert": str, "blocks": n,
  // "dist_polls": n (T.waits that looked at their flag)}; rank / world: the device a distributed kernel
  // runs as (emulator.h, EmulatorDevice).
  m.def(
      "emulate_func",
      [](const PrimFunc& f, std::vector<std::pair<std::string, nb::object>> args, const std::string& arch,
         const std::map<std::string, bool>& configs, int64_t rank, int64_t world) {
        std::vector<TLArg> slots = runtime_slots(args, "emulate_func");
        if (world < 1 || rank < 0 || rank >= world)
          throw_error<ValueError>("emulate_func: rank ", rank, " is not in 0 .. world - 1 (world ", world, ")");
        PassContext ctx;
        ctx.target = cuda_target(arch);
        AttrMap raw;
        for (auto& [k, v] : configs) raw[k] = Attr(v);
        ctx.configs = validate_pass_configs(raw);
        PrimFunc lowered = lower_cuda(f, ctx);
        EmulatorDevice dev;
        dev.rank = rank;
        dev.world = world;
        EmulatorReport r = emulate_cuda(lowered, slots, dev);
        nb::dict d;
        nb::list races;
        for (const std::string& x : r.races) races.append(x);
        d["races"] = races;
        d["device_assert"] = r.device_assert;
        d["blocks"] = r.blocks_run;
        d["dist_polls"] = r.dist_polls;
        return d;
      },
      nb::arg("func"), nb::arg("args"), nb::arg("arch") = "sm_80",
      nb::arg("configs") = std::map<std::string, bool>{}, nb::arg("rank") = 0, nb::arg("world") = 1);

  // The emulator on an already lowered function (tests edit lowered IR text to check that the
  // emulator's ordering checks fail where they must).
  m.def(
      "emulate_lowered",
      [](const PrimFunc& lowered, std::vector<std::pair<std::string, nb::object>> args) {
        std::vector<TLArg> slots = runtime_slots(args, "emulate_lowered");
        EmulatorReport r = emulate_cuda(lowered, slots);
        nb::dict d;
        nb::list races;
        for (const std::string& x : r.races) races.append(x);
        d["races"] = races;
        d["device_assert"] = r.device_assert;
        d["blocks"] = r.blocks_run;
        return d;
      },
      nb::arg("lowered"), nb::arg("args"));

  nb::class_<CudaKernelModule>(m, "Kernel")
      .def(
          "__init__",
          [](CudaKernelModule* self, nb::bytes cubin, const std::string& meta, size_t num_params, size_t num_dyn) {
            new (self) CudaKernelModule(std::string(cubin.c_str(), cubin.size()), CudaLaunchInfo::parse(meta),
                                        num_params, num_dyn);
          },
          nb::arg("cubin"), nb::arg("meta"), nb::arg("num_params"), nb::arg("num_dyn"))
      .def(
          "launch",
          [](CudaKernelModule& k, std::vector<std::pair<std::string, nb::object>> args, uintptr_t stream, int device) {
            std::vector<TLArg> slots = runtime_slots(args, "launch");
            LaunchEnv env;
            env.device_id = device;
            env.stream = reinterpret_cast<void*>(stream);
            k.launch(slots, env);
          },
          nb::arg("args"), nb::arg("stream") = 0, nb::arg("device") = 0)
      .def(
          "launch_loop",
          [](CudaKernelModule& k, std::vector<std::pair<std::string, nb::object>> args, uintptr_t stream, int device,
             int count) {
            // The host cost of the launch itself (argument marshalling + cuLaunchKernel), without Python:
            // the floor under the per-call overhead (bench/gpu_overhead.py). Returns microseconds per launch.
            std::vector<TLArg> slots = runtime_slots(args, "launch_loop");
            LaunchEnv env;
            env.device_id = device;
            env.stream = reinterpret_cast<void*>(stream);
            nb::gil_scoped_release release;
            auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < count; ++i) k.launch(slots, env);
            std::chrono::duration<double, std::micro> dt = std::chrono::steady_clock::now() - t0;
            return count > 0 ? dt.count() / count : 0.0;
          },
          nb::arg("args"), nb::arg("stream") = 0, nb::arg("device") = 0, nb::arg("count") = 1000);

  nb::class_<CudaModule>(m, "Module")
      .def(
          "__init__",
          [](CudaModule* self, nb::bytes image, int dev) {
            // The driver wants PTX NUL-terminated; a cubin or fatbin is self-describing.
            std::string img(image.c_str(), image.size());
            if (img.compare(0, 4, "\x7f" "ELF") != 0) img.push_back('\0');
            new (self) CudaModule(img, dev, "test module");
          },
          nb::arg("image"), nb::arg("device") = 0)
      .def_prop_ro("device", &CudaModule::device)
      .def_prop_ro("has_error_slot", &CudaModule::has_error_slot)
      .def("num_registers",
           [](const CudaModule& mod, const std::string& name) { return mod.num_registers(mod.function(name)); })
      .def("local_bytes",
           [](const CudaModule& mod, const std::string& name) { return mod.local_bytes(mod.function(name)); })
      .def(
          "launch",
          [](const CudaModule& mod, const std::string& name, std::vector<uint32_t> grid, std::vector<uint32_t> block,
             std::vector<std::pair<std::string, nb::object>> args, int smem, uintptr_t stream) {
            LaunchDims g = launch_dims(grid), b = launch_dims(block);
            std::vector<ArgSlot> slots(args.size());
            std::vector<void*> ptrs(args.size());
            for (size_t i = 0; i < args.size(); ++i) {
              put_raw_arg(slots[i], args[i].first, args[i].second);
              ptrs[i] = slots[i].bytes;
            }
            void* fn = mod.function(name);
            if (smem > 0) mod.set_dynamic_smem(fn, smem, name);
            mod.launch(fn, g, b, smem, reinterpret_cast<void*>(stream), ptrs.data(), name);
          },
          nb::arg("name"), nb::arg("grid"), nb::arg("block"), nb::arg("args"), nb::arg("smem") = 0,
          nb::arg("stream") = 0)
      .def(
          "check_device_errors",
          [](const CudaModule& mod, const std::string& name, uintptr_t stream) {
            mod.check_device_errors(reinterpret_cast<void*>(stream), name);
          },
          nb::arg("name"), nb::arg("stream") = 0);
}

}  // namespace tl::bind
