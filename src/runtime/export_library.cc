#include "runtime/export_library.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"
#include "runtime/cache.h"
#include "runtime/process.h"
#include "target/c_source.h"
#include "transform/config_index_bitwidth.h"

namespace tl {

namespace {

namespace fs = std::filesystem;

// Words that cannot name a C function or parameter (C and C++ keywords, and `main`).
const std::set<std::string>& reserved_words() {
  static const std::set<std::string> s = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
      "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export",
      "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int", "long", "main", "mutable",
      "namespace", "new", "noexcept", "not", "nullptr", "operator", "or", "private", "protected", "public",
      "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "template",
      "this", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "while", "xor", "_Bool"};
  return s;
}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// A C identifier for `base` not in `used` (tl_aot_* is the library's own namespace).
std::string c_name(const std::string& base, std::set<std::string>* used) {
  std::string b;
  for (char c : base) b += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (b.empty() || std::isdigit(static_cast<unsigned char>(b[0]))) b = "arg_" + b;
  if (reserved_words().count(b) || b.rfind("tl_", 0) == 0 || b.rfind("__", 0) == 0) b += "_";
  std::string cand = b;
  for (int i = 1; used->count(cand); ++i) cand = b + "_" + std::to_string(i);
  used->insert(cand);
  return cand;
}

// The C type a tensor's elements are passed as (the bits of 16/8-bit floats as unsigned integers).
std::string c_element_type(DataType t, const std::string& param) {
  if (t.lanes != 1)
    throw_error<NotImplemented>("not implemented: export_library with vector-typed tensor '", param, "' (", t.str(), ")");
  switch (t.code) {
    case DataType::kBool: return "uint8_t";
    case DataType::kInt: return "int" + std::to_string(t.bits) + "_t";
    case DataType::kUInt: return "uint" + std::to_string(t.bits) + "_t";
    case DataType::kFloat:
      if (t.bits == 32) return "float";
      if (t.bits == 64) return "double";
      if (t.bits == 16) return "uint16_t";
      break;
    case DataType::kBFloat: return "uint16_t";
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E8M0: return "uint8_t";
    default: break;
  }
  if (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) return "void";
  throw_error<NotImplemented>("not implemented: export_library with tensor '", param, "' of dtype ", t.str());
}

// A scalar parameter: its C type and the TLArg field it fills.
std::pair<std::string, std::string> c_scalar(DataType t, const std::string& param) {
  if (t.lanes == 1) {
    if (t.is_bool()) return {"int32_t", "i64"};
    if (t.is_int()) return {"int" + std::to_string(t.bits) + "_t", "i64"};
    if (t.is_uint()) return {"uint" + std::to_string(t.bits) + "_t", "i64"};
    if (t.is_float()) return {t.bits == 64 ? "double" : "float", "f64"};
    if (t.is_handle()) return {"void*", "ptr"};
  }
  throw_error<NotImplemented>("not implemented: export_library with scalar parameter '", param, "' of dtype ",
                              t.str());
}

std::string join_exprs(const std::vector<Expr>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + print_expr(v[i]);
  return s;
}

// The directory and file name checks (ValueError naming the path).
std::string checked_library_path(const std::string& path) {
  if (path.empty()) throw_error<ValueError>("export_library needs a file name such as \"gemm.so\"");
  fs::path p(path);
  if (p.extension() != ".so" || p.stem().empty())
    throw_error<ValueError>("export_library writes a shared library: the file name must end in .so (e.g. \"gemm.so\"), "
                            "got '", path, "'");
  fs::path dir = p.parent_path().empty() ? fs::current_path() : p.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw_error<ValueError>("export_library: directory '", dir.string(), "' of '", path,
                            "' does not exist (create it first)");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw_error<ValueError>("export_library: directory '", dir.string(), "' is not writable");
  if (fs::is_directory(p, ec)) throw_error<ValueError>("export_library: '", path, "' is a directory");
  return fs::absolute(dir / p.filename()).lexically_normal().string();
}

// Writes `text` to `path` through a temporary file in the same directory and a rename.
void write_atomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  write_text_file(tmp, text);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw_error<ValueError>("export_library: cannot write '", path, "'");
  }
}

std::vector<std::string> system_cxx() {
  std::vector<std::string> argv;
  if (const char* cxx = std::getenv("CXX"); cxx && *cxx) {
    std::istringstream is(cxx);
    for (std::string w; is >> w;) argv.push_back(w);
  }
  if (argv.empty()) argv.push_back("g++");
  return argv;
}

}  // namespace

ExportedLibrary export_library(const CompiledKernel& kernel, const std::string& path, const std::string& symbol_arg) {
  const PrimFunc& f = kernel.func();
  const Target& target = kernel.target();
  if (!target.is_cpu() && !target.is_cuda())
    throw_error<NotImplemented>("not implemented: export_library for target '", target.str(),
                                "' (supported: cpu, cuda; docs/AOT.md)");
  if (attr_int(f.attrs(), "tl.global_workspaces", 0) > 0)
    throw_error<NotImplemented>("not implemented: export_library of kernel '", f.name(),
                                "', which allocates global workspaces (T.alloc_global); pass the workspace as a "
                                "parameter instead");
  const std::string library_path = checked_library_path(path);
  std::string stem = fs::path(library_path).stem().string();
  std::string symbol = symbol_arg;
  if (symbol.empty()) symbol = stem.size() > 3 && stem.rfind("lib", 0) == 0 ? stem.substr(3) : stem;
  if (!is_c_identifier(symbol) || reserved_words().count(symbol) || symbol.rfind("tl_", 0) == 0)
    throw_error<ValueError>("export_library: '", symbol, "' cannot name the C entry point (",
                            symbol_arg.empty() ? "taken from the file name; " : "",
                            "it must be a C identifier, not a keyword, 'main' or tl_*); pass name=\"...\"");

  // The C arguments: the parameters in order, then each dynamic variable that is not a scalar
  // parameter, then (cuda) the stream.
  const auto& params = f.params();
  const std::vector<Var> dyn = f.dynamic_vars();
  const size_t num_slots = params.size() + dyn.size();
  std::set<std::string> used = {symbol};
  std::vector<std::string> c_args, doc, fill, checks;
  std::map<const VarNode*, size_t> scalar_slot;
  std::vector<std::string> slot_name(num_slots);
  for (size_t i = 0; i < params.size(); ++i) {
    const Param& p = params[i];
    std::string n = c_name(p.name, &used);
    std::string slot = "tl_aot_args[" + std::to_string(i) + "]";
    if (p.is_buffer()) {
      const Buffer& b = p.buffer;
      std::string t = c_element_type(b.dtype(), p.name);
      c_args.push_back(t + "* " + n);
      std::string layout = b->strides.empty() ? "row-major" : "strides [" + join_exprs(b->strides) + "]";
      doc.push_back(n + ": " + b.dtype().str() + "[" + join_exprs(b.shape()) + "], " + layout);
      fill.push_back(slot + ".ptr = (void*)" + n + ";");
    } else {
      auto [t, field] = c_scalar(p.var.dtype(), p.name);
      c_args.push_back(t + " " + n);
      slot_name[i] = n;
      doc.push_back(n + ": " + p.var.dtype().str() + " scalar");
      fill.push_back(slot + "." + field + " = " + (field == "ptr" ? "" : field == "i64" ? "(int64_t)" : "(double)") +
                     n + ";");
      scalar_slot[p.var.get()] = i;
    }
  }
  for (size_t j = 0; j < dyn.size(); ++j) {
    std::string slot = "tl_aot_args[" + std::to_string(params.size() + j) + "]";
    auto it = scalar_slot.find(dyn[j].get());
    if (it != scalar_slot.end()) {  // a scalar parameter that also sizes a tensor
      fill.push_back(slot + ".i64 = tl_aot_args[" + std::to_string(it->second) + "].i64;");
      continue;
    }
    std::string n = c_name(dyn[j].name(), &used);
    slot_name[params.size() + j] = n;
    c_args.push_back("int64_t " + n);
    doc.push_back(n + ": the dynamic dimension '" + dyn[j].name() + "' (>= 0)");
    fill.push_back(slot + ".i64 = " + n + ";");
    checks.push_back("if (" + n + " < 0) return tl_aot_fail(\"" + symbol + ": dynamic dimension '" + n +
                     "' is negative (%lld)\", (long long)" + n + ");");
  }
  // The index-width limit the runtime checks at every call (docs/ARCHITECTURE.md, "Index width").
  IndexWidthPlan plan = plan_index_width(f, kernel.options().pass_configs);
  if (plan.runtime_limit > 0) {
    for (const Var& v : plan.limited) {
      size_t slot = num_slots;
      for (size_t i = 0; i < params.size(); ++i)
        if (!params[i].is_buffer() && params[i].var.get() == v.get()) slot = i;
      for (size_t j = 0; j < dyn.size() && slot == num_slots; ++j)
        if (dyn[j].get() == v.get()) slot = params.size() + j;
      if (slot == num_slots || slot_name[slot].empty()) continue;
      std::string value = "tl_aot_args[" + std::to_string(slot) + "].i64";
      std::string lim = std::to_string(plan.runtime_limit) + "LL";
      checks.push_back("if (" + value + " > " + lim + " || " + value + " < -" + lim + ") return tl_aot_fail(\"" +
                       symbol + ": '" + slot_name[slot] +
                       "' is %lld, beyond the 32-bit index range this kernel was compiled for (export it with "
                       "pass_configs={'tl.config_index_bitwidth': 64})\", (long long)" + value + ");");
    }
  }
  std::string stream_name;
  if (target.is_cuda()) {
    stream_name = c_name("stream", &used);
    c_args.push_back("void* " + stream_name);
    doc.push_back(stream_name + ": the CUstream / cudaStream_t to launch on (NULL: the default stream)");
  }
  std::string sig = "int32_t " + symbol + "(";
  for (size_t i = 0; i < c_args.size(); ++i) sig += (i ? ", " : "") + c_args[i];
  if (c_args.empty()) sig += "void";
  sig += ")";

  // The header.
  std::string guard = "TL_AOT_" + symbol + "_H_";
  for (char& c : guard) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::ostringstream h;
  h << "// " << c_comment_text(fs::path(library_path).filename().string()) << ": exported by tilelang-cpp " << TL_VERSION
    << " from kernel '" << c_comment_text(f.name()) << "' for target " << c_comment_text(target.str()) << ".\n"
    << "// Needs neither Python nor tilelang at run time (docs/AOT.md).\n"
    << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdint.h>\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << "// Runs the kernel" << (target.is_cuda() ? " asynchronously on `" + stream_name + "` (tensors in device memory)" : "")
    << ". Returns 0, or non-zero after recording\n"
    << "// a message for " << symbol << "_last_error(): 1 the kernel or the "
    << (target.is_cuda() ? "CUDA driver" : "system") << " failed, 2 an argument is out of range.\n"
    << "// Tensors are contiguous unless strides are listed; 16-bit floats travel as their bits (uint16_t).\n";
  for (const std::string& d : doc) h << "//   " << c_comment_text(d) << "\n";
  h << sig << ";\n\n"
    << "// The message of this thread's last failed call (\"\" if none).\n"
    << "const char* " << symbol << "_last_error(void);\n";
  if (target.is_cpu())
    h << "\n// Worker threads for later calls (0, the default: one per hardware thread; 1: the calling thread only).\n"
      << "void " << symbol << "_set_num_threads(int32_t num_threads);\n";
  h << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif  // " << guard << "\n";

  // The target-neutral entry.
  std::ostringstream e;
  e << "\n// ---- export_library: the C entry point (src/runtime/export_library.cc) ----\n"
    << "#include <stdarg.h>\n#include <stdio.h>\n\n"
    << "static thread_local char tl_aot_error[1024];\n"
    << "static void tl_aot_set_error(const char* message) { snprintf(tl_aot_error, sizeof tl_aot_error, \"%s\", message); }\n"
    << "__attribute__((format(printf, 1, 2))) static int32_t tl_aot_fail(const char* fmt, ...) {\n"
    << "  va_list ap;\n  va_start(ap, fmt);\n  vsnprintf(tl_aot_error, sizeof tl_aot_error, fmt, ap);\n  va_end(ap);\n"
    << "  return 2;\n}\n"
    << "static int32_t tl_aot_launch(const TLArg* args, int32_t num_args, void* stream);\n\n"
    << "extern \"C\" __attribute__((visibility(\"default\"))) " << sig << " {\n"
    << "  TLArg tl_aot_args[" << std::max<size_t>(num_slots, 1) << "];\n";
  for (const std::string& s : fill) e << "  " << s << "\n";
  for (const std::string& s : checks) e << "  " << s << "\n";
  e << "  return tl_aot_launch(tl_aot_args, " << num_slots << ", " << (stream_name.empty() ? "nullptr" : stream_name)
    << ");\n}\n\n"
    << "extern \"C\" __attribute__((visibility(\"default\"))) const char* " << symbol
    << "_last_error(void) { return tl_aot_error; }\n";

  AotRequest req;
  req.symbol = symbol;
  req.library_path = library_path;
  req.entry_source = e.str();
  req.original = f;
  req.kernel_source = kernel.kernel_source();
  req.artifact_dir = kernel.artifact_dir();
  req.options = kernel.options();
  make_backend(target)->export_library(req);

  ExportedLibrary out;
  out.library_path = library_path;
  out.header_path = (fs::path(library_path).parent_path() / (stem + ".h")).string();
  out.symbol = symbol;
  write_atomically(out.header_path, h.str());
  return out;
}

void build_aot_library(const std::string& source, const AotRequest& req, const std::vector<std::string>& compile_flags) {
  std::string tmp = make_temp_dir("tl-aot-");
  struct Cleanup {
    std::string dir;
    ~Cleanup() { remove_tree(dir); }
  } cleanup{tmp};
  const std::string src = tmp + "/" + req.symbol + ".cc", obj = tmp + "/" + req.symbol + ".o",
                    map = tmp + "/exports.map", so = tmp + "/lib.so";
  write_text_file(src, source);
  // Only the entry point and its <symbol>_* companions are exported, so two exported kernels (or
  // an exported kernel and the program) never bind each other's internals.
  write_text_file(map, "{\n  global: " + req.symbol + "; " + req.symbol + "_*;\n  local: *;\n};\n");
  ProcessOptions po;
  po.timeout_s = 600;
  po.cwd = tmp;
  std::vector<std::string> argv = system_cxx();
  for (const std::string& f : compile_flags)
    if (f != "-shared") argv.push_back(f);
  argv.insert(argv.end(), {"-c", "-o", obj, src});
  if (req.options.verbose) std::fprintf(stderr, "[tilelang] %s\n", format_command(argv).c_str());
  run_compiler(argv, "building the exported library '" + req.library_path + "'", po, src);
  // Linked without the compile flags: a fast-math kernel must not pull in crtfastmath.o, which
  // would set flush-to-zero in every program that loads the library.
  std::vector<std::string> link = system_cxx();
  link.insert(link.end(), {"-shared", "-fPIC", "-pthread", "-Wl,--version-script=" + map,
                           "-Wl,-soname," + fs::path(req.library_path).filename().string(), "-o", so, obj});
  if (req.options.verbose) std::fprintf(stderr, "[tilelang] %s\n", format_command(link).c_str());
  run_compiler(link, "linking the exported library '" + req.library_path + "'", po, "");
  std::string staged = req.library_path + ".tmp" + std::to_string(::getpid());
  std::error_code ec;
  fs::copy_file(so, staged, fs::copy_options::overwrite_existing, ec);
  if (ec || std::rename(staged.c_str(), req.library_path.c_str()) != 0) {
    std::remove(staged.c_str());
    throw_error<ValueError>("export_library: cannot write '", req.library_path, "'",
                            ec ? ": " + ec.message() : std::string());
  }
}

}  // namespace tl
