#include "ir/dtype.h"

#include <unordered_map>

#include "ir/error.h"

namespace tl {

std::string DataType::str() const {
  std::string base;
  switch (code) {
    case kInt: base = "int" + std::to_string(bits); break;
    case kUInt: base = "uint" + std::to_string(bits); break;
    case kFloat: base = "float" + std::to_string(bits); break;
    case kBFloat: base = "bfloat16"; break;
    case kBool: base = "bool"; break;
    case kFloat8E4M3: base = "float8_e4m3"; break;
    case kFloat8E5M2: base = "float8_e5m2"; break;
    case kFloat8E8M0: base = "float8_e8m0fnu"; break;
    case kFloat4E2M1: base = "float4_e2m1fn"; break;
    case kHandle: base = "handle"; break;
    case kVoid: return "void";
  }
  if (lanes != 1) base += "x" + std::to_string(lanes);
  return base;
}

static const std::unordered_map<std::string, DataType>& dtype_table() {
  static const std::unordered_map<std::string, DataType> table = {
      {"bool", DataType::Bool()},
      {"int8", DataType::Int(8)},       {"int16", DataType::Int(16)},
      {"int32", DataType::Int(32)},     {"int64", DataType::Int(64)},
      {"int", DataType::Int(32)},       {"uint8", DataType::UInt(8)},
      {"uint16", DataType::UInt(16)},   {"uint32", DataType::UInt(32)},
      {"uint64", DataType::UInt(64)},   {"float16", DataType::Float(16)},
      {"half", DataType::Float(16)},    {"float32", DataType::Float(32)},
      {"float", DataType::Float(32)},   {"float64", DataType::Float(64)},
      {"double", DataType::Float(64)},  {"bfloat16", DataType::BFloat16()},
      {"float8_e4m3", DataType::F8E4M3()}, {"float8_e4m3fn", DataType::F8E4M3()},
      {"e4m3_float8", DataType::F8E4M3()}, {"float8_e5m2", DataType::F8E5M2()},
      {"e5m2_float8", DataType::F8E5M2()}, {"float8_e8m0fnu", DataType::F8E8M0()},
      {"float8_e8m0", DataType::F8E8M0()}, {"float4_e2m1fn", DataType::F4E2M1()},
      {"float4_e2m1", DataType::F4E2M1()}, {"handle", DataType::Handle()},
      {"void", DataType::Void()},
  };
  return table;
}

bool try_parse_dtype(const std::string& name, DataType* out) {
  auto& table = dtype_table();
  auto it = table.find(name);
  if (it != table.end()) {
    *out = it->second;
    return true;
  }
  // Vector form "float32x4".
  auto x = name.rfind('x');
  if (x != std::string::npos && x + 1 < name.size() && x > 0) {
    auto base = table.find(name.substr(0, x));
    if (base != table.end()) {
      try {
        int lanes = std::stoi(name.substr(x + 1));
        if (lanes > 0 && lanes <= 1024) {
          *out = base->second.with_lanes(lanes);
          return true;
        }
      } catch (...) {
      }
    }
  }
  return false;
}

DataType parse_dtype(const std::string& name) {
  DataType t;
  if (try_parse_dtype(name, &t)) return t;
  throw_error<ValueError>("unknown dtype '", name,
                          "'; supported: bool, int8, int16, int32, int64, uint8, uint16, uint32, "
                          "uint64, float16, bfloat16, float32 (\"float\"), float64, float8_e4m3, "
                          "float8_e5m2, float8_e8m0fnu, float4_e2m1fn");
}

}  // namespace tl
