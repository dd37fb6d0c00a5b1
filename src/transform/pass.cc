#include "transform/pass.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

// A name as part of one file-name component: a kernel name is user text, so no '/', no leading '.'
// or '-', and only characters that need no quoting.
std::string dump_file_stem(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' ? c : '_';
  if (out.empty() || out[0] == '-' || out[0] == '.') out = "k" + out;
  return out.substr(0, 128);
}

// What named the dump directory, for messages.
const char* dump_source(const PassContext& ctx) {
  return config_bool(ctx.configs, "tl.enable_dump_ir") ? "pass config tl.dump_ir_path" : "TL_DUMP_IR";
}

// Writes `f` as <dir>/<kernel>.<stage>.tir; ValueError naming the setting when it cannot.
void write_dump(const std::string& dir, const PassContext& ctx, const PrimFunc& f, const std::string& stage) {
  std::string path = dir + "/" + dump_file_stem(f.name()) + "." + stage + ".tir";
  std::ofstream out(path);
  out << print_func(f);
  out.close();
  if (!out)
    throw_error<ValueError>(dump_source(ctx), " = '", dir, "': cannot write the IR dump '", path,
                            "'; point it at a writable directory or unset it");
}

}  // namespace

PassRunner::PassRunner(PrimFunc f, PassContext& ctx) : func_(std::move(f)), ctx_(ctx) {
  if (const char* d = std::getenv("TL_DUMP_IR"); d && *d) dump_dir_ = d;
  if (config_bool(ctx.configs, "tl.enable_dump_ir")) dump_dir_ = attr_str(ctx.configs, "tl.dump_ir_path", "dump_ir");
  if (const char* t = std::getenv("TL_PASS_TIMING"); t && *t && std::string(t) != "0") timing_ = true;
  if (!dump_dir_.empty()) {
    // Only the error_code overloads: a path the file system refuses (a component longer than
    // NAME_MAX, ...) must name the setting, not escape as a bare filesystem_error.
    std::error_code ec, is_dir_ec;
    std::filesystem::create_directories(dump_dir_, ec);
    if (ec && !std::filesystem::is_directory(dump_dir_, is_dir_ec))
      throw_error<ValueError>(dump_source(ctx), " = '", dump_dir_, "': cannot create the IR dump directory (",
                              ec.message(), "); point it at a writable directory or unset it");
    write_dump(dump_dir_, ctx_, func_, "00_input");
  }
  ctx_.stages.emplace_back("input", func_);
}

PassRunner::~PassRunner() {
  if (!timing_ || times_.empty()) return;
  double total = 0;
  for (auto& [n, t] : times_) total += t;
  std::fprintf(stderr, "[tilelang] pass timing for %s (%s), %.3f ms total\n", func_.name().c_str(),
               ctx_.target.str().c_str(), total);
  for (auto& [n, t] : times_) std::fprintf(stderr, "  %-32s %9.3f ms\n", n.c_str(), t);
}

PassRunner& PassRunner::run(const std::string& name, const PassFn& fn) {
  auto t0 = std::chrono::steady_clock::now();
  func_ = fn(func_, ctx_);
  verify(func_);
  auto t1 = std::chrono::steady_clock::now();
  times_.emplace_back(name, std::chrono::duration<double, std::milli>(t1 - t0).count());
  ++index_;
  ctx_.stages.emplace_back(name, func_);
  if (!dump_dir_.empty()) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%02d_", index_);
    write_dump(dump_dir_, ctx_, func_, prefix + dump_file_stem(name));
  }
  return *this;
}

static std::map<std::string, PassFn>& registry() {
  static std::map<std::string, PassFn> r;
  return r;
}

void register_pass(const std::string& name, PassFn fn) { registry()[name] = std::move(fn); }

const PassFn* find_pass(const std::string& name) {
  auto it = registry().find(name);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> registered_passes() {
  std::vector<std::string> out;
  for (auto& [k, v] : registry()) out.push_back(k);
  return out;
}

}  // namespace tl
