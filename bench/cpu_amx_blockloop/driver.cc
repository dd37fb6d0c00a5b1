/* Loads the variant objects named on the command line and times them in interleaved rounds by
 * thread CPU time (2048^3; A and B on 2 MiB-aligned, huge-page-advised memory as numpy's are).
 * bf16 variants are first checked against a float64 product at 64 random entries.
 * usage: driver ROUNDS [--int8|--f32] variant.so... ; prints GFLOP/s (GOP/s) and the median paired
 * speedup of each variant over the first. MISALIGN=16 shifts the operands as numpy places them. */
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static double thread_seconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
/* MISALIGN=16: every operand starts 16 bytes past the 2 MiB boundary, as numpy's large arrays
 * (malloc'd by mmap) start 16 bytes past a page. */
static void* big(size_t bytes) {
  const size_t h = size_t(1) << 21, off = getenv("MISALIGN") ? size_t(atoi(getenv("MISALIGN"))) : 0;
  char* p = static_cast<char*>(aligned_alloc(h, (bytes + off + h - 1) / h * h));
  madvise(p, bytes + off, MADV_HUGEPAGE);
  memset(p, 0, bytes + off);
  return p + off;
}
static float bf16_value(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return uint16_t((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

int main(int argc, char** argv) {
  typedef void (*Run)(const void*, const void*, void*);
  constexpr int N = 2048;
  int rounds = argc > 1 ? atoi(argv[1]) : 20, first = 2;
  bool int8 = argc > 2 && std::string(argv[2]) == "--int8";
  bool f32 = argc > 2 && std::string(argv[2]) == "--f32";
  if (int8 || f32) first = 3;
  std::vector<Run> fns;
  std::vector<std::string> names;
  for (int i = first; i < argc; ++i) {
    void* h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) return printf("%s\n", dlerror()), 1;
    fns.push_back(reinterpret_cast<Run>(dlsym(h, "run")));
    names.push_back(argv[i]);
  }
  if (fns.empty()) return printf("usage: driver ROUNDS [--int8] variant.so...\n"), 1;
  uint16_t* A = static_cast<uint16_t*>(big(size_t(N) * N * 4));
  uint16_t* B = static_cast<uint16_t*>(big(size_t(N) * N * 4));
  float* Af = reinterpret_cast<float*>(A);
  float* Bf = reinterpret_cast<float*>(B);
  float* C = static_cast<float*>(big(size_t(N) * N * 4));
  srand(1);
  if (f32) {
    for (size_t i = 0; i < size_t(N) * N; ++i) Af[i] = (rand() % 2001 - 1000) / 1000.f;
    for (size_t i = 0; i < size_t(N) * N; ++i) Bf[i] = (rand() % 2001 - 1000) / 1000.f;
  } else if (int8) {
    for (size_t i = 0; i < size_t(N) * N; ++i) reinterpret_cast<int8_t*>(A)[i] = int8_t(rand() % 256 - 128);
    for (size_t i = 0; i < size_t(N) * N; ++i) reinterpret_cast<int8_t*>(B)[i] = int8_t(rand() % 256 - 128);
  } else {
    for (size_t i = 0; i < size_t(N) * N; ++i) A[i] = to_bf16((rand() % 2001 - 1000) / 1000.f);
    for (size_t i = 0; i < size_t(N) * N; ++i) B[i] = to_bf16((rand() % 2001 - 1000) / 1000.f);
  }
  for (size_t v = 0; v < fns.size() && !getenv("NOCHECK"); ++v) {  // correctness (NOCHECK=1: timing-only experiments) of each variant at 64 entries
    fns[v](A, B, C);
    for (int t = 0; t < 64; ++t) {
      int i = rand() % N, j = rand() % N;
      double s = 0, got;
      if (f32) {
        for (int k = 0; k < N; ++k) s += double(Af[size_t(i) * N + k]) * Bf[size_t(k) * N + j];
        got = C[size_t(i) * N + j];
      } else if (int8) {
        for (int k = 0; k < N; ++k)
          s += double(reinterpret_cast<int8_t*>(A)[size_t(i) * N + k]) * reinterpret_cast<int8_t*>(B)[size_t(k) * N + j];
        got = reinterpret_cast<int32_t*>(C)[size_t(i) * N + j];
      } else {
        for (int k = 0; k < N; ++k) s += double(bf16_value(A[size_t(i) * N + k])) * bf16_value(B[size_t(k) * N + j]);
        got = C[size_t(i) * N + j];
      }
      if (std::abs(s - got) > (int8 ? 0.0 : 1e-3)) return printf("%s: C[%d, %d] = %g, expected %g\n", argv[v + first], i, j, got, s), 1;
    }
  }
  std::vector<std::vector<double>> t(fns.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t v = 0; v < fns.size(); ++v) {
      double t0 = thread_seconds();
      fns[v](A, B, C);
      t[v].push_back(thread_seconds() - t0);
    }
  for (size_t v = 0; v < fns.size(); ++v) {
    std::vector<double> ratio, s = t[v];
    for (int r = 0; r < rounds; ++r) ratio.push_back(t[0][r] / t[v][r]);
    std::sort(ratio.begin(), ratio.end());
    std::sort(s.begin(), s.end());
    printf("%-28s median %7.1f G%s/s  speedup over the first: median %.3f (q1 %.3f, q3 %.3f)\n", names[v].c_str(),
           2.0 * N * N * N / s[s.size() / 2] / 1e9, int8 ? "OP" : "FLOP", ratio[ratio.size() / 2],
           ratio[ratio.size() / 4], ratio[3 * ratio.size() / 4]);
  }
}
