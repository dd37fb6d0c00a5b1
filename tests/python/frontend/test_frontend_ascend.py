"""Ascend (TileLang-Ascend) Expert and Developer forms: the frontend only produces their IR."""
import itertools

import pytest

import tilelang.language as T
from frontend_ir_eval import evaluate, find, tile_ops
from tilelang.errors import TileLangSyntaxError
from tilelang.intrinsics import make_nz_layout, make_zn_layout


def expert_gemm(M, N, K, block_M, block_N, K_L1, dtype="float16", accum_dtype="float"):  # noqa: N803
    m_num, n_num = M // block_M, N // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        T.func_attr({"enable_auto_sync": False})
        with T.Kernel(m_num * n_num, is_npu=True) as (cid, _):
            bx = cid // n_num
            by = cid % n_num
            A_L1 = T.alloc_L1((block_M, K_L1), dtype)
            B_L1 = T.alloc_L1((K_L1, block_N), dtype)
            C_L0 = T.alloc_L0C((block_M, block_N), accum_dtype)
            T.annotate_address({A_L1: 0, B_L1: block_M * K_L1 * 2, C_L0: 0})
            T.annotate_layout({A_L1: make_zn_layout(A_L1), B_L1: make_nz_layout(B_L1)})
            with T.Scope("C"):
                T.set_flag("mte1", "mte2", 0)
                for k in T.serial(T.ceildiv(K, K_L1)):
                    T.wait_flag("mte1", "mte2", 0)
                    T.copy(A[bx * block_M, k * K_L1], A_L1)
                    T.copy(B[k * K_L1, by * block_N], B_L1)
                    T.set_flag("mte2", "mte1", 0)
                    T.wait_flag("mte2", "mte1", 0)
                    T.gemm_v0(A_L1, B_L1, C_L0, init=(k == 0))
                    T.set_flag("mte1", "mte2", 0)
                T.wait_flag("mte1", "mte2", 0)
                T.pipe_barrier("m")
                T.copy(C_L0, C[bx * block_M, by * block_N])
    return main


def test_expert_gemm():
    f = expert_gemm(512, 256, 512, 128, 128, 64)
    assert f.attrs == {"global_symbol": "main", "enable_auto_sync": False}
    kern = f.body
    assert [g.value for g in kern.grid] == [8, 2] and [v.name for v in kern.block_vars] == ["cid", "_"]
    assert kern.threads == [] and kern.thread_vars == []
    assert kern.attrs == {"is_npu": True, "npu_vid": True}
    L = [ln.strip() for ln in f.script().splitlines()]
    assert "alloc A_L1: L1 float16[128, 64]" in L and "alloc C_L0: L0C float32[128, 128]" in L
    assert "annotate_address(B_L1[0 :+ 64, 0 :+ 128], 16384)" in L
    assert 'annotate_layout(A_L1[0 :+ 128, 0 :+ 64]) {kind = "zn"}' in L
    assert 'annotate_layout(B_L1[0 :+ 64, 0 :+ 128]) {kind = "nz"}' in L
    assert 'attr "scope" = "C" {' in L
    assert 'evaluate ascend.set_flag<void>("mte1", "mte2", 0)' in L
    assert 'evaluate ascend.pipe_barrier<void>("m")' in L
    (g,) = tile_ops(f, "gemm_v0")
    assert repr(g.attrs["init"]) == "k == 0" and g.attrs["transpose_A"] is False
    assert [a.buffer.scope for a in g.args] == ["L1", "L1", "L0C"]


def test_expert_vector_core_and_cross_core_flags():
    @T.prim_func
    def main(X: T.Tensor((64, 128), "float32"), W: T.Tensor((64, 128), "float32")):
        with T.Kernel(4, is_npu=True) as (cid, vid):
            a_l0a = T.alloc_l0a((16, 16), "float16")
            b_l0b = T.alloc_L0B((16, 16), "float16")
            c_l0c = T.alloc_l0c((16, 16), "float32")
            x_ub = T.alloc_ub((8, 128), "float32")
            y_ub = T.alloc_UB((8, 128), "float32")
            l1 = T.alloc_l1((16, 16), "float16")
            l0 = T.alloc_l0((16, 16), "float16")
            with T.Scope("C"):
                T.mma(a_l0a, b_l0b, c_l0c, init=True)
                T.set_cross_flag("FIX", 3)
            with T.Scope("v"):
                T.wait_cross_flag(3)
                T.copy(X[cid * 16 + vid * 8, 0], x_ub)
                T.tile.exp(y_ub, x_ub)
                T.tile.max(y_ub, y_ub, x_ub)
                T.barrier_all()
                T.copy(y_ub, W[cid * 16 + vid * 8, 0])
                T.sync_all()
    L = [ln.strip() for ln in main.script().splitlines()]
    scopes = [a.buffer.scope for a in find(main.body, lambda s: s.kind == "allocate")]
    assert scopes == ["L0A", "L0B", "L0C", "UB", "UB", "L1", "L0"]
    assert 'attr "scope" = "V" {' in L
    assert "mma(a_l0a[0 :+ 16, 0 :+ 16], b_l0b[0 :+ 16, 0 :+ 16], c_l0c[0 :+ 16, 0 :+ 16]) {init = e:(true)}" in L
    assert 'evaluate ascend.set_cross_flag<void>("fix", 3, 2)' in L
    assert "evaluate ascend.wait_cross_flag<void>(3)" in L
    assert "copy(X[cid * 16 + vid * 8 :+ 8, 0 :+ 128], x_ub[0 :+ 8, 0 :+ 128])" in L
    assert "evaluate ascend.barrier_all()" in L and "evaluate ascend.sync_all()" in L


def test_developer_form():
    block_M, block_N, K_L1 = 64, 64, 32

    @T.prim_func
    def main(A: T.Tensor((128, 96), "float16"), B: T.Tensor((96, 128), "float16"), C: T.Tensor((128, 128), "float16")):
        with T.Kernel(4, threads=2, is_npu=True) as cid:
            bx, by = cid // 2, cid % 2
            A_s = T.alloc_shared((block_M, K_L1), "float16")
            B_s = T.alloc_shared((K_L1, block_N), "float16")
            C_f = T.alloc_fragment((block_M, block_N), "float")
            C_s = T.alloc_shared((block_M, block_N), "float16")
            for k in T.Pipelined(T.ceildiv(96, K_L1), num_stages=2):
                T.copy(A[bx * block_M, k * K_L1], A_s, [block_M, K_L1])
                T.copy(B[k * K_L1, by * block_N], B_s, [K_L1, block_N])
                T.gemm(A_s, B_s, C_f, [block_M, K_L1, block_N], initC=(k == 0))
            T.copy(C_f, C_s)
            T.exp(C_s, C_s)
            T.copy(C_s, C[bx * block_M, by * block_N])
    kern = main.body
    assert kern.attrs == {"is_npu": True, "npu_threads": 2}
    assert [g.value for g in kern.grid] == [4] and [v.name for v in kern.block_vars] == ["cid"]
    (g,) = tile_ops(main, "gemm")
    assert repr(g.attrs["clear_accum"]) == "k == 0"
    assert [o.op for o in tile_ops(main)] == ["copy", "copy", "gemm", "copy", "tile.exp", "copy"]


def test_npu_kernel_errors():
    with pytest.raises(ValueError, match="threads=1 or threads=2"):
        @T.prim_func
        def k(A: T.Tensor((8,), "float32")):
            with T.Kernel(4, threads=4, is_npu=True) as cid:
                A[0] = 0.0
    with pytest.raises(ValueError, match="exactly one grid extent"):
        @T.prim_func
        def k2(A: T.Tensor((8,), "float32")):
            with T.Kernel(4, 2, is_npu=True) as (cid, vid):
                A[0] = 0.0
    with pytest.raises(TileLangSyntaxError, match="Developer form .* binds one variable"):
        @T.prim_func
        def k3(A: T.Tensor((8,), "float32")):
            with T.Kernel(4, threads=2, is_npu=True) as (cid, vid):
                A[0] = 0.0
    with pytest.raises(TileLangSyntaxError, match="Ascend kernels have no threads"):
        @T.prim_func
        def k4(A: T.Tensor((8,), "float32")):
            with T.Kernel(4, is_npu=True) as (cid, vid):
                A[T.get_thread_binding()] = 0.0
    with pytest.raises(ValueError, match="unknown pipe 'mte4'"):
        @T.prim_func
        def k5(A: T.Tensor((8,), "float32")):
            with T.Kernel(4, is_npu=True) as (cid, vid):
                T.set_flag("mte4", "v", 0)
    with pytest.raises(ValueError, match="T.Scope takes"):
        T.Scope("X")


def reference_swizzle(idx, m_tiles, n_tiles, off):
    """GemmIdentityBlockSwizzle<off, 0>: panels of `off` tile-rows walked column by column,
    serpentine between panels."""
    total = m_tiles * n_tiles
    batch, inner = divmod(idx, total)
    panels = -(-m_tiles // off)
    panel, in_panel = divmod(inner, off * n_tiles)
    rows = off if panel < panels - 1 else m_tiles - off * panel
    m = panel * off + in_panel % rows
    n = in_panel // rows
    if panel % 2 == 1:
        n = n_tiles - 1 - n
    return batch * total + m * n_tiles + n


@pytest.mark.parametrize("M,N,bm,bn,off", [(512, 384, 128, 128, 2), (640, 256, 128, 64, 3), (256, 256, 64, 64, 1),
                                            (384, 512, 128, 128, 4)])
def test_ascend_use_swizzle_matches_the_block_swizzle(M, N, bm, bn, off):
    m_tiles, n_tiles = -(-M // bm), -(-N // bn)
    total = m_tiles * n_tiles

    @T.prim_func
    def main(C: T.Tensor((M, N), "float32")):
        with T.Kernel(total, is_npu=True) as (cid, vid):
            idx = T.use_swizzle(cid, M, N, 64, bm, bn, off=off)
            T.use_swizzle(cid, M, N, 64, bm, bn, off)   # bare statement: its value is unused
            C[idx // n_tiles, idx % n_tiles] = 1.0

    lets = [(s.var, s.value) for s in find(main.body, lambda s: s.kind == "let")]
    cid = main.body.block_vars[0]
    got = []
    for c in range(2 * total):
        env = {cid: c}
        for var, value in lets:
            env[var] = evaluate(value, env)
        got.append(env[[v for v, _ in lets if v.name == "idx"][0]])
    assert got == [reference_swizzle(c, m_tiles, n_tiles, off) for c in range(2 * total)]
    assert sorted(got[:total]) == list(range(total))   # a permutation of the tiles


def test_ascend_use_swizzle_column_direction_is_a_permutation():
    @T.prim_func
    def main(C: T.Tensor((512, 384), "float32")):
        with T.Kernel(12, is_npu=True) as (cid, vid):
            idx = T.use_swizzle(cid, 512, 384, 64, 128, 128, off=2, dir=1)
            C[0, 0] = T.cast(idx, "float32")
    lets = [(s.var, s.value) for s in find(main.body, lambda s: s.kind == "let")]
    seen = []
    for c in range(12):
        env = {main.body.block_vars[0]: c}
        for var, value in lets:
            env[var] = evaluate(value, env)
        seen.append(env[lets[-1][0]])
    assert sorted(seen) == list(range(12)) and seen != list(range(12))


def test_gpu_use_swizzle_sets_kernel_attributes():
    for order, expected in [("row", "row"), ("col", "col"), ("column", "col")]:
        @T.prim_func
        def main(C: T.Tensor((64, 64), "float32")):
            with T.Kernel(4, 4, threads=128) as (bx, by):
                T.use_swizzle(panel_size=10, order=order)
                C[bx, by] = 0.0
        assert main.body.attrs == {"use_swizzle_panel": 10, "use_swizzle_order": expected}

    @T.prim_func
    def off(C: T.Tensor((64, 64), "float32")):
        with T.Kernel(4, 4, threads=128) as (bx, by):
            T.use_swizzle(8, enable=False)
            C[bx, by] = 0.0
    assert off.body.attrs == {}
    with pytest.raises(ValueError, match="order must be 'row' or 'col'"):
        @T.prim_func
        def bad(C: T.Tensor((64, 64), "float32")):
            with T.Kernel(4, 4, threads=128) as (bx, by):
                T.use_swizzle(8, order="diagonal")


def test_printf_and_dump_tensor_on_ascend():
    @T.prim_func
    def main(X: T.Tensor((16,), "float32")):
        with T.Kernel(2, is_npu=True) as (cid, vid):
            ub = T.alloc_ub((16,), "float32")
            with T.Scope("V"):
                T.copy(X, ub)
                T.printf("cid=%d vid=%d\n", cid, vid)
                T.dump_tensor(ub, 3, 16)
    text = main.script()
    assert 'evaluate tl.printf<void>("cid=%d vid=%d\\n", cid, vid)' in text
    assert "dump_tensor(ub[0 :+ 16]) {desc = 3, size = 16}" in text


def test_all_npu_flag_pipes():
    pipes = ["mte1", "mte2", "mte3", "m", "v", "fix", "s"]

    @T.prim_func
    def main(X: T.Tensor((16,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            for a, b in itertools.product(pipes, pipes):
                T.set_flag(a.upper(), "PIPE_" + b.upper(), 1)
    calls = [s.value for s in find(main.body, lambda s: s.kind == "evaluate")]
    assert [(c.operands[0].value, c.operands[1].value) for c in calls] == list(itertools.product(pipes, pipes))


def test_expert_form_bound_to_one_name():
    @T.prim_func
    def main(X: T.Tensor((16,), "float32")):
        with T.Kernel(3, is_npu=True) as cid:
            X[cid] = 0.0
    kern = main.body
    assert [g.value for g in kern.grid] == [3, 2] and [v.name for v in kern.block_vars] == ["cid", "vid"]
    assert kern.attrs == {"is_npu": True, "npu_vid": True}
    assert "X[cid] = 0.0f32" in main.script()
