"""TileLang names that tilelang-cpp does not implement, each with why and what to write instead.

`T.<name>` for one of these raises NotImplementedError with that text (tilelang.language's module
__getattr__); docs/COMPATIBILITY.md lists them. Three kinds:
  - constructs that only mean something inside TVM (TIR scripting, TVM's own intrinsics);
  - hardware-specific primitives of GPUs this project does not target by hand (Hopper/Blackwell
    warp specialization, TMA, tensor memory, clusters, AMD matrix cores, raw PTX);
  - data types and features not implemented (yet).
"""

_TVM = "a TVM (TIR scripting) construct that tilelang-cpp has no equivalent for"
_HW = "a hand-scheduled hardware primitive; tilelang-cpp schedules these itself"

# name: (what it is, the alternative)
_TABLE = {}


def _add(names, what, alternative):
    for n in names.split():
        _TABLE[n] = (what, alternative)


_add("shfl_sync tvm_storage_sync", _TVM,
     "exchange values through a T.alloc_shared buffer, or reduce with T.reduce_*; barriers are inserted by the "
     "compiler (T.sync_threads is also available)")
_add("tvm_access_ptr access_ptr address_of decl_buffer buffer_store "
     "type_annotation handle_add_byte_offset", _TVM,
     "declare tensors as kernel parameters (T.Tensor / T.StridedTensor) and buffers with T.alloc_*")
_add("launch_thread env_thread sblock_attr sblock_alloc_buffer region let If Then While Assert "
     "bind", _TVM,
     "write the kernel with T.Kernel(..., threads=...) and Python control flow (if / for / T.serial)")
_add("Ramp Broadcast Shuffle", _TVM + " (vector expressions)",
     "index element by element inside T.Parallel or T.vectorized; vectorization is done by the compiler")
_add("call_extern call_intrin call_packed tvm_call_cpacked import_source", _TVM + " (calls into foreign code)",
     "write the computation with T.* primitives")
_add("tvm_mfma tvm_mfma_store tvm_rdna_wmma mfma mfma_store ds_read_tr8_b64 ds_read_tr16_b64",
     "an AMD GPU matrix-core intrinsic (no AMD target)", "use T.gemm")
_add("mbarrier_wait_parity mbarrier_arrive mbarrier_expect_tx mbarrier_arrive_expect_tx barrier_arrive barrier_wait "
     "alloc_cluster_barrier cluster_arrive cluster_wait copy_cluster "
     "ptx_arrive_barrier ptx_init_barrier_thread_count ptx_fence_barrier_init cp_async_barrier_noinc "
     "named_barrier_arrive", _HW + " (mbarriers, thread-block clusters)",
     "write the loop with T.Pipelined(n, num_stages=...): copies, barriers and warp specialization are generated")
_add("tma_copy tma_load tma_store_arrive tma_store_wait tma_gather4 tma_gather4_bytes tma_scatter4 "
     "create_tma_descriptor ptx_cp_async", _HW + " (TMA / cp.async)",
     "use T.copy; inside T.Pipelined it becomes cp.async (and TMA where the target has it)")
_add("wgmma_gemm wgmma_mma wait_wgmma warpgroup_arrive warpgroup_commit_batch warpgroup_wait "
     "warpgroup_fence_operand initialize_wgmma_descriptor alloc_wgmma_desc ptx_wgmma_ss ptx_mma_block_scale "
     "fence_proxy_async", _HW + " (Hopper wgmma)", "use T.gemm (on sm_90a it is lowered to wgmma)")
_add("tcgen05_gemm tcgen05_gemm_blockscaled tcgen05_mma tcgen05_mma_blockscaled tcgen05_mma_arrive "
     "tcgen05_cp_warpx4 tcgen05_sf_warp_transpose tcgen05_before_thread_sync tcgen05_after_thread_sync alloc_tmem "
     "deallocate_tmem alloc_tcgen05_smem_desc mma_gemm_blockscaled", _HW + " (Blackwell tensor memory / tcgen05)",
     "use T.gemm with T.alloc_fragment accumulators (sm_80 / sm_90a targets)")
_add("ws ws_op WarpSpecialize WSID WSSync WSScope WSRole WSPipeline WSSchedule WSSyncKind annotate_ws_schedule "
     "set_max_nreg no_set_max_nreg annotate_producer_reg_dealloc annotate_consumer_reg_alloc "
     "disable_warp_group_reg_alloc", _HW + " (manual warp specialization)",
     "write the loop with T.Pipelined; on sm_90a warp specialization is applied by the compiler")
_add("CUDASourceCodeKernel", "a kernel given as CUDA source", "write the kernel with T.* primitives")
_add("pdl_sync pdl_trigger clc_try_cancel_multicast clc_is_canceled clc_get_first_ctaid_x sync_grid",
     _HW + " (grid-level launch control)", "split the work into separate kernels")
_add("ldg32 ldg64 ldg128 ldg256 stg32 stg64 stg128 stg256 lds32 lds64 lds128 sts32 sts64 sts128 __ldg",
     _HW + " (explicit-width memory instructions)", "use T.copy or element accesses; widths are chosen by the compiler")
_add("shuffle_elect activemask ballot ballot_sync any_sync all_sync match_all_sync match_any_sync syncthreads_and "
     "syncthreads_or syncthreads_count sync_warp warp_reduce_sum warp_reduce_max warp_reduce_min warp_reduce_bitand "
     "warp_reduce_bitor", _HW + " (warp-level intrinsics)",
     "reduce a fragment with T.reduce_* (lowered to warp shuffles); use T.sync_threads for a block barrier")
_add("int4 float4_e2m1fnx2 float4_e2m1_unpacked float8_e4m3fnuz float8_e5m2fnuz "
     "float8_e4m3fnx8", "a data type tilelang-cpp does not "
     "support (supported: bool, int8-64, uint8-64, float16, bfloat16, float32, float64, float8_e4m3, float8_e5m2, float8_e8m0fnu, float4_e2m1fn)",
     "store the data in a supported type (e.g. uint8 for packed 4-bit values) and convert with T.cast")
_add("reduce_bitand reduce_bitor reduce_bitxor cummax cummin", "a reduction / scan operator not provided",
     "use T.reduce_sum/max/min/abssum/absmax and T.cumsum, or combine element-wise in T.Parallel / T.serial loops")
_add("transpose", "the tile transpose of TileLang's cpu backend", "write dst[..., i, j] = src[..., j, i] in a "
     "T.Parallel loop (or T.copy through a transposed T.gemm operand)")
_add("thread_return align_up extract_lane", "a low-level TVM / CUDA helper", "express it with T.* control flow and "
     "arithmetic (e.g. T.ceildiv(x, a) * a for align_up)")
_add("gemm_sp", "sparse (2:4) tensor-core GEMM", "use T.gemm on dense operands")
_add("rng_init rng_rand rng_rand_float", "the device random number generator",
     "generate random numbers on the host (numpy/torch) and pass them in")
_add("annotate_pass_configs annotate_compile_flags", "per-kernel compile settings inside the body",
     "pass pass_configs= / compile_flags= to @tilelang.jit or tilelang.compile")
_add("fma2 add2 sub2 mul2 max2 min2 abs2", "packed two-lane arithmetic", "write scalar arithmetic inside "
     "T.Parallel / T.vectorized; the compiler vectorizes it")
_add("fast_rcp __tan __log2 __log10 __exp10 __ffs __fns", "a CUDA fast-math intrinsic not provided",
     "use the IEEE functions (T.exp2, T.log2, ...) or T.__exp, T.__log, T.__sin, T.__cos")
_add("tan sinh cosh atan erf exp10 log10 fmod isfinite nearbyint ieee_sub ieee_frcp ieee_frsqrt",
     "a math function not provided", "write it with the provided ones (T.sin/T.cos, T.exp/T.exp2, T.log/T.log2, "
     "T.floor, T.truncmod, ...)")
_add("PersistentTileScheduler", "TileLang's persistent tile-scheduler object",
     "use `for bx, by in T.Persistent([m_tiles, n_tiles], wave_size, index)`")
_add("init_flag clear_flag set_deq_scale", "an Ascend primitive outside TileLang-Ascend's documented surface",
     "use T.set_flag/T.wait_flag (or TL_ASCEND_AUTO_SYNC)")
_add("target", "the compile target inside the body", "pass target= to @tilelang.jit / tilelang.compile")


def not_supported(name):
    """The NotImplementedError for T.<name>, or None when the name is not in the table."""
    entry = _TABLE.get(name)
    if entry is None:
        return None
    what, alternative = entry
    return NotImplementedError(f"not implemented: T.{name} is {what}; {alternative}")


def names():
    return sorted(_TABLE)
