"""TileLang-Ascend's AscendC route (target "ascendc", or "auto" for an is_npu kernel), as its unmodified
example programs use it (scripts/ascend_suite.py):

- bisheng --cce-auto-sync: that route's kernels leave vector -> vector and scalar <-> MTE2/MTE3/vector
  ordering to the vendor compiler, which the pass config tl.ascend_vendor_auto_sync models (on by
  default there); every other pipe pair stays the kernel's job and the checker still reports it;
- T.copy between a tile and an element of a lower-rank buffer (`T.copy(x[k], x_L1)` with x 1-D):
  the element takes the tile's trailing extents and the copy covers that part of the tile.

Values are checked against numpy in float64 on random inputs, with the simulator's checker on."""
import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import SyncError


def f64(x):
    return x.astype(np.float64)


def chain_kernel(M, N):
    """exp(a) * b + 1 with no pipe_barrier("v") between the dependent vector ops, and a scalar store
    into UB copied out by MTE3 with no S -> MTE3 flag (TileLang-Ascend's setvalue example)."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"),
             D: T.Tensor((2,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            b = T.alloc_ub((M // 2, N), "float32")
            s = T.alloc_ub((8,), "float32")
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.copy(B[vid * M // 2, 0], b)
                T.barrier_all()
                T.tile.exp(a, a)
                T.tile.mul(a, a, b)
                T.tile.add(a, a, 1.0)
                T.barrier_all()
                v = a[1, 2]
                T.barrier_all()
                s[0] = v
                T.copy(s[0:1], D[vid:vid + 1])
                T.copy(a, C[vid * M // 2, 0])

    return main


def run_chain(target, configs=None):
    M, N = 16, 64
    k = tilelang.compile(chain_kernel(M, N), target=target, pass_configs=configs)
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    d = np.zeros(2, np.float32)
    k(a, b, c, d)
    ref = np.exp(f64(a)) * f64(b) + 1
    np.testing.assert_allclose(f64(c), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f64(d), [ref[1, 2], ref[M // 2 + 1, 2]], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("target", ["ascendc", "auto"])
def test_ascendc_route_gets_the_vendor_compilers_syncs(target):
    run_chain(target)


def test_ascend_target_stays_strict():
    with pytest.raises(SyncError, match=r"race \(RAW\).*pipe V.*pipe V"):
        run_chain("ascend")


def test_vendor_auto_sync_can_be_turned_off():
    with pytest.raises(SyncError, match="race"):
        run_chain("ascendc", {"tl.ascend_vendor_auto_sync": False})


def test_vendor_auto_sync_leaves_mte2_to_vector_to_the_kernel():
    M, N = 16, 64

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.tile.exp(a, a)  # no MTE2 -> V flag: bisheng does not add this one either
                T.barrier_all()
                T.copy(a, C[vid * M // 2, 0])

    k = tilelang.compile(main, target="ascendc")
    a = np.ones((M, N), np.float32)
    with pytest.raises(SyncError, match=r"race \(RAW\).*pipe MTE2.*pipe V"):
        k(a, np.zeros_like(a))


def test_copy_of_a_lower_rank_element_takes_the_trailing_extents():
    """TileLang-Ascend's cube GEMV: x (1-D) goes into row 0 of a [16, K] L1 tile, row 0 of the
    [16, N] accumulator goes to y (1-D)."""
    N, K, bn, bk = 128, 256, 64, 128

    @T.prim_func
    def main(x: T.Tensor((K,), "float16"), A: T.Tensor((N, K), "float16"), y: T.Tensor((N,), "float32")):
        with T.Kernel(N // bn, is_npu=True) as (cid, _):
            A_L1 = T.alloc_L1((bn, bk), "float16")
            x_L1 = T.alloc_L1((16, bk), "float16")
            C_L0 = T.alloc_L0C((16, bn), "float32")
            with T.Scope("C"):
                for k in T.serial(K // bk):
                    T.copy(x[k * bk], x_L1)
                    T.copy(A[cid * bn, k * bk], A_L1)
                    T.barrier_all()
                    T.gemm_v0(x_L1, A_L1, C_L0, transpose_B=True, init=(k == 0))
                    T.barrier_all()
                T.copy(C_L0, y[cid * bn])

    k = tilelang.compile(main, target="ascend")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(K).astype(np.float16)
    A = rng.standard_normal((N, K)).astype(np.float16)
    y = np.zeros(N, np.float32)
    k(x, A, y)
    np.testing.assert_allclose(f64(y), f64(A) @ f64(x), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("pad", [None, -1.5])
def test_copy_of_a_short_vector_into_a_longer_tile_pads_the_rest(pad):
    """TileLang-Ascend's group_norm: `T.copy(gamma[g, 0:n], gamma_ub, pad_value=0.0)` with gamma_ub
    [m, 1], m > n: the n elements fill the start of the tile, the rest is the pad value (0 without
    pad_value)."""
    G, n, m = 3, 12, 16

    @T.prim_func
    def main(X: T.Tensor((G, n), "float32"), Y: T.Tensor((G, m), "float32")):
        with T.Kernel(G, is_npu=True) as (cid, vid):
            u = T.alloc_ub((m, 1), "float32")
            with T.Scope("V"):
                if vid == 0:
                    if pad is None:
                        T.copy(X[cid, 0:n], u)
                    else:
                        T.copy(X[cid, 0:n], u, pad_value=pad)
                    T.barrier_all()
                    T.copy(u, Y[cid, 0:m])

    k = tilelang.compile(main, target="ascend")
    rng = np.random.default_rng(5)
    x = rng.standard_normal((G, n)).astype(np.float32)
    y = np.full((G, m), 7.0, np.float32)
    k(x, y)
    ref = np.full((G, m), 0.0 if pad is None else pad)
    ref[:, :n] = x
    np.testing.assert_array_equal(f64(y), ref)


def test_memory_planner_orders_the_buffers_it_puts_on_shared_bytes():
    """A tile last read by the vector pipe and a later tile first written by MTE2 may share UB bytes
    under TL_ASCEND_MEMORY_PLANNING; the kernel's own syncs cannot know that, so the compiler orders
    the two (strict target, no automatic sync)."""
    M, N = 16, 256

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            t = T.alloc_ub((M // 2, N), "float32")
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.barrier_all()
                T.tile.fill(t, 2.0)
                T.pipe_barrier("v")
                T.tile.mul(a, a, t)  # last use of t
                b = T.alloc_ub((M // 2, N), "float32")
                T.copy(B[vid * M // 2, 0], b)  # may land on t's bytes
                T.barrier_all()
                T.tile.add(a, a, b)
                T.barrier_all()
                T.copy(a, C[vid * M // 2, 0])

    k = tilelang._core.ascend.compile(main.ir, {"tl.ascend_memory_planning": True}, "ascend")
    rng = np.random.default_rng(9)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    k.launch([a, b, c])
    np.testing.assert_allclose(f64(c), 2 * f64(a) + f64(b), rtol=1e-6)
    assert k.info()["syncs_inserted"] >= 1


def test_race_on_a_scalar_operand_names_the_users_line():
    """A tile op's scalar operand read from UB (`T.tile.fill(a, s[0])`) right after an MTE2 copy into
    it: the report carries the line of the T.tile.fill, not "<unknown location>"."""
    N = 64

    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((N,), "float32")
            s = T.alloc_ub((8,), "float32")
            with T.Scope("V"):
                if vid == 0:
                    T.copy(A[0:8], s)
                    T.tile.fill(a, s[0])  # marker: scalar-operand
                    T.barrier_all()
                    T.copy(a, C[0:N])

    with open(__file__) as f:
        line = next(i for i, ln in enumerate(f, 1) if "marker: scalar-operand" in ln and "next(" not in ln)
    k = tilelang._core.ascend.compile(main.ir, {}, "ascend")
    with pytest.raises(SyncError) as e:
        k.launch([np.ones(N, np.float32), np.zeros(N, np.float32)])
    msg = str(e.value)
    assert "<unknown location>" not in msg
    assert f"test_ascend_ascendc_route.py:{line}:" in msg and "scalar load of s" in msg


def same_tile_twice(M, N, differ):
    """Two blocks copy the same tile of A to the same place of C (as a persistent GEMM whose last wave
    repeats tiles does); with `differ`, block 1 adds 1 first."""

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(2, is_npu=True) as (cid, vid):
            a = T.alloc_ub((M // 2, N), "float32")
            with T.Scope("V"):
                T.copy(A[vid * M // 2, 0], a)
                T.barrier_all()
                if differ:
                    T.tile.add(a, a, T.cast(cid, "float32"))
                T.barrier_all()
                T.copy(a, C[vid * M // 2, 0])  # marker: same-tile

    return main


def test_byte_identical_write_after_write_between_blocks_is_a_warning(capfd):
    M, N = 16, 64
    k = tilelang._core.ascend.compile(same_tile_twice(M, N, False).ir, {}, "ascend")
    rng = np.random.default_rng(11)
    a = rng.standard_normal((M, N)).astype(np.float32)
    c = np.zeros_like(a)
    k.launch([a, c])
    np.testing.assert_array_equal(c, a)
    assert k.info()["race_warnings"] >= 1
    err = capfd.readouterr().err
    with open(__file__) as f:
        line = next(i for i, ln in enumerate(f, 1) if "marker: same-tile" in ln and "next(" not in ln)
    assert "byte-identical write-after-write" in err and "block 0" in err and "block 1" in err
    assert err.count(f"test_ascend_ascendc_route.py:{line}:") >= 2  # both writes named


def test_byte_identical_write_after_write_is_a_race_under_strict():
    M, N = 16, 64
    k = tilelang._core.ascend.compile(same_tile_twice(M, N, False).ir, {"tl.ascend_sim_strict": True}, "ascend")
    a = np.ones((M, N), np.float32)
    with pytest.raises(SyncError, match=r"race \(WAW\) on GM tensor 'C'"):
        k.launch([a, np.zeros_like(a)])


def test_different_bytes_written_by_two_blocks_stay_a_race():
    M, N = 16, 64
    k = tilelang._core.ascend.compile(same_tile_twice(M, N, True).ir, {}, "ascend")
    a = np.ones((M, N), np.float32)
    with pytest.raises(SyncError, match=r"race \(WAW\) on GM tensor 'C'"):
        k.launch([a, np.zeros_like(a)])


@pytest.mark.parametrize("rows", [5, 64])
def test_vector_kernel_the_vector_cores_cannot_split_runs_on_one(rows):
    """npuir route, vector-only kernel: a tile with an odd row count, or a single row of a tile read as
    a broadcast source (TileLang-Ascend's vec_add_auto_brc), cannot be halved between the two vector
    cores by rows; the kernel runs whole on one vector core per block instead of failing."""
    M, N, bn = rows * 2, 128, 64

    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel((M // rows) * (N // bn), is_npu=True) as (cid, _):
            by = cid // (N // bn)
            bx = cid % (N // bn)
            a = T.alloc_shared((rows, bn), "float32")
            b = T.alloc_shared((rows, bn), "float32")
            c = T.alloc_shared((rows, bn), "float32")
            T.copy(A[by * rows, bx * bn], a)
            T.copy(B[0, bx * bn], b)
            T.vadd(a[:, :], b[0, :], c[:, :])  # row 0 of b, broadcast over the rows of a
            T.copy(c, C[by * rows, bx * bn])

    k = tilelang.compile(main, target="npuir")
    rng = np.random.default_rng(rows)
    a, b = (rng.standard_normal((M, N)).astype(np.float32) for _ in range(2))
    c = np.zeros_like(a)
    k(a, b, c)
    np.testing.assert_allclose(f64(c), f64(a) + f64(b)[0:1, :], rtol=1e-6)
    assert "vid_reduction_fallback" in k.get_kernel_source()  # one vector core, and why


def test_printf_and_dump_tensor_around_an_npu_kernel(capfd):
    """TileLang-Ascend's print example: T.printf / T.dump_tensor before and after the T.Kernel block
    (its whole function is the kernel) run on every core, at the start and at the end of the body;
    a dump of a GM tensor other blocks are still writing is a warning (stale values), not a race.
    Also T.tile.bitwise_and on integer tiles, checked against numpy."""
    M, N = 4, 64

    @T.prim_func
    def main(A: T.Tensor((M, N), "int16"), B: T.Tensor((M, N), "int16"), C: T.Tensor((M, N), "int16")):
        T.printf("before the kernel\n")
        with T.Kernel(2, is_npu=True) as (cid, vid):
            a = T.alloc_ub((1, N), "int16")
            b = T.alloc_ub((1, N), "int16")
            with T.Scope("V"):
                T.copy(A[cid * 2 + vid, 0], a)
                T.copy(B[cid * 2 + vid, 0], b)
                T.barrier_all()
                T.tile.bitwise_and(a, a, b)
                T.barrier_all()
                T.copy(a, C[cid * 2 + vid, 0])
        T.printf("after the kernel\n")
        T.dump_tensor(C, 111, M * N, (M, N))

    k = tilelang.compile(main, target="ascendc")
    rng = np.random.default_rng(17)
    a, b = (rng.integers(-3000, 3000, (M, N)).astype(np.int16) for _ in range(2))
    c = np.zeros_like(a)
    k(a, b, c)
    np.testing.assert_array_equal(c, a & b)
    out = capfd.readouterr()
    assert out.out.count("before the kernel") >= 2 and out.out.count("after the kernel") >= 2
    assert out.out.index("before the kernel") < out.out.index("after the kernel")


def test_printf_outside_a_non_npu_kernel_is_still_an_error():
    from tilelang.errors import TileLangSyntaxError

    with pytest.raises(TileLangSyntaxError, match=r"T.printf must be inside a `with T.Kernel"):
        @T.prim_func
        def main(A: T.Tensor((4,), "float32")):
            T.printf("x\n")
            with T.Kernel(1, threads=32) as bx:
                A[0] = 1.0

    with pytest.raises(TileLangSyntaxError, match=r"T.printf must be inside a `with T.Kernel"):
        @T.prim_func
        def main2(A: T.Tensor((4,), "float32")):
            T.printf("x\n")


def test_bitwise_tile_ops_need_integer_tiles():
    with pytest.raises(TypeError, match="bitwise_or works on integer tiles, but 'a' is float32"):
        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_ub((64,), "float32")
                with T.Scope("V"):
                    T.tile.bitwise_or(a, a, a)
