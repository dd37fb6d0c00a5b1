// Compilation targets: cpu, cuda (sm_80 ... sm_90a), ascend (models A2, A3).
#pragma once

#include <string>

namespace tl {

struct Target {
  enum Kind { kCPU, kCUDA, kAscend };
  Kind kind = kCPU;
  // cuda: "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a" (default sm_80 until the device is known).
  std::string arch;
  // ascend: "A2" or "A3".
  std::string model;
  // ascend spelled "npuir" (TileLang-Ascend's NPUIR route): the compiler does the cube/vector split
  // and inserts every synchronisation (TL_ASCEND_AUTO_CV_COMBINE, _AUTO_CV_SYNC, _AUTO_SYNC on).
  bool npuir = false;
  // ascend reached through TileLang-Ascend's AscendC route (target "ascendc", or "auto" for an
  // is_npu kernel): its kernels are built by bisheng with --cce-auto-sync, which orders vector ->
  // vector and scalar <-> MTE2/MTE3/vector accesses itself. Compiles enable the pass config
  // tl.ascend_vendor_auto_sync unless it is given (runtime/compile.cc).
  bool vendor_sync = false;

  bool is_cpu() const { return kind == kCPU; }
  bool is_cuda() const { return kind == kCUDA; }
  bool is_ascend() const { return kind == kAscend; }
  // The SM number of a cuda target: 80, 86, 89, 90.
  int sm() const;
  bool is_hopper() const { return is_cuda() && sm() >= 90; }
  // Canonical text: "cpu", "cuda -arch=sm_90a", "ascend -model=A2".
  std::string str() const;
  const char* kind_name() const;

  // Parses a target string. "auto" picks cuda when `cuda_available`, else cpu; a kernel marked
  // is_npu picks ascend. Aliases: "npu", "npuir", "ascendc", "pto" -> ascend, "c"/"llvm"/"host" -> cpu.
  // Unknown names raise ValueError listing the supported ones.
  static Target parse(const std::string& text, bool cuda_available = false, bool is_npu = false);
};

}  // namespace tl
