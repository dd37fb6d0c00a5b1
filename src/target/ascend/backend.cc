// The ascend target behind tilelang.compile(): lowering through pipeline.cc, "codegen" = the lowered
// tile-instruction program as text, and a KernelModule that runs the simulator on every launch.
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/backend.h"
#include "sim/simulator.h"
#include "target/ascend/pipeline.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

class AscendModule : public KernelModule {
 public:
  AscendModule(std::shared_ptr<const sim::Program> prog, const PrimFunc& lowered, bool config_lenient,
               bool config_strict)
      : prog_(std::move(prog)), config_lenient_(config_lenient), config_strict_(config_strict) {
    const AttrMap& a = lowered.attrs();
    static_["model"] = Attr(prog_->model->name);
    static_["syncs_inserted"] = Attr(attr_int(a, "ascend.syncs_inserted", 0));
    static_["sync_fallbacks"] = Attr(attr_int(a, "ascend.sync_fallbacks", 0));
    static_["cross_syncs_inserted"] = Attr(attr_int(a, "ascend.cross_syncs_inserted", 0));
    auto ws = a.find("ascend.cv_workspaces");
    static_["cv_workspaces"] =
        Attr(int64_t(ws != a.end() && ws->second.kind() == Attr::kStrList ? ws->second.as_str_list().size() : 0));
    static_["workspace_bytes_per_core_group"] = Attr(prog_->workspace_bytes);
    static_["memory_planning"] = Attr(attr_bool(a, "ascend.memory_planning", false));
    static_["lenient"] = Attr(options().lenient);
    auto it = a.find("ascend.peak_bytes");
    static const char* mems[] = {"L1", "L0A", "L0B", "L0C", "UB"};
    for (int i = 0; i < 5; ++i) {
      int64_t v = it != a.end() && it->second.kind() == Attr::kIntList && i < int(it->second.as_int_list().size())
                      ? it->second.as_int_list()[i]
                      : prog_->peak_bytes[i + 1];
      static_[std::string("peak_bytes.") + mems[i]] = Attr(v);
      static_[std::string("capacity_bytes.") + mems[i]] = Attr(prog_->model->mem_bytes[i + 1]);
    }
  }

  // The environment switches (TL_ASCEND_SIM_LENIENT, TL_ASCEND_TRACE, TL_ASCEND_SIM_TIMING_ONLY) are
  // read at every launch: compiled kernels are memoised, the environment may change between calls.
  sim::SimOptions options() const {
    sim::SimOptions so = sim::SimOptions::from_env();
    if (config_lenient_) so.lenient = true;
    if (config_strict_) so.strict_waw = true;
    return so;
  }

  void launch(const std::vector<TLArg>& args, const LaunchEnv&) override {
    sim::SimOptions so = options();
    sim::SimStats st = sim::simulate(*prog_, args, so);
    for (const std::string& w : st.warnings) std::fprintf(stderr, "[tilelang] warning: %s\n", w.c_str());
    std::lock_guard<std::mutex> g(mu_);
    dynamic_.clear();
    dynamic_["simulated_ms"] = Attr(st.ms);
    dynamic_["sim_time_ms"] = Attr(st.ms);  // the name the profiler's do_bench reads
    dynamic_["cycles"] = Attr(static_cast<int64_t>(st.cycles));
    dynamic_["instructions"] = Attr(st.instructions);
    dynamic_["blocks"] = Attr(st.blocks);
    dynamic_["cube_cores"] = Attr(int64_t(st.cube_cores_used));
    dynamic_["vector_cores"] = Attr(int64_t(st.vector_cores_used));
    dynamic_["gm_bytes"] = Attr(st.gm_bytes);
    dynamic_["l2_hit_rate"] = Attr(st.gm_bytes ? double(st.l2_hit_bytes) / double(st.gm_bytes) : 0.0);
    dynamic_["simulation_seconds"] = Attr(st.wall_seconds);
    dynamic_["lenient"] = Attr(so.lenient);
    dynamic_["race_warnings"] = Attr(int64_t(st.warnings.size()));
    for (int k = 0; k < 2; ++k)
      for (int p = 0; p < sim::kNumPipes; ++p) {
        if (st.busy[k][p] <= 0) continue;
        std::string key = std::string("util.") + (k == 0 ? "AIC." : "AIV.") + sim::pipe_name(sim::Pipe(p));
        dynamic_[key] = Attr(st.utilisation[k][p]);
      }
  }

  AttrMap info() const override {
    std::lock_guard<std::mutex> g(mu_);
    AttrMap m = static_;
    for (auto& [k, v] : dynamic_) m[k] = v;
    return m;
  }

 private:
  std::shared_ptr<const sim::Program> prog_;
  bool config_lenient_, config_strict_;
  AttrMap static_, dynamic_;
  mutable std::mutex mu_;
};

class AscendBackend : public TargetBackend {
 public:
  PrimFunc lower(const PrimFunc& f, PassContext& ctx) override { return lower_ascend(f, ctx); }

  std::string codegen(const PrimFunc& lowered, const PassContext& ctx, std::string* host_source) override {
    std::ostringstream os;
    os << "// Ascend " << (ctx.target.model.empty() ? "A2" : ctx.target.model)
       << " tile-instruction program executed by the tilelang simulator\n";
    os << "// syncs inserted: " << attr_int(lowered.attrs(), "ascend.syncs_inserted", 0) << "\n";
    os << print_func(lowered);
    if (host_source) *host_source = "";
    return os.str();
  }

  void build(const std::string&, const std::string&, const CompileOptions&) override {}

  std::unique_ptr<KernelModule> load(const ArtifactFiles&, const PrimFunc&, const PrimFunc* lowered,
                                     const CompileOptions& opts) override {
    if (!lowered) throw_error<Error>("internal error: the ascend backend needs the lowered function to load");
    const sim::MachineModel& model = sim::machine_model(opts.target.model);
    auto prog = sim::compile_program(*lowered, model);
    return std::make_unique<AscendModule>(std::move(prog), *lowered,
                                          config_bool(opts.pass_configs, "tl.ascend_sim_lenient"),
                                          config_bool(opts.pass_configs, "tl.ascend_sim_strict"));
  }

  bool cacheable() const override { return false; }
};

BackendRegistration reg(Target::kAscend, [] { return std::make_unique<AscendBackend>(); });

}  // namespace

}  // namespace tl
