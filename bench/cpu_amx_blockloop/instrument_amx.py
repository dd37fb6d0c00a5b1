"""Writes a copy of include/tl/cpu/gemm.h whose AMX driver (gemm_amx) counts timestamp-counter ticks per
phase and takes the timing-only oracles of the twentieth session (bench/cpu_amx_blockloop/profile.sh,
docs/PERFORMANCE.md):

  python instrument_amx.py include/tl/cpu/gemm.h OUT/tl/cpu/gemm.h

Phases (tl::cpu::gemm_impl::amx_prof): [0] packing B, [1] packing A, [2] the 3 x 1 tile blocks, [3] calls.
Oracles (results wrong; upper bounds of what removing a cost could give), each a -D flag:
  ORACLE_A  A packed only by the first four row blocks of each instantiation, then the stale block reused
  ORACLE_B  B packed once per instantiation into a static buffer, then reused
  ORACLE_C  the 3 x 1 blocks' C tiles loaded from / stored to one L1 scratch block instead of C
Edits are made at anchor texts of gemm_amx; when gemm.h changes there, this script fails and names the anchor."""
import sys


EDITS = [
    ("template <int M, int N, int K, bool TRANS_B, typename T, typename Acc>\ninline void gemm_amx(",
     "inline uint64_t amx_prof[4];  // ticks: B pack, A pack, 3 x 1 tile blocks; and calls\n"
     "inline uint64_t amx_tsc() { return __builtin_ia32_rdtsc(); }\n"
     "template <int M, int N, int K, bool TRANS_B, typename T, typename Acc>\ninline void gemm_amx("),
    ("    if (!hit) {\n      if constexpr (kF16)",
     "#ifdef ORACLE_B\n"
     "    static bool b_done = false;\n"
     "    alignas(64) static uint32_t b_static[NTL * SC * 256];\n"
     "    uint32_t* const bpk2 = b_static;\n"
     "    const bool b_skip = b_done;\n"
     "    b_done = true;\n"
     "#else\n"
     "    uint32_t* const bpk2 = bpk;\n"
     "    const bool b_skip = false;\n"
     "#endif\n"
     "    const uint64_t t_b = amx_tsc();\n"
     "    if (!hit && !b_skip) {\n      if constexpr (kF16)"),
    ("      else amx_pack_b<N, TRANS_B>(B, ldb, s0, sc, bpk);\n    }",
     "      else amx_pack_b<N, TRANS_B>(B, ldb, s0, sc, bpk2);\n    }\n"
     "    amx_prof[0] += amx_tsc() - t_b;"),
    ("    const char* bp = reinterpret_cast<const char*>(bpk);",
     "    const char* bp = reinterpret_cast<const char*>(bpk2);"),
    ("      if (direct_a) return reinterpret_cast<const char*>(A + int64_t(i0) * lda) + int64_t(s0) * 64;",
     "      if (direct_a) return reinterpret_cast<const char*>(A + int64_t(i0) * lda) + int64_t(s0) * 64;\n"
     "      const uint64_t t_a = amx_tsc();\n"
     "#ifdef ORACLE_A\n"
     "      static int a_done = 0;\n"
     "      if (a_done++ >= 4) {\n"
     "        amx_prof[1] += amx_tsc() - t_a;\n"
     "        return a_blk;\n"
     "      }\n"
     "#endif"),
    ("        else amx_pack_a<1>(A, lda, i0, s0, sc, a_blk);\n      }\n      return a_blk;",
     "        else amx_pack_a<1>(A, lda, i0, s0, sc, a_blk);\n      }\n"
     "      amx_prof[1] += amx_tsc() - t_a;\n      return a_blk;"),
    ("    for (int i0 = 0; i0 < M3; i0 += 48) {\n"
     "      const char* ap = a_rows(i0, 3);\n"
     "      char* ci = reinterpret_cast<char*>(C + i0 * ldc);\n"
     "      for (int jt = 0; jt < NTL; ++jt)\n"
     "        amx_block31<kBf16>(sc, ap, a_ts, a_ss, a_rs, bp + jt * bt, ci + jt * 64, c_ld, lc);\n"
     "    }",
     "#ifdef ORACLE_C\n"
     "    alignas(64) static char c_scratch[48 * 128];\n"
     "#endif\n"
     "    for (int i0 = 0; i0 < M3; i0 += 48) {\n"
     "      const char* ap = a_rows(i0, 3);\n"
     "      const uint64_t t_t = amx_tsc();\n"
     "#ifdef ORACLE_C\n"
     "      for (int jt = 0; jt < NTL; ++jt)\n"
     "        amx_block31<kBf16>(sc, ap, a_ts, a_ss, a_rs, bp + jt * bt, c_scratch + (jt & 1) * 64, 128, lc);\n"
     "#else\n"
     "      char* ci = reinterpret_cast<char*>(C + i0 * ldc);\n"
     "      for (int jt = 0; jt < NTL; ++jt)\n"
     "        amx_block31<kBf16>(sc, ap, a_ts, a_ss, a_rs, bp + jt * bt, ci + jt * 64, c_ld, lc);\n"
     "#endif\n"
     "      amx_prof[2] += amx_tsc() - t_t;\n"
     "    }"),
    ("  amx_release();\n}\n#endif", "  amx_release();\n  amx_prof[3] += 1;\n}\n#endif"),
]


def instrument(text):
    for anchor, replacement in EDITS:
        if text.count(anchor) != 1:
            raise SystemExit(f"instrument_amx.py: anchor found {text.count(anchor)} times in gemm.h "
                             f"(expected once); update EDITS for:\n{anchor}")
        text = text.replace(anchor, replacement)
    return text


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1]) as f:
        src = f.read()
    import os
    os.makedirs(os.path.dirname(os.path.abspath(sys.argv[2])), exist_ok=True)
    with open(sys.argv[2], "w") as f:
        f.write(instrument(src))
