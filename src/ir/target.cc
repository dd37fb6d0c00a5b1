#include "ir/target.h"

#include <sstream>
#include <vector>

#include "ir/error.h"

namespace tl {

int Target::sm() const {
  if (!is_cuda()) return 0;
  // "sm_90a" -> 90
  int v = 0;
  for (char c : arch)
    if (c >= '0' && c <= '9') v = v * 10 + (c - '0');
  return v;
}

const char* Target::kind_name() const {
  switch (kind) {
    case kCPU: return "cpu";
    case kCUDA: return "cuda";
    case kAscend: return "ascend";
  }
  return "?";
}

std::string Target::str() const {
  switch (kind) {
    case kCPU: return "cpu";
    case kCUDA: return "cuda -arch=" + arch;
    case kAscend: return (npuir ? "npuir -model=" : "ascend -model=") + model;
  }
  return "?";
}

static const char* kSupported =
    "supported targets: \"auto\", \"cpu\", \"cuda\", \"cuda -arch=sm_80|sm_86|sm_89|sm_90|sm_90a\", "
    "\"ascend\", \"ascend -model=A2|A3\" (aliases \"npu\", \"npuir\", \"ascendc\", \"pto\")";

Target Target::parse(const std::string& text, bool cuda_available, bool is_npu) {
  std::istringstream is(text);
  std::string kind;
  is >> kind;
  std::vector<std::string> opts;
  for (std::string o; is >> o;) opts.push_back(o);
  Target t;
  if (kind.empty() || kind == "auto") {
    if (!opts.empty()) throw_error<ValueError>("target 'auto' takes no options; ", kSupported);
    if (is_npu) {
      t.kind = kAscend;
      t.model = "A2";
      t.vendor_sync = true;
    } else if (cuda_available) {
      t.kind = kCUDA;
      t.arch = "sm_80";
    } else {
      t.kind = kCPU;
    }
    return t;
  }
  if (kind == "cpu" || kind == "c" || kind == "llvm" || kind == "host") {
    t.kind = kCPU;
  } else if (kind == "cuda" || kind == "nvidia") {
    t.kind = kCUDA;
    t.arch = "sm_80";
  } else if (kind == "ascend" || kind == "npu" || kind == "npuir" || kind == "ascendc" || kind == "pto") {
    // "ascendc" and "pto" are TileLang-Ascend's code generators for the same NPU (AscendC C++ and
    // PTO tile instructions); both compile the kernel as written, as "ascend" does.
    t.kind = kAscend;
    t.model = "A2";
    t.npuir = kind == "npuir";
    t.vendor_sync = kind == "ascendc";
  } else {
    throw_error<ValueError>("unknown target '", text, "'; ", kSupported);
  }
  for (auto& o : opts) {
    auto eq = o.find('=');
    std::string key = o.substr(0, eq), val = eq == std::string::npos ? "" : o.substr(eq + 1);
    if (t.kind == kCUDA && (key == "-arch" || key == "--arch")) {
      static const char* archs[] = {"sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"};
      bool ok = false;
      for (auto* a : archs) ok |= val == a;
      if (!ok) throw_error<ValueError>("unsupported cuda architecture '", val, "' in target '", text, "'; ", kSupported);
      t.arch = val;
    } else if (t.kind == kAscend && (key == "-model" || key == "--model")) {
      if (val != "A2" && val != "A3")
        throw_error<ValueError>("unknown ascend model '", val, "' in target '", text, "'; ", kSupported);
      t.model = val;
    } else {
      throw_error<ValueError>("unknown option '", o, "' in target '", text, "'; ", kSupported);
    }
  }
  return t;
}

}  // namespace tl
