// C++ names for the IR's variables and buffers in emitted cuda code (codegen_impl.h's NameTable): a
// valid identifier made from the IR name, unique in the source, never reserved by C++, CUDA or
// tilelang's device library.
#include <cctype>

#include "target/c_source.h"
#include "target/cuda/codegen_impl.h"

namespace tl {
namespace cuda_codegen {

namespace {

// The names emitted code may not give a user's variable: C++'s (target/c_source.h, shared with the
// cpu code generator), CUDA's built-in variables, types and vector types, and tilelang's runtime.
bool reserved_name(const std::string& n) {
  static const std::set<std::string> ours = [] {
    std::set<std::string> r = {"tl", "half", "half2", "nv_bfloat16", "nv_bfloat162", "tl_smem", "threadIdx",
                               "blockIdx", "blockDim", "gridDim", "warpSize", "dim3", "cute", "cutlass",
                               "bfloat16_t", "half_t", "float_e4m3_t", "float_e5m2_t"};
    for (const char* t : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong",
                          "ulonglong", "float", "double"})
      for (int k = 1; k <= 4; ++k) r.insert(t + std::to_string(k));
    return r;
  }();
  return ours.count(n) || cxx_reserved_words().count(n);
}

}  // namespace

std::string NameTable::get(const void* key, const std::string& hint) {
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  std::string base;
  for (char c : hint) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v_" + base;
  if (base.rfind("__", 0) == 0) base = "v" + base;
  std::string name = base;
  for (int i = 1; used_.count(name) || reserved_name(name); ++i) name = base + "_" + std::to_string(i);
  used_.insert(name);
  names_[key] = name;
  return name;
}

}  // namespace cuda_codegen
}  // namespace tl
