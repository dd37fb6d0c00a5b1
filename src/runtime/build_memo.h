#pragma once
// Builds shared between compiles whose generated source is the same.
//
// The cache key of a compile is its input IR (runtime/compile.h). An autotuner's configurations
// often differ only in parameters that the target ignores (`num_stages` and `threads` on cpu,
// where TileLang's examples tune 720 gemv configurations that generate 36 distinct C++ files):
// different keys, identical kernel source. The system compiler (or NVRTC) is then run once per
// distinct (source, target, pass configs, flags, toolchain) in this process; every other compile
// of that source gets a copy of the artifact files the first build wrote. A build of a key that
// another thread is running waits for it instead of starting a second one.

#include <cstddef>
#include <functional>
#include <string>

namespace tl {

// Runs `build(dir)` unless this process already built `build_key` (or is building it on another
// thread: then waits for it); in that case writes the files that build produced into `dir`
// instead. Returns true when the files were reused. A build that throws is not remembered (the
// next compile of the key builds again, and reports its own error).
bool build_once(const std::string& build_key, const std::string& dir,
                const std::function<void(const std::string& dir)>& build);

struct BuildMemoStats {
  size_t builds = 0;   // builds run through build_once
  size_t reuses = 0;   // compiles that got an earlier build's files
  size_t entries = 0;  // builds remembered now
};
BuildMemoStats build_memo_stats();

// Forgets every remembered build (tests; clear_compile_memo calls it).
void clear_build_memo();

}  // namespace tl
