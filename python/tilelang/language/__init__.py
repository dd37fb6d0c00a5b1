"""The kernel language: `import tilelang.language as T`.

See docs/FRONTEND.md for how a @T.prim_func is parsed and docs/TILE_OPS.md for the IR each
primitive produces.
"""
from . import tile  # noqa: F401  (T.tile.*)
from .allocate import (  # noqa: F401
    Buffer,
    StridedTensor,
    Tensor,
    TensorSpec,
    alloc_barrier,
    alloc_buffer,
    alloc_reducer,
    alloc_fragment,
    alloc_global,
    alloc_L0,
    alloc_l0,
    alloc_L0A,
    alloc_l0a,
    alloc_L0B,
    alloc_l0b,
    alloc_L0C,
    alloc_l0c,
    alloc_L1,
    alloc_l1,
    alloc_local,
    alloc_shared,
    alloc_UB,
    alloc_ub,
    alloc_var,
    dynamic,
    FragmentBuffer,
    LocalBuffer,
    SharedBuffer,
    finalize_reducer,
    reducer_init,
    reducer_update,
    reshape,
    symbolic,
    view,
)
from .atomic import atomic_addx2, atomic_addx4, atomic_load, atomic_max, atomic_min, atomic_store  # noqa: F401
from .atomic import atomic_and, atomic_or, atomic_xor  # noqa: F401
from .builtins import (  # noqa: F401
    all_of,
    any_of,
    annotate_address,
    annotate_l2_hit_ratio,
    annotate_layout,
    annotate_min_blocks_per_sm,
    annotate_restrict_buffers,
    annotate_safe_value,
    assume,
    barrier_all,
    device_assert,
    dp4a,
    dump_tensor,
    evaluate,
    func_attr,
    index_to_coordinates,
    reinterpretcast,
    loop_break,
    pipe_barrier,
    print,
    printf,
    ptx_commit_group,
    ptx_wait_group,
    set_cross_flag,
    rs,
    set_flag,
    sync_all,
    sync_threads,
    use_swizzle,
    wait_cross_flag,
    wait_flag,
)
from .dtypes import ALL as _ALL_DTYPES
from .dtypes import dtype, to_dtype  # noqa: F401
from .kernel import (  # noqa: F401
    ClusterKernel,
    Kernel,
    Scope,
    block_rank_in_cluster,
    cluster_sync,
    get_block_binding,
    get_block_bindings,
    get_block_extent,
    get_block_extents,
    get_lane_idx,
    get_thread_binding,
    get_thread_bindings,
    get_thread_extent,
    get_thread_extents,
    get_warp_group_idx,
    get_warp_idx,
    get_warp_idx_sync,
)
from .loops import (  # noqa: F401
    Parallel,
    Persistent,
    Pipelined,
    Serial,
    Unroll,
    Vectorized,
    grid,
    parallel,
    serial,
    unroll,
    vectorized,
)
from .math import (  # noqa: F401
    And,
    Cast,
    Not,
    Or,
    Select,
    abs,
    add,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cast,
    ceil,
    ceildiv,
    clamp,
    cos,
    div,
    exp,
    exp2,
    floor,
    floordiv,
    floormod,
    ieee_add,
    ieee_fdiv,
    ieee_fmaf,
    ieee_fsqrt,
    ieee_mul,
    if_then_else,
    infinity,
    log,
    log2,
    max,
    max_value,
    min,
    min_value,
    mul,
    pow,
    round,
    rsqrt,
    shift_left,
    shift_right,
    sigmoid,
    sin,
    sqrt,
    sub,
    tanh,
    truncdiv,
    truncmod,
    trunc,
)
from .distributed import Scale, barrier, get_num_ranks, get_rank, signal, wait  # noqa: F401
from .eager import const, empty  # noqa: F401
from .im2col import c2d_im2col, im2col  # noqa: F401
from .tir_compat import (  # noqa: F401  (TVM-style forms: thread_binding, handle/ptr, the all-reduce idiom)
    sblock,
    reads,
    writes,
    attr,
    comm_reducer,
    handle,
    make_tensor,
    match_buffer,
    ptr,
    reinterpret,
    thread_binding,
    tvm_thread_allreduce,
    tvm_warp_shuffle,
)
from .npuir import (  # noqa: F401  (TileLang-Ascend npuir spellings, destination last)
    load_nd2nz, store_fixpipe, store_nz2nd, vabs, vadd, vbrc, vcast, vdiv, vexp, vexp2, vln, vlog2, vmax, vmin,
    vmul, vpow, vrec, vrelu, vrsqrt, vsigmoid, vsqrt, vsub, vtanh,
)
from .parser import Macro, PrimFunc, Ref, macro, prim_func  # noqa: F401
from .tile_ops import (  # noqa: F401
    GemmWarpPolicy,
    async_copy,
    atomic_add,
    clear,
    copy,
    cumsum,
    fill,
    gemm,
    gemm_v0,
    mma,
    reduce,
    reduce_absmax,
    reduce_abssum,
    reduce_max,
    reduce_min,
    reduce_sum,
)
from ..layout import Fragment, Layout  # noqa: F401
from .. import _core as _core_mod

# The IR classes, for isinstance checks in user code.
PrimExpr = _core_mod.PrimExpr
Var = _core_mod.Var
BufferLoad = _core_mod.BufferLoad
BufferRegion = _core_mod.BufferRegion


def _astype(self, dtype):
    """TVM's `expr.astype(dtype)` (= T.cast(expr, dtype)), used by TileLang programs."""
    return cast(self, dtype)


for _cls in (PrimExpr, Var, BufferLoad):
    _cls.astype = _astype

# T.float16, T.int32, ... (and T.bool, which shadows the builtin only inside this module's namespace).
globals().update(_ALL_DTYPES)
from .dtypes import VECTOR as _VECTOR_DTYPES  # noqa: E402

globals().update(_VECTOR_DTYPES)

# Fast-math intrinsics T.__exp, T.__log, T.__sin, T.__cos.
from . import math as _math  # noqa: E402

for _n in _math.FAST_MATH:
    globals()[_n] = getattr(_math, _n)

from . import unsupported as _unsupported  # noqa: E402


def __getattr__(name):
    err = _unsupported.not_supported(name)
    if err is not None:
        raise err
    raise AttributeError(f"module 'tilelang.language' has no attribute '{name}'")
