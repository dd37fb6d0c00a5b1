#include "transform/pass_config.h"

#include <sstream>

#include "ir/error.h"

namespace tl {

const std::vector<PassConfigKeyInfo>& pass_config_keys() {
  static const std::vector<PassConfigKeyInfo> keys = {
      {"TL_ASCEND_AUTO_SYNC", "tl.ascend_auto_sync", Attr::kBool,
       "ascend: insert intra-core set_flag/wait_flag/pipe_barrier automatically"},
      {"TL_ASCEND_VENDOR_AUTO_SYNC", "tl.ascend_vendor_auto_sync", Attr::kBool,
       "ascend: add the syncs TileLang-Ascend's AscendC route leaves to bisheng --cce-auto-sync (vector -> "
       "vector, scalar <-> MTE2/MTE3/vector); on by default for targets \"auto\" and \"ascendc\""},
      {"TL_ASCEND_MEMORY_PLANNING", "tl.ascend_memory_planning", Attr::kBool,
       "ascend: plan on-chip addresses with liveness-based reuse"},
      {"TL_ASCEND_AUTO_CV_COMBINE", "tl.ascend_auto_cv_combine", Attr::kBool,
       "ascend: split cube and vector code automatically (Developer mode)"},
      {"TL_ASCEND_AUTO_CV_SYNC", "tl.ascend_auto_cross_core_sync", Attr::kBool,
       "ascend: insert cross-core flags (requires TL_ASCEND_AUTO_CV_COMBINE)"},
      {"TL_ASCEND_SIM_LENIENT", "tl.ascend_sim_lenient", Attr::kBool,
       "ascend simulator: order conflicting accesses silently instead of reporting races"},
      {"TL_ASCEND_SIM_STRICT", "tl.ascend_sim_strict", Attr::kBool,
       "ascend simulator: report a byte-identical write-after-write on GM between blocks as a race (default: a "
       "warning)"},
      {"TL_DISABLE_WARP_SPECIALIZED", "tl.disable_warp_specialized", Attr::kBool,
       "cuda: do not warp-specialize pipelined loops"},
      {"TL_DISABLE_TMA_LOWER", "tl.disable_tma_lower", Attr::kBool, "cuda: do not lower copies to TMA"},
      {"TL_DISABLE_TMA_STORE", "tl.disable_tma_store", Attr::kBool,
       "cuda sm_90a: warp-specialized kernels store their output tiles from registers to global memory "
       "instead of staging them in shared memory for a TMA (bulk tensor) store"},
      {"TL_DISABLE_STMATRIX", "tl.disable_stmatrix", Attr::kBool,
       "cuda sm_90: fragments copied into 16-bit shared tiles move by element pairs (st.shared) instead of "
       "stmatrix"},
      {"TL_DISABLE_TMA_MULTICAST", "tl.disable_tma_multicast", Attr::kBool,
       "cuda sm_90a: in thread-block clusters, each CTA loads its own copy of the tiles the cluster shares "
       "(no multicast)"},
      {"TL_DISABLE_STORE_EXCHANGE", "tl.disable_store_exchange", Attr::kBool,
       "cuda: stores of mma / wgmma accumulators move each lane's own element pairs instead of exchanging "
       "them across lanes for 16-byte stores"},
      {"TL_ENABLE_WARPGROUP_PINGPONG", "tl.enable_warpgroup_pingpong", Attr::kBool,
       "cuda sm_90a: the two consumer warpgroups of a warp-specialized loop with two GEMMs take turns on the "
       "tensor cores (off by default: slower than lockstep on an H100, docs/PERFORMANCE.md)"},
      {"TL_DISABLE_WARPGROUP_PINGPONG", "tl.disable_warpgroup_pingpong", Attr::kBool,
       "cuda sm_90a: no warpgroup ping-pong even where TL_ENABLE_WARPGROUP_PINGPONG asks for it"},
      {"TL_DISABLE_WGMMA_OVERLAP", "tl.disable_wgmma_overlap", Attr::kBool,
       "cuda sm_90a: in a warp-specialized loop of a first GEMM (or several into one accumulator), work, and "
       "a second GEMM (attention, MLA decoding), wait for each GEMM where it is issued instead of running the "
       "second GEMM of one iteration under the work of the next (the overlap is applied only where it leaves "
       "the producer a stage to prefetch into: see docs/TARGET_CUDA.md)"},
      {"TL_DISABLE_PROLOGUE_TMA", "tl.disable_prologue_tma", Attr::kBool,
       "cuda sm_90a: copies before a warp-specialized loop (attention's Q) stay thread copies of the consumers "
       "instead of TMA copies of the producer"},
      {"TL_DISABLE_LOOP_PROXY_FENCE_ELISION", "tl.disable_loop_proxy_fence_elision", Attr::kBool,
       "cuda sm_90a: in the overlapped loop of a warp-specialized kernel, the first GEMM fences the async proxy "
       "in every iteration even where its thread-written operand (causal attention's Q) was fenced in the "
       "first one"},
      {"TL_DISABLE_WGMMA_ZERO_INIT", "tl.disable_wgmma_zero_init", Attr::kBool,
       "cuda sm_90a: a T.gemm on wgmma that clears its accumulator (clear_accum, or a clear or mask "
       "initialization of it just before, folded by warp_specialize) clears the registers first instead of "
       "starting from zero in the instruction (scale-d = 0)"},
      {"TL_DISABLE_DEFERRED_ROW_SUM", "tl.disable_deferred_row_sum", Attr::kBool,
       "cuda sm_90a: in a warp-specialized loop, a row sum accumulated into a running sum (attention's "
       "T.reduce_sum(P, s); l = l * a + s) is combined across threads in every iteration instead of once after "
       "the loop"},
      {"TL_DISABLE_WAIT_CACHE", "tl.disable_wait_cache", Attr::kBool,
       "cuda sm_90a: in a persistent kernel whose T.waits the TMA producer thread runs (the copy-engine "
       "all-gather GEMM), a T.wait(cmp=\"ge\") polls its flag and fences the async proxy before every tile "
       "instead of skipping the tiles whose flag element and value (or a lower one) it has already seen "
       "satisfied"},
      {"TL_DISABLE_PERSISTENT", "tl.disable_persistent", Attr::kBool,
       "cuda sm_90a: warp-specialized kernels run one CTA per tile instead of one per SM looping over tiles"},
      {"TL_ENABLE_PERSISTENT_FLASH", "tl.enable_persistent_flash", Attr::kBool,
       "cuda sm_90a: a warp-specialized loop in the overlapped form (attention) runs persistent too (one CTA "
       "per SM looping over the tiles), with the copies before the loop (Q) the producer's TMA loads per tile, "
       "so that the next tile's Q, K and V load while the consumers finish the current one; so do loops whose "
       "trip count depends on the tile (causal attention), their tiles in pairs of complementary lengths. On by "
       "default (measured faster on an H100, docs/PERFORMANCE.md); False keeps one CTA per tile"},
      {"TL_DISABLE_WGMMA", "tl.disable_wgmma", Attr::kBool,
       "cuda sm_90a: run T.gemm on mma.sync instead of wgmma"},
      {"TL_DISABLE_WGMMA_ASYNC", "tl.disable_wgmma_async", Attr::kBool,
       "cuda sm_90a: in T.Pipelined loops, wait for each T.gemm's wgmma in its own iteration"},
      {"TL_ENABLE_FAST_MATH", "tl.enable_fast_math", Attr::kBool, "approximate math functions (off: IEEE)"},
      {"TL_DISABLE_EXP2_FTZ", "tl.disable_exp2_ftz", Attr::kBool,
       "cuda: float T.exp2 keeps subnormal results (exp2f: three more instructions per call) instead of "
       "flushing results below 2^-126 to zero"},
      {"TL_DISABLE_THREAD_STORAGE_SYNC", "tl.disable_thread_storage_sync", Attr::kBool,
       "cuda: do not insert __syncthreads between conflicting shared-memory accesses"},
      {"TL_DISABLE_SHARED_MEMORY_REUSE", "tl.disable_shared_memory_reuse", Attr::kBool,
       "give every shared buffer its own region (no liveness-based reuse)"},
      {"TL_CONFIG_INDEX_BITWIDTH", "tl.config_index_bitwidth", Attr::kInt,
       "bit width of index arithmetic (32 or 64)"},
      {"TL_DISABLE_VECTORIZE", "tir.disable_vectorize", Attr::kBool, "do not vectorize loops"},
      {"TL_DISABLE_SAFE_MEMORY_LEGALIZE", "tl.disable_safe_memory_legalize", Attr::kBool,
       "do not guard out-of-bounds global accesses"},
      {"TL_ENABLE_DUMP_IR", "tl.enable_dump_ir", Attr::kBool, "write the IR after every pass"},
      {"TL_DUMP_IR_PATH", "tl.dump_ir_path", Attr::kStr, "directory for TL_ENABLE_DUMP_IR (default ./dump_ir)"},
      {"TL_CPU_NUM_THREADS", "tl.cpu_num_threads", Attr::kInt,
       "cpu: worker threads for the grid (default: all cores)"},
      {"TL_DISABLE_CPU_GEMM_FORWARDING", "tl.disable_cpu_gemm_forwarding", Attr::kBool,
       "cpu: keep the T.copy of a global tile into shared memory that only feeds a T.gemm (by default the GEMM "
       "reads the global tile in place)"},
      {"TL_DISABLE_CPU_GEMM_K_FUSION", "tl.disable_cpu_gemm_k_fusion", Attr::kBool,
       "cpu: keep a k loop whose body is one T.gemm on global tiles as a loop of block_K-deep GEMMs (by default it "
       "becomes one GEMM over the whole k: float32 always, bfloat16 / float16 / int8 when block_K is at most 256 "
       "bytes)"},
      {"TL_DISABLE_CPU_STREAM_STORES", "tl.disable_cpu_stream_stores", Attr::kBool,
       "cpu: copy a block-local buffer into a global one with plain stores (by default long contiguous runs use "
       "non-temporal stores)"},
      {"TL_CPU_STREAM_MIN_OUTPUT_BYTES", "tl.cpu_stream_min_output_bytes", Attr::kInt,
       "cpu: in a kernel without GEMMs, block-local rows copied into a global buffer of at least this many bytes "
       "use non-temporal stores, whatever the copy's size (default, or 0: the host's last-level cache size)"},
      {"TL_DISABLE_CPU_CONVERT_ROWS", "tl.disable_cpu_convert_rows", Attr::kBool,
       "cpu: round a float32 value into a block-local bfloat16 buffer inside its element-wise loop nest (by "
       "default such a store becomes one row conversion after the nest, vcvtne2ps2bf16 with AVX512-BF16)"},
      {"TL_DISABLE_CPU_VECTOR_MATH", "tl.disable_cpu_vector_math", Attr::kBool,
       "cpu: leave an element-wise loop calling exp2 / exp to GCC's auto-vectorizer (by default such a float32 "
       "loop is emitted as explicit 16-lane vector code with vscalefps-based exp2 / exp on AVX-512)"},
      {"TL_DISABLE_CPU_LOOP_FUSION", "tl.disable_cpu_loop_fusion", Attr::kBool,
       "cpu: run each tile statement as its own loop nest (by default adjacent element-wise nests over the same "
       "iteration space are fused when provably legal, and a block-local buffer used only inside one fused "
       "iteration becomes a scalar)"},
      {"TL_DISABLE_CPU_GEMM_PACK_REUSE", "tl.disable_cpu_gemm_pack_reuse", Attr::kBool,
       "cpu: pack a GEMM's B in every call (by default a B that no statement of the kernel writes is packed once "
       "per launch and thread and reused by the launch's later GEMM calls with the same B)"},
      {"TL_DISABLE_CPU_BLOCK_COARSENING", "tl.disable_cpu_block_coarsening", Attr::kBool,
       "cpu: run a grid of one-GEMM blocks with the kernel's own block sizes (by default neighbouring blocks of such "
       "a grid, such as TileLang's GEMM example's 128 x 128 ones, are run as one block of up to 512 x 512)"},
      {"TL_DISABLE_CPU_GEMM_PADDING", "tl.disable_cpu_gemm_padding", Attr::kBool,
       "cpu: keep a bf16 / int8 GEMM's block-local accumulator dense (by default rows a multiple of 1 KiB long get "
       "a 64-byte longer stride, so AMX C tiles do not alias L1 sets)"},
      {"TL_CPU_ISA", "tl.cpu_isa", Attr::kStr,
       "cpu: highest instruction set kernels are compiled for: portable, avx2, avx512 or native (default: native, "
       "the set the CPU reports at run time; the environment variable TL_CPU_ISA does the same)"},
  };
  return keys;
}

AttrMap validate_pass_configs(const AttrMap& configs) {
  AttrMap out;
  for (auto& [k, v] : configs) {
    const PassConfigKeyInfo* info = nullptr;
    for (auto& e : pass_config_keys())
      if (k == e.key || k == e.member) info = &e;
    if (!info) {
      std::ostringstream os;
      os << "unknown pass config '" << k << "'; accepted keys:";
      for (auto& e : pass_config_keys()) os << " " << e.key;
      throw ValueError(os.str());
    }
    Attr val = v;
    switch (info->type) {
      case Attr::kBool:
        if (v.kind() != Attr::kBool && !(v.kind() == Attr::kInt && (v.as_int() == 0 || v.as_int() == 1)))
          throw_error<ValueError>("pass config '", info->key, "' expects a bool");
        val = Attr(v.as_bool());
        break;
      case Attr::kInt:
        if (v.kind() != Attr::kInt) throw_error<ValueError>("pass config '", info->key, "' expects an int");
        break;
      case Attr::kStr:
        if (v.kind() != Attr::kStr) throw_error<ValueError>("pass config '", info->key, "' expects a string");
        break;
      default: break;
    }
    if (std::string(info->key) == "tl.cpu_isa") {
      const std::string c = val.as_str();
      if (c != "portable" && c != "avx2" && c != "avx512" && c != "native")
        throw_error<ValueError>("pass config 'tl.cpu_isa' must be one of portable, avx2, avx512, native; got '", c,
                                "'");
    }
    if (std::string(info->key) == "tl.config_index_bitwidth" && val.as_int() != 32 && val.as_int() != 64)
      throw_error<ValueError>("pass config 'tl.config_index_bitwidth' must be 32 or 64, got ", val.as_int());
    out[info->key] = val;
  }
  if (config_bool(out, "tl.ascend_auto_cross_core_sync") && !config_bool(out, "tl.ascend_auto_cv_combine"))
    throw_error<ValueError>(
        "pass config TL_ASCEND_AUTO_CV_SYNC ('tl.ascend_auto_cross_core_sync') requires TL_ASCEND_AUTO_CV_COMBINE "
        "('tl.ascend_auto_cv_combine') to be enabled too");
  return out;
}

bool config_bool(const AttrMap& configs, const std::string& key, bool dflt) { return attr_bool(configs, key, dflt); }
int64_t config_int(const AttrMap& configs, const std::string& key, int64_t dflt) { return attr_int(configs, key, dflt); }

}  // namespace tl
