// Direct access to the ascend target for tests and tools (tilelang._core.ascend): lower a PrimFunc
// through the ascend pipeline and run it on the simulator with numpy arrays, without the JIT
// runtime. Kernels compiled with tilelang.compile reach the same backend through runtime/backend.h.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/bindings.h"
#include "bindings/ir_bind_convert.h"
#include "ir/error.h"
#include "runtime/backend.h"
#include "runtime/large_stack.h"
#include "sim/machine_model.h"
#include "target/ascend/ascend_strip_syncs.h"
#include "transform/pass_config.h"

namespace nb = nanobind;

namespace tl::bind {

namespace {

struct AscendKernel {
  PrimFunc lowered;
  std::string source;
  std::unique_ptr<KernelModule> module;
};

}  // namespace

void bind_ascend(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("ascend", "The ascend target (pipeline + simulator) for tests and tools");

  nb::class_<AscendKernel>(m, "Kernel")
      .def_prop_ro("lowered", [](const AscendKernel& k) { return k.lowered; })
      .def_prop_ro("source", [](const AscendKernel& k) { return k.source; })
      .def(
          "launch",
          [](AscendKernel& k, nb::list args) {
            std::vector<TLArg> a;
            for (nb::handle h : args) {
              TLArg v;
              if (nb::isinstance<nb::bool_>(h) || nb::isinstance<nb::int_>(h)) {
                v.i64 = nb::cast<int64_t>(h);
              } else if (nb::isinstance<nb::float_>(h)) {
                v.f64 = nb::cast<double>(h);
              } else {
                auto arr = nb::cast<nb::ndarray<>>(h);
                v.ptr = arr.data();
              }
              a.push_back(v);
            }
            nb::gil_scoped_release release;
            k.module->launch(a, LaunchEnv{});
          },
          nb::arg("args"), "Runs the kernel on the simulator; arguments follow the PrimFunc's parameters.")
      .def("info", [](const AscendKernel& k) -> nb::dict { return detail::from_attr_map(k.module->info()); });

  m.def(
      "compile",
      [](const PrimFunc& f, nb::handle configs, const std::string& target) {
        CompileOptions opts;
        opts.target = Target::parse(target, false, true);
        if (!opts.target.is_ascend()) throw_error<ValueError>("tilelang._core.ascend.compile needs an ascend target");
        opts.pass_configs = validate_pass_configs(configs.is_none() ? AttrMap{} : detail::to_attr_map(configs));
        if (opts.target.vendor_sync && !opts.pass_configs.count("tl.ascend_vendor_auto_sync"))
          opts.pass_configs["tl.ascend_vendor_auto_sync"] = Attr(true);
        auto backend = make_backend(opts.target);
        PassContext ctx;
        ctx.target = opts.target;
        ctx.configs = opts.pass_configs;
        auto k = std::make_unique<AscendKernel>();
        run_with_large_stack([&] {  // as tilelang.compile does (runtime/large_stack.h)
          k->lowered = backend->lower(f, ctx);
          k->source = backend->codegen(k->lowered, ctx, nullptr);
        });
        k->module = backend->load(ArtifactFiles(), f, &k->lowered, opts);
        return k.release();
      },
      nb::arg("func"), nb::arg("pass_configs") = nb::none(), nb::arg("target") = "ascend",
      nb::rv_policy::take_ownership, "Lowers `func` for the ascend target and loads it on the simulator.");

  m.def(
      "strip_syncs", [](const PrimFunc& f) { return ascend_strip_syncs(f, PassContext{}); }, nb::arg("func"),
      "The kernel without its intra-core syncs (set_flag, wait_flag, pipe_barrier, barrier_all).");
  m.def(
      "machine_model",
      [](const std::string& name) {
        const sim::MachineModel& mm = sim::machine_model(name);
        nb::dict d;
        d["name"] = mm.name;
        d["clock_hz"] = mm.clock_hz;
        d["cube_cores"] = mm.num_cube_cores;
        d["vector_cores"] = mm.num_cube_cores * mm.vector_per_cube;
        for (int i = 1; i < sim::kNumMems; ++i) d[sim::mem_name(sim::Mem(i))] = mm.mem_bytes[i];
        d["hbm_bytes_per_s"] = mm.hbm_bytes_per_s;
        d["l2_bytes"] = mm.l2_bytes;
        // The rest of the timing model's constants, for analytic estimates (tilelang.tilesight).
        d["l2_bytes_per_s"] = mm.l2_bytes_per_s;
        nb::dict copy_gib, copy_start;
        for (int i = 0; i < sim::kNumCopyPaths; ++i) {
          copy_gib[sim::copy_path_name(sim::CopyPath(i))] = mm.copy_gib_per_s[i];
          copy_start[sim::copy_path_name(sim::CopyPath(i))] = mm.copy_start_cycles[i];
        }
        d["copy_gib_per_s"] = copy_gib;
        d["copy_start_cycles"] = copy_start;
        d["mmad_startup_cycles"] = mm.mmad_startup_cycles;
        d["mmad_cycles_per_fractal_b16"] = mm.mmad_cycles_per_fractal_b16;
        d["mmad_cycles_per_fractal_b32"] = mm.mmad_cycles_per_fractal_b32;
        d["mmad_cycles_per_fractal_b8"] = mm.mmad_cycles_per_fractal_b8;
        nb::dict vec;
        for (auto& [name, c] : mm.vector_costs) vec[name.c_str()] = nb::make_tuple(c.startup, c.slope_b16, c.slope_b32);
        d["vector_costs"] = vec;
        d["default_vector_cost"] =
            nb::make_tuple(mm.default_vector.startup, mm.default_vector.slope_b16, mm.default_vector.slope_b32);
        d["vector_repeat_bytes"] = mm.vector_repeat_bytes;
        d["block_launch_cycles"] = mm.block_launch_cycles;
        d["scalar_op_cycles"] = mm.scalar_op_cycles;
        d["gemm_v0_k_chunk"] = mm.gemm_v0_k_chunk;
        return d;
      },
      nb::arg("name") = "A2");
}

}  // namespace tl::bind
