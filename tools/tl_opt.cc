// tl-opt: runs registered passes over textual IR and prints the result.
//
//   tl-opt input.tir [--pass NAME]... [--target cpu|cuda|ascend] [--config key=value]...
//          [--print-after-each] [--canonical] [--list-passes]
//
// The input (a file, or `-` for stdin) is one function in the syntax of docs/IR_TEXT.md. It is
// verified, the passes run in order through a PassRunner (which verifies after each), and the
// final IR is printed to stdout. Any error prints a message on stderr and exits with status 1.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "transform/pass.h"
#include "transform/pass_config.h"

namespace {

// A no-op pass: `tl-opt f.tir --pass identity` parses, verifies and reprints (normalizes) a file.
TL_REGISTER_PASS("identity", [](const tl::PrimFunc& f, const tl::PassContext&) { return f; });

const char* kUsage =
    "usage: tl-opt INPUT.tir|- [--pass NAME]... [--target cpu|cuda|ascend] [--config KEY=VALUE]...\n"
    "              [--print-after-each] [--canonical] [--list-passes]\n"
    "  --pass NAME          run the registered pass NAME (repeatable, in order)\n"
    "  --target T           target the passes see (default cpu; e.g. \"cuda -arch=sm_90a\")\n"
    "  --config KEY=VALUE   a pass config (tl.* keys); VALUE true/false, an integer, or a string\n"
    "  --print-after-each   print the IR after every pass, each preceded by a '// after NAME' line\n"
    "  --canonical          print with alpha-renamed names (the kernel-cache form)\n"
    "  --list-passes        print the registered pass names and exit\n";

struct Options {
  std::string input;
  std::vector<std::string> passes;
  std::string target = "cpu";
  tl::AttrMap configs;
  bool print_after_each = false;
  bool canonical = false;
  bool list_passes = false;
  bool help = false;
};

tl::Attr config_value(const std::string& v) {
  if (v == "true" || v == "True") return tl::Attr(true);
  if (v == "false" || v == "False") return tl::Attr(false);
  if (!v.empty()) {
    char* end = nullptr;
    long long i = std::strtoll(v.c_str(), &end, 10);
    if (end && *end == '\0') return tl::Attr(static_cast<int64_t>(i));
  }
  return tl::Attr(v);
}

Options parse_args(int argc, char** argv) {
  Options o;
  auto value = [&](int& i, const char* flag) -> std::string {
    if (i + 1 >= argc) tl::throw_error<tl::ValueError>("option ", flag, " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--pass") {
      o.passes.push_back(value(i, "--pass"));
    } else if (a == "--target") {
      o.target = value(i, "--target");
    } else if (a == "--config") {
      std::string kv = value(i, "--config");
      auto eq = kv.find('=');
      if (eq == std::string::npos || eq == 0)
        tl::throw_error<tl::ValueError>("--config expects KEY=VALUE, got '", kv, "'");
      o.configs[kv.substr(0, eq)] = config_value(kv.substr(eq + 1));
    } else if (a == "--print-after-each") {
      o.print_after_each = true;
    } else if (a == "--canonical") {
      o.canonical = true;
    } else if (a == "--list-passes") {
      o.list_passes = true;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      tl::throw_error<tl::ValueError>("unknown option '", a, "'");
    } else {
      if (!o.input.empty()) tl::throw_error<tl::ValueError>("more than one input given ('", o.input, "' and '", a, "')");
      o.input = a;
    }
  }
  return o;
}

std::string read_input(const std::string& path) {
  std::ostringstream ss;
  if (path == "-") {
    ss << std::cin.rdbuf();
    return ss.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) tl::throw_error<tl::ValueError>("cannot read input file '", path, "'");
  ss << in.rdbuf();
  return ss.str();
}

int run(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (o.list_passes) {
    for (auto& p : tl::registered_passes()) std::printf("%s\n", p.c_str());
    return 0;
  }
  if (o.input.empty()) tl::throw_error<tl::ValueError>("no input file (use '-' for stdin)\n", kUsage);
  // Resolve everything the command line names before doing any work.
  std::vector<std::pair<std::string, const tl::PassFn*>> passes;
  for (auto& name : o.passes) {
    const tl::PassFn* fn = tl::find_pass(name);
    if (!fn) {
      std::string known;
      for (auto& p : tl::registered_passes()) known += (known.empty() ? "" : ", ") + p;
      tl::throw_error<tl::ValueError>("unknown pass '", name, "'; registered passes: ",
                                      known.empty() ? "(none)" : known);
    }
    passes.emplace_back(name, fn);
  }
  tl::PassContext ctx;
  ctx.target = tl::Target::parse(o.target);
  ctx.configs = tl::validate_pass_configs(o.configs);

  std::string text = read_input(o.input);
  tl::PrimFunc f = tl::parse_func(text, o.input == "-" ? "<stdin>" : o.input);
  tl::verify(f);

  tl::PrintOptions print_options;
  print_options.canonical_names = o.canonical;
  tl::PassRunner runner(f, ctx);
  for (auto& [name, fn] : passes) {
    runner.run(name, *fn);
    if (o.print_after_each) {
      std::printf("// after %s\n%s\n", name.c_str(), tl::print_func(runner.func(), print_options).c_str());
      std::fflush(stdout);
    }
  }
  if (!o.print_after_each || passes.empty()) std::fputs(tl::print_func(runner.func(), print_options).c_str(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const tl::Error& e) {
    std::fprintf(stderr, "tl-opt: error: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tl-opt: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "tl-opt: internal error: unknown exception\n");
  }
  return 1;
}
