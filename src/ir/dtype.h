// Scalar and vector data types of the tile IR.
#pragma once

#include <cstdint>
#include <string>

namespace tl {

// A DataType is a (code, bits, lanes) triple, as in DLPack. lanes > 1 only appears after
// vectorization; every user-visible type has lanes == 1.
struct DataType {
  enum Code : uint8_t {
    kInt = 0,
    kUInt = 1,
    kFloat = 2,
    kHandle = 3,  // opaque pointer
    kBFloat = 4,
    kBool = 5,
    kFloat8E4M3 = 6,
    kFloat8E5M2 = 7,
    kVoid = 8,
    kFloat8E8M0 = 9,  // float8_e8m0fnu: unsigned, exponent only (MX scale factors)
    kFloat4E2M1 = 10,  // float4_e2m1fn: 4 bits (packed two a byte in global memory: docs/FLOAT4.md)
  };
  Code code = kVoid;
  uint8_t bits = 0;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(Code c, int b, int l = 1)
      : code(c), bits(static_cast<uint8_t>(b)), lanes(static_cast<uint16_t>(l)) {}

  static constexpr DataType Bool() { return {kBool, 8}; }
  static constexpr DataType Int(int bits) { return {kInt, bits}; }
  static constexpr DataType UInt(int bits) { return {kUInt, bits}; }
  static constexpr DataType Float(int bits) { return {kFloat, bits}; }
  static constexpr DataType BFloat16() { return {kBFloat, 16}; }
  static constexpr DataType F8E4M3() { return {kFloat8E4M3, 8}; }
  static constexpr DataType F8E5M2() { return {kFloat8E5M2, 8}; }
  static constexpr DataType F8E8M0() { return {kFloat8E8M0, 8}; }
  static constexpr DataType F4E2M1() { return {kFloat4E2M1, 4}; }
  static constexpr DataType Handle() { return {kHandle, 64}; }
  static constexpr DataType Void() { return {kVoid, 0}; }
  static constexpr DataType Int32() { return Int(32); }
  static constexpr DataType Int64() { return Int(64); }
  static constexpr DataType Float32() { return Float(32); }

  bool is_int() const { return code == kInt; }
  bool is_uint() const { return code == kUInt; }
  bool is_integer() const { return code == kInt || code == kUInt; }  // not bool
  bool is_bool() const { return code == kBool; }
  // Any floating-point format, including bf16 and fp8.
  bool is_float() const {
    return code == kFloat || code == kBFloat || is_fp8() || is_fp4();
  }
  // Any 8-bit float: e4m3, e5m2 and the exponent-only e8m0 (not a GEMM operand type).
  bool is_fp8() const { return code == kFloat8E4M3 || code == kFloat8E5M2 || code == kFloat8E8M0; }
  // float4_e2m1fn. Its elements are packed two a byte only in kernel-parameter (global) buffers;
  // on-chip buffers hold one element a byte (element_bytes() == 1). docs/FLOAT4.md.
  bool is_fp4() const { return code == kFloat4E2M1; }
  bool is_handle() const { return code == kHandle; }
  bool is_void() const { return code == kVoid; }
  bool is_scalar() const { return lanes == 1; }
  int bytes() const { return (bits * lanes + 7) / 8; }
  // Size in bytes of one element (lanes ignored).
  int element_bytes() const { return (bits + 7) / 8; }

  DataType with_lanes(int l) const { return DataType(code, bits, l); }
  DataType element_of() const { return with_lanes(1); }

  bool operator==(const DataType& o) const {
    return code == o.code && bits == o.bits && lanes == o.lanes;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }

  // Canonical name: "float16", "bfloat16", "int32", "bool", "float8_e4m3", "float32x4".
  std::string str() const;
};

// Parses a dtype name. Accepts the canonical names and the aliases kernel authors use:
// "float" (= float32), "half", "double", "int", "float8_e4m3fn", "e4m3_float8", ...
// Throws ValueError naming the supported types on an unknown name.
DataType parse_dtype(const std::string& name);
// Like parse_dtype but returns false instead of throwing.
bool try_parse_dtype(const std::string& name, DataType* out);

}  // namespace tl
