/* variant.cc built against the gemm.h that instrument_amx.py writes: prints, at exit, the share of the
 * AMX driver's ticks in each phase (profile.sh). VNAME names the build in that line. */
#include "variant.cc"

#include <stdio.h>

#ifndef VNAME
#define VNAME "variant"
#endif

__attribute__((destructor)) static void print_amx_profile() {
  const uint64_t* p = tl::cpu::gemm_impl::amx_prof;
  const double total = double(p[0] + p[1] + p[2]);
  if (total == 0) return;
  fprintf(stderr, "%-12s %llu calls: B pack %.1f%%  A pack %.1f%%  3x1 tile blocks %.1f%%  (Mticks %.1f / %.1f / %.1f)\n",
          VNAME, static_cast<unsigned long long>(p[3]), 100 * p[0] / total, 100 * p[1] / total, 100 * p[2] / total,
          p[0] / 1e6, p[1] / 1e6, p[2] / 1e6);
}
