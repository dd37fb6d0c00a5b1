// Run-time instruction-set detection for the cpu target, and the compiler flags that follow from it.
//
// Kernels are compiled for the ISA set the host reports at run time (cpuid, xgetbv for the vector
// and tile state the OS saves, and for AMX the Linux permission request arch_prctl(
// ARCH_REQ_XCOMP_PERM, XTILEDATA)), not for what the compiler guesses with -march=native. The set
// can be capped lower with the environment variable TL_CPU_ISA or the pass config `tl.cpu_isa`
// (portable | avx2 | avx512 | native); the capped set's name is part of the kernel cache key, so a
// kernel built for one set is never handed to a host or a setting without it (docs/TARGET_CPU.md,
// "Instruction sets").
#pragma once

#include <string>
#include <vector>

#include "ir/buffer.h"

namespace tl {

struct CpuIsa {
  bool x86 = false;         // an x86-64 host (elsewhere: -march=native and the portable tier)
  bool avx2 = false;        // AVX2 + FMA + F16C, OS saves ymm state
  bool avx512 = false;      // AVX-512 F/BW/VL/DQ/CD, OS saves zmm and opmask state
  bool avx512_vnni = false;
  bool avx512_bf16 = false;
  bool avx512_fp16 = false;
  bool amx_tile = false;    // AMX-TILE reported, OS tile state enabled and permission granted
  bool amx_bf16 = false;
  bool amx_int8 = false;
  bool amx_fp16 = false;    // detected and reported only: no code uses it (GCC 12 has no -mamx-fp16)
  // Not a feature: the vendor (cpuid leaf 0 says "GenuineIntel"), for tuning choices that differ
  // between Intel and AMD cores (-DTL_CPU_TUNE_INTEL=1, next to -mtune=native). Not in names(): a
  // kernel tuned for one vendor runs correctly on the other.
  bool intel = false;

  // "portable", or the features joined by ',' (e.g. "avx2,avx512,avx512_vnni,avx512_bf16").
  std::string names() const;
  bool operator==(const CpuIsa& o) const { return names() == o.names(); }
};

// What this host supports (detected once; the AMX permission is requested once per process).
// TL_CPU_PRETEND_HOST_ISA=portable|avx2|avx512 caps what is reported (a testing hook: it lets a
// test see how a kernel built for a richer host is treated).
const CpuIsa& host_cpu_isa();

// `isa` capped at `cap` (portable | avx2 | avx512 | native; empty = native). ValueError otherwise.
CpuIsa cap_cpu_isa(const CpuIsa& isa, const std::string& cap);

// The cap in force: pass config `tl.cpu_isa` when set, else $TL_CPU_ISA, else "native".
std::string cpu_isa_cap(const AttrMap& pass_configs);

// The set kernels are compiled for: host_cpu_isa() capped by cpu_isa_cap(pass_configs).
CpuIsa target_cpu_isa(const AttrMap& pass_configs);

// -march/-m flags for `isa` (x86: -march=x86-64 plus one -m flag per feature, -mtune=native, and
// with AVX-512 -mprefer-vector-width=cpu_vector_width(); elsewhere -march=native), and on an Intel
// host -DTL_CPU_TUNE_INTEL=1 (the headers' tuning defaults for Intel cores, include/tl/cpu/isa.h).
std::vector<std::string> cpu_isa_flags(const CpuIsa& isa);

// The vector width GCC's auto-vectorizer prefers where AVX-512 is in the set: "512" unless
// $TL_CPU_VECTOR_WIDTH says "256" (another value is a ValueError). -mtune=native on an Intel server
// core (Skylake-SP .. Emerald Rapids) would otherwise pick 256-bit vectors for every element-wise
// loop, half the width of the hand-written GEMMs' (docs/TARGET_CPU.md, "Instruction sets").
std::string cpu_vector_width();

// Features in `required` (a names() string) that `have` lacks, joined by ','; empty when none.
std::string missing_cpu_features(const std::string& required, const CpuIsa& have);

}  // namespace tl
