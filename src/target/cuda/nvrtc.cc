#include "target/cuda/nvrtc.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <regex>
#include <sstream>
#include <type_traits>

#include "ir/error.h"
#include "runtime/large_stack.h"
#include "runtime/paths.h"
#include "target/cuda/dynlib.h"

namespace tl {

namespace {

using nvrtcResult = int;
using nvrtcProgram = void*;

struct NvrtcApi {
  void* handle = nullptr;
  std::string path;
  std::string error;  // why loading failed
  nvrtcResult (*version)(int*, int*) = nullptr;
  nvrtcResult (*create_program)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                const char* const*) = nullptr;
  nvrtcResult (*compile_program)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*destroy_program)(nvrtcProgram*) = nullptr;
  nvrtcResult (*get_log_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*get_log)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*get_cubin_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*get_cubin)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*get_ptx_size)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*get_ptx)(nvrtcProgram, char*) = nullptr;
  const char* (*get_error_string)(nvrtcResult) = nullptr;
};

const NvrtcApi& api() {
  static NvrtcApi a;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("TILELANG_NVRTC_PATH")) candidates.push_back(p);
    for (const char* n : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) candidates.push_back(n);
    for (const std::string& root : cuda_toolkit_roots()) {
      for (const char* n : {"/lib64/libnvrtc.so", "/lib64/libnvrtc.so.13", "/lib64/libnvrtc.so.12",
                            "/lib/libnvrtc.so", "/targets/x86_64-linux/lib/libnvrtc.so"})
        candidates.push_back(root + n);
    }
    for (const std::string& sp : python_site_packages_dirs()) {
      for (const char* pattern : {"/nvidia/cu13/lib/libnvrtc.so*", "/nvidia/cuda_nvrtc/lib/libnvrtc.so*"}) {
        for (const std::string& f : glob_files(sp + pattern)) {
          if (f.find("builtins") == std::string::npos && f.find(".alt.") == std::string::npos) candidates.push_back(f);
        }
      }
    }
    std::string tried;
    a.handle = open_first_library(candidates, &a.path, &tried);
    if (!a.handle) {
      a.error = "NVRTC (libnvrtc.so) was not found; looked for: " + tried +
                ". Install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc`, or set TILELANG_NVRTC_PATH to "
                "the library file";
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(a.handle, name));
      if (!fn) {
        ok = false;
        a.error += std::string(a.error.empty() ? "" : ", ") + name;
      }
    };
    sym(a.version, "nvrtcVersion");
    sym(a.create_program, "nvrtcCreateProgram");
    sym(a.compile_program, "nvrtcCompileProgram");
    sym(a.destroy_program, "nvrtcDestroyProgram");
    sym(a.get_log_size, "nvrtcGetProgramLogSize");
    sym(a.get_log, "nvrtcGetProgramLog");
    sym(a.get_cubin_size, "nvrtcGetCUBINSize");
    sym(a.get_cubin, "nvrtcGetCUBIN");
    sym(a.get_ptx_size, "nvrtcGetPTXSize");
    sym(a.get_ptx, "nvrtcGetPTX");
    sym(a.get_error_string, "nvrtcGetErrorString");
    if (!ok) {
      a.error = a.path + " lacks the NVRTC functions " + a.error + " (NVRTC 11.1 or newer is required)";
      dlclose(a.handle);
      a.handle = nullptr;
    }
  });
  return a;
}

const NvrtcApi& require_api() {
  const NvrtcApi& a = api();
  if (!a.handle) throw_error<CompileError>("cannot compile for cuda: ", a.error);
  return a;
}

// NVRTC 12.4 and newer precompile the headers of a program (tl/cuda/all.h, ~60% of a small
// kernel's front-end time) on the first compile of a process and reuse them on the next ones
// (automatic PCH: in memory and a per-process directory NVRTC removes). Same cubin, ~30% less
// compile time; TILELANG_NVRTC_PCH=0 turns it off.
bool use_auto_pch(const NvrtcApi& a) {
  static const bool on = [&] {
    if (const char* e = std::getenv("TILELANG_NVRTC_PCH"); e && std::string(e) == "0") return false;
    int major = 0, minor = 0;
    if (a.version(&major, &minor) != 0) return false;
    return major > 12 || (major == 12 && minor >= 4);
  }();
  return on;
}

std::string error_text(const NvrtcApi& a, nvrtcResult r) {
  const char* s = a.get_error_string ? a.get_error_string(r) : nullptr;
  return s ? std::string(s) : "NVRTC error " + std::to_string(r);
}

// The source lines an error message points at ("main.cu(12): error: ..."), so a CompileError
// shows the generated code next to the complaint.
std::string quote_error_lines(const std::string& log, const std::string& name, const std::string& source) {
  std::vector<std::string> lines;
  {
    std::istringstream is(source);
    for (std::string l; std::getline(is, l);) lines.push_back(l);
  }
  std::ostringstream os;
  std::regex re(std::regex_replace(name, std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
                R"(\((\d+)\): (error|catastrophic error))");
  int shown = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator() && shown < 8;
       ++it, ++shown) {
    int line = std::stoi((*it)[1].str());
    if (line >= 1 && line <= static_cast<int>(lines.size()))
      os << "\n  " << name << ":" << line << ": " << lines[line - 1];
  }
  return os.str();
}

}  // namespace

bool nvrtc_available(std::string* why) {
  const NvrtcApi& a = api();
  if (!a.handle && why) *why = a.error;
  return a.handle != nullptr;
}

std::string nvrtc_version() {
  const NvrtcApi& a = require_api();
  int major = 0, minor = 0;
  a.version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string nvrtc_library_path() {
  const NvrtcApi& a = api();
  if (!a.handle) return "";
  std::string dir = shared_object_dir(reinterpret_cast<void*>(a.version));
  std::string file = a.path.substr(a.path.rfind('/') + 1);
  return dir.empty() ? a.path : dir + "/" + file;
}

std::string cuda_include_dir() { return tl_include_dir("tl/cuda/all.h"); }

std::string wgmma_serialization_note(const std::string& log) {
  const size_t at = log.find("wgmma.mma_async instructions are serialized");
  if (at == std::string::npos) return "";
  const size_t bol = log.rfind('\n', at);
  size_t from = bol == std::string::npos ? 0 : bol + 1;
  const size_t code = log.find("(C", from);
  if (code != std::string::npos && code < at) from = code;
  const size_t eol = log.find('\n', at);
  return log.substr(from, (eol == std::string::npos ? log.size() : eol) - from);
}

std::vector<KernelResourceUsage> parse_ptxas_report(const std::string& log) {
  std::vector<KernelResourceUsage> out;
  std::istringstream is(log);
  std::regex entry(R"(Compiling entry function '([^']+)')");
  std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  std::regex regs(R"(Used (\d+) registers)");
  std::regex smem(R"((\d+) bytes smem)");
  KernelResourceUsage* cur = nullptr;
  for (std::string line; std::getline(is, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry)) {
      out.push_back({});
      cur = &out.back();
      cur->function = m[1].str();
      continue;
    }
    if (!cur) continue;
    // A "Function properties for <callee>" block belongs to a device function: stop attributing.
    if (line.find("Function properties for") != std::string::npos &&
        line.find(cur->function) == std::string::npos) {
      cur = nullptr;
      continue;
    }
    if (std::regex_search(line, m, frame)) {
      cur->stack_frame_bytes = std::stoi(m[1].str());
      cur->spill_store_bytes = std::stoi(m[2].str());
      cur->spill_load_bytes = std::stoi(m[3].str());
    }
    if (std::regex_search(line, m, regs)) cur->registers = std::stoi(m[1].str());
    if (std::regex_search(line, m, smem)) cur->static_smem_bytes = std::stoi(m[1].str());
  }
  return out;
}

NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, const NvrtcOptions& opts) {
  static const char* kArchs[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
  bool known = false;
  for (const char* a : kArchs) known |= opts.arch == a;
  if (!known)
    throw_error<ValueError>("unsupported cuda architecture '", opts.arch,
                            "'; supported: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a");
  const NvrtcApi& a = require_api();
  auto t0 = std::chrono::steady_clock::now();

  std::vector<std::string> flags = {"--gpu-architecture=" + opts.arch, "-std=c++17", "--ptxas-options=-v",
                                    "-default-device", "-diag-suppress=177,550,20039",
                                    "-I" + cuda_include_dir()};
  for (const std::string& d : opts.include_dirs) flags.push_back("-I" + d);
  if (opts.fast_math) flags.push_back("--use_fast_math");
  if (opts.line_info) flags.push_back("-lineinfo");
  for (const std::string& f : opts.extra_flags) flags.push_back(f);
  nvrtcProgram prog = nullptr;
  struct Guard {
    const NvrtcApi& a;
    nvrtcProgram* p;
    ~Guard() {
      if (*p) a.destroy_program(p);
    }
  } guard{a, &prog};
  NvrtcResult out;
  auto compile_once = [&](bool pch) {
    if (prog) a.destroy_program(&prog);
    prog = nullptr;
    nvrtcResult r = a.create_program(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr);
    if (r != 0) throw_error<CompileError>("NVRTC could not create a program for ", name, ": ", error_text(a, r));
    std::vector<const char*> cflags;
    for (const std::string& f : flags) cflags.push_back(f.c_str());
    if (pch) {
      cflags.push_back("--pch");
      cflags.push_back("--pch-messages=false");
      // #629: a header precompiled under other options (another arch, fast math) is not used; a
      // note about it is noise in the log.
      cflags.push_back("-diag-suppress=629");
    }
    // NVRTC's front end recurses over nested expressions (about 1.5 KB of stack a level): it runs
    // on a large stack, so a kernel at the IR's depth limit compiles from any thread.
    nvrtcResult cr = nvrtcResult(0);
    run_with_large_stack([&] { cr = a.compile_program(prog, static_cast<int>(cflags.size()), cflags.data()); });
    size_t n = 0;
    out.log.clear();
    a.get_log_size(prog, &n);
    if (n > 1) {
      out.log.resize(n);
      a.get_log(prog, out.log.data());
      out.log.resize(n - 1);
    }
    return cr;
  };
  const bool pch = opts.pch && use_auto_pch(a);
  nvrtcResult cr = compile_once(pch);
  // A failure is reported from a compile without the PCH: a problem of the header cache (e.g. its
  // directory removed under it) never becomes the user's error, and the log is the plain one.
  if (cr != 0 && pch) cr = compile_once(false);
  size_t n = 0;
  if (cr != 0) {
    std::string flat;
    for (const std::string& f : flags) flat += " " + f;
    throw_error<CompileError>("NVRTC failed to compile ", name, " for ", opts.arch, " (", error_text(a, cr),
                              "). This is a bug in the cuda code generator or in a compile flag; please "
                              "report it with the kernel.\nflags:",
                              flat, "\nlog:\n", out.log, quote_error_lines(out.log, name, source));
  }
  n = 0;
  if (nvrtcResult rr = a.get_cubin_size(prog, &n); rr != 0 || n == 0)
    throw_error<CompileError>("NVRTC produced no cubin for ", name, " (", opts.arch, "): ",
                              rr != 0 ? error_text(a, rr) : std::string("empty image"));
  out.cubin.resize(n);
  if (nvrtcResult rr = a.get_cubin(prog, out.cubin.data()); rr != 0)
    throw_error<CompileError>("NVRTC could not return the cubin of ", name, ": ", error_text(a, rr));
  if (opts.want_ptx) {
    n = 0;
    if (nvrtcResult rr = a.get_ptx_size(prog, &n); rr != 0 || n == 0)
      throw_error<CompileError>("NVRTC produced no PTX for ", name, ": ",
                                rr != 0 ? error_text(a, rr) : std::string("empty text"));
    out.ptx.resize(n);
    if (nvrtcResult rr = a.get_ptx(prog, out.ptx.data()); rr != 0)
      throw_error<CompileError>("NVRTC could not return the PTX of ", name, ": ", error_text(a, rr));
    if (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  }
  out.usage = parse_ptxas_report(out.log);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace tl
