"""TileLang-Ascend's spellings that its unmodified example programs use (scripts/ascend_suite.py):
the target names "ascendc" and "pto", the npuir branch's vector operations (T.vadd(A, B, C) with the
destination last, auto-broadcast of unit extents, T.vexp2 / T.vlog2 with a scratch tile, T.vbrc,
T.vcast), T.gemm(..., b_transpose=...) and the npuir pass-config keys. Values are checked against
numpy in float64 on random inputs, on the simulator with its checker on."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T


def f64(x):
    return x.astype(np.float64)


def compile_ascend(func, target, configs=None):
    return tilelang._core.ascend.compile(func.ir, configs or {}, target)


@pytest.mark.parametrize("target", ["ascendc", "pto"])
def test_target_names_ascendc_and_pto_are_the_simulator(target):
    assert tilelang.utils.target.determine_target(target) == "ascend -model=A2"
    M, N = 64, 128

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            b = T.alloc_ub((M // 2, N), "float32")
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.copy(B[vid * M // 2, 0], b)
                T.barrier_all()
                T.tile.mul(a, a, b)
                T.barrier_all()
                T.copy(a, C[vid * M // 2, 0])

    k = tilelang.compile(main, target=target)
    rng = np.random.default_rng(15)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    k(a, b, c)
    np.testing.assert_allclose(f64(c), f64(a) * f64(b), rtol=1e-6)


def vector_ops(M, N, dtype="float32"):
    """Each npuir vector op once, in a single-block npuir kernel (Developer form: UB tiles)."""

    @T.prim_func
    def main(X: T.Tensor((M, N), dtype), Y: T.Tensor((M, N), dtype), R: T.Tensor((M, 1), dtype),
             O: T.Tensor((9, M, N), dtype)):
        with T.Kernel(1, is_npu=True) as (cid, _):
            x = T.alloc_ub((M, N), dtype)
            y = T.alloc_ub((M, N), dtype)
            r = T.alloc_ub((M, 1), dtype)
            t = T.alloc_ub((M, N), dtype)
            o = T.alloc_ub((M, N), dtype)
            T.copy(X, x)
            T.copy(Y, y)
            T.copy(R, r)
            T.vadd(x, y, o)
            T.copy(o, O[0, :, :])
            T.vsub(x, r, o)              # r broadcast along the rows, into the destination
            T.copy(o, O[1, :, :])
            T.vmul(x, 3.0, o)            # scalar operand
            T.copy(o, O[2, :, :])
            T.vexp(x, o)
            T.copy(o, O[3, :, :])
            T.vrsqrt(y, o)
            T.copy(o, O[4, :, :])
            T.vexp2(x, o, t)
            T.copy(o, O[5, :, :])
            T.vlog2(y, o, t)
            T.copy(o, O[6, :, :])
            T.vbrc(r, o)
            T.vdiv(o, y, o)              # r / y, destination = first operand
            T.copy(o, O[7, :, :])
            T.vbrc(2.5, t)
            T.vmax(x, t, o)
            T.vsub(o, r, o)              # destination is also the first operand: r goes to a scratch tile
            T.copy(o, O[8, :, :])

    return main


def test_npuir_vector_ops_match_numpy():
    M, N = 16, 64
    k = compile_ascend(vector_ops(M, N), "npuir")
    rng = np.random.default_rng(150)
    x = rng.standard_normal((M, N)).astype(np.float32)
    y = (rng.random((M, N)) + 0.5).astype(np.float32)
    r = rng.standard_normal((M, 1)).astype(np.float32)
    o = np.zeros((9, M, N), np.float32)
    k.launch([x, y, r, o])
    X, Y, R = f64(x), f64(y), f64(r)
    ref = [X + Y, X - R, 3 * X, np.exp(X), 1 / np.sqrt(Y), 2 ** X, np.log2(Y), R / Y, np.maximum(X, 2.5) - R]
    for i, want in enumerate(ref):
        np.testing.assert_allclose(f64(o[i]), want, rtol=2e-5, atol=1e-6, err_msg=f"op {i}")


def test_npuir_row_broadcast_and_cast():
    """T.vadd with a [1, N] row broadcast over [M, N], then T.vcast to float16 (round to nearest even).
    One vector core (threads=1): with two, the vid reduction would split b by rows."""
    M, N = 32, 64

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(1, threads=1, is_npu=True) as cid:
            a = T.alloc_shared((M, N), "float32")
            b = T.alloc_shared((M, N), "float32")
            c = T.alloc_fragment((M, N), "float32")
            h = T.alloc_fragment((M, N), "float16")
            T.copy(A, a)
            T.copy(B, b)
            T.vadd(a[:, :], b[3, :], c[:, :])
            T.vcast(c, h, round_mode="rint")
            T.copy(h, C)

    k = compile_ascend(main, "npuir")
    rng = np.random.default_rng(151)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    c = np.zeros((M, N), np.float16)
    k.launch([a, b, c])
    np.testing.assert_allclose(f64(c), (f64(a) + f64(b[3:4, :])).astype(np.float16).astype(np.float64), rtol=1e-3)


def test_vcast_rejects_an_unknown_round_mode():
    with pytest.raises(ValueError, match="round_mode must be one of"):
        @T.prim_func
        def main(A: T.Tensor((8, 16), "float32"), C: T.Tensor((8, 16), "float16")):
            with T.Kernel(1, is_npu=True) as (cid, _):
                a = T.alloc_ub((8, 16), "float32")
                h = T.alloc_ub((8, 16), "float16")
                T.copy(A, a)
                T.vcast(a, h, round_mode="sideways")
                T.copy(h, C)


def test_gemm_b_transpose_npuir_spelling():
    """T.gemm(A, B, C, initC=True, b_transpose=True) = A @ B^T (npuir's name for transpose_B)."""
    M, N, K = 64, 64, 32

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, _):
            a = T.alloc_shared((M, K), "float16")
            b = T.alloc_shared((N, K), "float16")
            c = T.alloc_fragment((M, N), "float32")
            T.copy(A, a)
            T.copy(B, b)
            T.gemm(a, b, c, initC=True, b_transpose=True)
            T.copy(c, C)

    k = compile_ascend(main, "npuir")
    rng = np.random.default_rng(152)
    a = (rng.standard_normal((M, K)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((N, K)) * 0.25).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k.launch([a, b, c])
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b).T, rtol=2e-3, atol=2e-3)


def test_npuir_pass_config_keys_are_accepted():
    from tilelang.jit.pass_config import normalize_pass_configs
    out = normalize_pass_configs({tilelang.PassConfigKey.NPUIR_ENABLE_AUTO_MULTI_BUFFER: False,
                                  tilelang.PassConfigKey.NPUIR_DISABLE_HIVM_AUTO_INJECT_SYNC: True})
    assert out == {}


def rank1_vector_kernel(N, block_N, npu):
    """A vector-only kernel over rank-1 UB tiles, with a tail block (TileLang-Ascend npuir's vec_add
    form): no tile can be split between the two vector cores, so one vector core per block does it."""
    n_num = (N + block_N - 1) // block_N
    launch = (lambda: T.Kernel(n_num, is_npu=True)) if npu else (lambda: T.Kernel(n_num))  # noqa: E731

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with launch() as cid:
            a = T.alloc_ub((block_N,), "float32")
            b = T.alloc_ub((block_N,), "float32")
            n = T.min(block_N, N - cid * block_N)
            T.copy(A[cid * block_N:cid * block_N + n], a[0:n])
            T.copy(B[cid * block_N:cid * block_N + n], b[0:n])
            T.vmul(a, b, a)
            T.vsub(a, 1.0, a)
            T.copy(a[0:n], C[cid * block_N:cid * block_N + n])

    return main


@pytest.mark.parametrize("npu", [True, False])
def test_vector_only_rank1_kernel_runs_once_per_block(npu):
    """Without is_npu=True the kernel is still an NPU kernel on target "npuir" (TileLang-Ascend's npuir
    programs write `T.Kernel(n) as cid`). Each block's result is written by one vector core: the
    checker used to stop both cores' identical writes as a race."""
    N, block_N = 1000, 256
    k = compile_ascend(rank1_vector_kernel(N, block_N, npu), "npuir")
    rng = np.random.default_rng(153)
    a, b = (rng.standard_normal(N).astype(np.float32) for _ in range(2))
    c = np.full(N, np.nan, np.float32)
    k.launch([a, b, c])
    np.testing.assert_allclose(f64(c), f64(a) * f64(b) - 1, rtol=1e-6, atol=1e-6)
    assert k.info()["vector_cores"] == 4


def test_unused_ub_buffer_takes_no_memory():
    """Four used float32 [32, 384] UB tiles (4 x 48 KiB = the whole 192 KiB of UB, exactly full) and one
    that only a dtype-dependent branch of the program would use: it takes no memory (TileLang-Ascend's
    rms_norm allocates its cast tiles for every dtype)."""
    M, N = 64, 384

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            b = T.alloc_ub((M // 2, N), "float32")
            c = T.alloc_ub((M // 2, N), "float32")
            d = T.alloc_ub((M // 2, N), "float32")
            unused = T.alloc_ub((M // 2, N), "float16")  # noqa: F841
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.copy(B[vid * M // 2, 0], b)
                T.barrier_all()
                T.tile.mul(c, a, b)
                T.pipe_barrier("v")
                T.tile.add(d, c, a)
                T.barrier_all()
                T.copy(d, C[vid * M // 2, 0])

    k = compile_ascend(main, "ascend")
    rng = np.random.default_rng(154)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    k.launch([a, b, c])
    np.testing.assert_allclose(f64(c), f64(a) * f64(b) + f64(a), rtol=1e-6, atol=1e-6)


def test_one_byte_over_ub_is_still_refused():
    from tilelang.errors import ResourceError
    M, N = 64, 384

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            b = T.alloc_ub((M // 2, N), "float32")
            c = T.alloc_ub((M // 2, N), "float32")
            d = T.alloc_ub((M // 2, N), "float32")
            e = T.alloc_ub((8,), "float32")
            unused = T.alloc_ub((M // 2, N), "float32")  # noqa: F841
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.barrier_all()
                T.tile.exp(b, a)
                T.pipe_barrier("v")
                T.tile.exp(c, b)
                T.pipe_barrier("v")
                T.tile.exp(d, c)
                T.pipe_barrier("v")
                T.tile.exp(e, d[0, 0:8])
                T.barrier_all()
                T.copy(d, C[vid * M // 2, 0])

    with pytest.raises(ResourceError) as err:
        compile_ascend(main, "ascend")
    msg = str(err.value)
    assert "UB over capacity" in msg and "196640 bytes" in msg and "'e' float32[8]" in msg and "'unused'" not in msg


@pytest.mark.parametrize("kind,dim,real", [("max", -1, (4, 4)), ("max", 0, (3, 8)), ("sum", -1, (6, 5)),
                                           ("min", 0, (5, 3))])
def test_reduce_real_shape(kind, dim, real):
    """T.reduce_*(src, dst, dim, real_shape=[rows, cols]): only src[:rows, :cols] is reduced, into the first
    rows (dim=-1) or cols (dim=0) elements of a [1, n] destination; the rest of dst is left alone."""
    R, C = 6, 8
    op = getattr(T, f"reduce_{kind}")

    @T.prim_func
    def main(A: T.Tensor((R, C), "float32"), O: T.Tensor((1, C), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((R, C), "float32")
            o = T.alloc_ub((1, C), "float32")
            with T.Scope("V"):
                if vid == 0:
                    T.copy(A, a)
                    T.copy(O, o)
                    op(a, o, dim=dim, real_shape=list(real))
                    T.copy(o, O)

    k = compile_ascend(main, "ascend", {"tl.ascend_auto_sync": True})
    rng = np.random.default_rng(155)
    a = rng.standard_normal((R, C)).astype(np.float32)
    o = np.full((1, C), 7.0, np.float32)
    k.launch([a, o])
    part = f64(a[:real[0], :real[1]])
    want = getattr(np, kind)(part, axis=1 if dim == -1 else 0)
    n = len(want)
    np.testing.assert_allclose(f64(o[0, :n]), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(o[0, n:], 7.0)


def test_copy_l1_to_l0b_transposed_then_mma():
    """T.copy(B_L1, B_L0, transpose=True): B kept as [N, K] in L1 enters L0B as [K, N]; C = A @ B^T."""
    M, N, K = 32, 48, 64

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a1 = T.alloc_L1((M, K), "float16")
            b1 = T.alloc_L1((N, K), "float16")
            a0 = T.alloc_L0A((M, K), "float16")
            b0 = T.alloc_L0B((K, N), "float16")
            c0 = T.alloc_L0C((M, N), "float32")
            with T.Scope("C"):
                T.copy(A, a1)
                T.copy(B, b1)
                T.barrier_all()
                T.copy(a1, a0)
                T.copy(b1, b0, transpose=True)
                T.barrier_all()
                T.mma(a0, b0, c0, init=True)
                T.barrier_all()
                T.copy(c0, C)

    k = compile_ascend(main, "ascend")
    rng = np.random.default_rng(156)
    a = (rng.standard_normal((M, K)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((N, K)) * 0.25).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    k.launch([a, b, c])
    np.testing.assert_allclose(f64(c), f64(a) @ f64(b).T, rtol=2e-3, atol=2e-3)


def test_copy_transpose_on_cpu_and_bad_shapes():
    M, N = 24, 40

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((N, M), "float32")):
        with T.Kernel(1, threads=32):
            s = T.alloc_shared((M, N), "float32")
            t = T.alloc_shared((N, M), "float32")
            T.copy(A, s)
            T.copy(s, t, transpose=True)
            T.copy(t, B)

    k = tilelang.compile(main, target="cpu")
    a = np.random.default_rng(157).standard_normal((M, N)).astype(np.float32)
    b = np.zeros((N, M), np.float32)
    k(a, b)
    np.testing.assert_array_equal(b, a.T)

    with pytest.raises(ValueError, match="transpose=True needs 2-D tiles"):
        @T.prim_func
        def bad(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
            with T.Kernel(1, threads=32):
                s = T.alloc_shared((M, N), "float32")
                t = T.alloc_shared((M, N), "float32")
                T.copy(A, s)
                T.copy(s, t, transpose=True)
                T.copy(t, B)


def test_jit_impl_handle_names_the_target():
    @tilelang.jit(out_idx=[-1], target="pto")
    def scale(N):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_ub((N,), "float32")
                with T.Scope("V"):
                    if vid == 0:
                        T.copy(A, a)
                        T.barrier_all()
                        T.tile.mul(a, a, 2.0)
                        T.barrier_all()
                        T.copy(a, B)
        return main

    assert scale.__jit_impl__.target == "pto"
    a = np.random.default_rng(158).standard_normal(64).astype(np.float32)
    np.testing.assert_allclose(np.asarray(scale(64)(a)), 2 * a, rtol=1e-6)


def test_tile_fill_from_a_one_element_tile():
    """T.tile.fill(dst, total) with `total` a [1] UB tile fills dst with its element (TileLang-Ascend's
    group_norm fills its mean column from a reduced [1] tile)."""
    M, N = 16, 32

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), O: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M, N), "float32")
            row = T.alloc_ub((M,), "float32")
            total = T.alloc_ub((1,), "float32")
            o = T.alloc_ub((M, N), "float32")
            with T.Scope("V"):
                if vid == 0:
                    T.copy(A, a)
                    T.reduce_max(a, row, dim=-1)
                    T.reduce_max(row, total, dim=-1)
                    T.tile.fill(o, total)
                    T.copy(o, O)

    k = compile_ascend(main, "ascend", {"tl.ascend_auto_sync": True})
    a = np.random.default_rng(159).standard_normal((M, N)).astype(np.float32)
    o = np.zeros_like(a)
    k.launch([a, o])
    np.testing.assert_array_equal(o, np.full((M, N), a.max(), np.float32))


@pytest.mark.parametrize("relu", [False, True])
def test_npuir_cube_copies_load_nd2nz_store_fixpipe(relu):
    """npuir's cube-side copies in a T.Scope("Cube") kernel: T.load_nd2nz GM -> L1 with a size list,
    T.gemm accumulating over K in L0C, T.store_fixpipe L0C -> GM (float32 -> float16, optional ReLU)."""
    M, N, K, BK = 64, 64, 96, 32

    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(1, is_npu=True) as (cid, _):
            with T.Scope("Cube"):
                a = T.alloc_L1([M, BK], "float16")
                b = T.alloc_L1([BK, N], "float16")
                c = T.alloc_L0C([M, N], "float32")
                for i in T.serial(K // BK):
                    T.load_nd2nz(A[0, i * BK], a, [M, BK])
                    T.load_nd2nz(B[i * BK, 0], b, [BK, N])
                    T.gemm(a, b, c, initC=(i == 0), size=[M, BK, N])
                T.store_fixpipe(c, C[0, 0], size=[M, N], enable_nz2nd=True, pre_relu_mode="relu" if relu else "")

    k = compile_ascend(main, "npuir")
    rng = np.random.default_rng(160)
    a = (rng.standard_normal((M, K)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((K, N)) * 0.25).astype(np.float16)
    c = np.zeros((M, N), np.float16)
    k.launch([a, b, c])
    ref = f64(a) @ f64(b)
    if relu:
        ref = np.maximum(ref, 0)
    np.testing.assert_allclose(f64(c), ref, rtol=5e-3, atol=5e-3)


def _rs_kernel(spelling):
    @T.prim_func
    def k(A: T.Tensor((128, 64), "float32"), B: T.Tensor((128, 64), "float32")):
        with T.Kernel(2, is_npu=True) as (cid, vid):
            a = T.alloc_ub((32, 64), "float32")
            with T.Scope("V"):
                T.copy(A[cid * 64 + vid * 32, 0], a)
                if spelling == "rs":  # npuir: the frame names one pipe of each flag
                    with T.rs("PIPE_MTE2"):
                        T.set_flag("PIPE_V", 0)
                    with T.rs("PIPE_V"):
                        T.wait_flag("PIPE_MTE2", 0)
                else:
                    T.set_flag("mte2", "v", 0)
                    T.wait_flag("mte2", "v", 0)
                T.tile.exp(a, a)
                if spelling == "rs":
                    with T.rs("PIPE_V"):
                        T.set_flag("PIPE_MTE3", 0)
                    with T.rs("PIPE_MTE3"):
                        T.wait_flag("PIPE_V", 0)
                else:
                    T.set_flag("v", "mte3", 0)
                    T.wait_flag("v", "mte3", 0)
                T.copy(a, B[cid * 64 + vid * 32, 0])
    return k


def test_npuir_rs_frame_names_the_other_pipe_of_each_flag():
    """`with T.rs("PIPE_MTE2"): T.set_flag("PIPE_V", i)` is T.set_flag("mte2", "v", i) and `with T.rs("PIPE_V"):
    T.wait_flag("PIPE_MTE2", i)` is T.wait_flag("mte2", "v", i): the same IR, and the strict checker finds
    the flags order the copies and the vector op (values against numpy)."""
    rs, explicit = _rs_kernel("rs"), _rs_kernel("explicit")
    assert str(rs.ir.body) == str(explicit.ir.body)
    A = np.random.default_rng(5).standard_normal((128, 64)).astype(np.float32)
    B = np.zeros_like(A)
    tilelang.compile(rs, target="ascend")(A, B)
    np.testing.assert_allclose(B, np.exp(A.astype(np.float64)), rtol=1e-5)


def test_one_pipe_flag_outside_rs_is_an_error():
    with pytest.raises(ValueError, match=r"T.set_flag\(dst, event_id\) names one pipe .* `with T.rs"):
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                T.set_flag("PIPE_V", 0)
