"""Whole kernels, written as TileLang users write them, and the IR the frontend builds for them."""
import itertools
import os
import re
import sys

import pytest

import tilelang
import tilelang.language as T
from frontend_ir_eval import THIS_FILE, evaluate, find, lets_until, tile_ops

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/python: kernel_zoo
import kernel_zoo as zoo  # noqa: E402


def lines(func):
    return [ln.strip() for ln in func.script().splitlines()]


elementwise_add_1d = zoo.add_1d


def elementwise_add_2d(M, N, block_M, block_N, dtype="float16"):
    @T.prim_func
    def add(A: T.Tensor((M, N), dtype), B: T.Tensor((M, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_N), dtype)
            B_shared = T.alloc_shared((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)
            T.copy(A[by * block_M, bx * block_N], A_shared)
            T.copy(B[by * block_M, bx * block_N], B_shared)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_shared[i, j] + B_shared[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])
    return add


def test_elementwise_add_1d():
    f = elementwise_add_1d(1000, 256)
    assert f.name == "add" and f.attrs == {"global_symbol": "add"}
    assert [p.name for p in f.params] == ["A", "B", "C"]
    text = f.script()
    assert "func @add(A: global float32[1000], B: global float32[1000], C: global float32[1000])" in text
    assert "kernel(grid=[4], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32])" in text
    assert "for i: int32 in parallel(0, 256) {" in text
    assert "C[bx * 256 + i] = A[bx * 256 + i] + B[bx * 256 + i]" in text


def test_elementwise_add_2d():
    f = elementwise_add_2d(512, 1024, 128, 256)
    L = lines(f)
    assert "kernel(grid=[4, 4], blocks=[bx: int32, by: int32], threads=[128], thread_vars=[tx: int32]) {" in L
    assert "alloc A_shared: shared float16[128, 256]" in L
    assert "alloc C_local: fragment float16[128, 256]" in L
    # BufferLoad origins take their extents from the other side of the copy.
    assert "copy(A[by * 128 :+ 128, bx * 256 :+ 256], A_shared[0 :+ 128, 0 :+ 256])" in L
    assert "copy(C_local[0 :+ 128, 0 :+ 256], C[by * 128 :+ 128, bx * 256 :+ 256])" in L
    assert "C_local[i, j] = A_shared[i, j] + B_shared[i, j]" in L
    kernel = f.body
    assert kernel.kind == "kernel" and [b.name for b in kernel.block_vars] == ["bx", "by"]


def matmul(M, N, K, block_M, block_N, block_K, dtype="float16", accum_dtype="float", stages=3):
    return zoo.gemm(M, N, K, block_M, block_N, block_K, dtype, accum_dtype, trans_B=True, num_stages=stages)


def test_gemm_transpose_b_pipelined():
    f = matmul(1024, 768, 512, 128, 128, 32)
    L = lines(f)
    assert "fill(C_local[0 :+ 128, 0 :+ 128], 0.0f32)" in L
    assert "for k: int32 in pipelined(0, 16) {cross_interval = 1, num_stages = 3} {" in L
    assert "copy(B[bx * 128 :+ 128, k * 32 :+ 32], B_shared[0 :+ 128, 0 :+ 32])" in L
    (g,) = tile_ops(f, "gemm")
    assert g.attrs["transpose_B"] is True and g.attrs["transpose_A"] is False
    assert g.attrs["policy"] == "Square" and g.attrs["k_pack"] == 1
    assert g.attrs["clear_accum"].value is False
    a, b, c = g.args
    assert [a.buffer.name, b.buffer.name, c.buffer.name] == ["A_shared", "B_shared", "C_local"]
    loop = find(f.body, lambda s: s.kind == "for")[0]
    assert loop.for_kind == "pipelined" and loop.annotations == {"num_stages": 3, "cross_interval": 1}


def test_gemm_dynamic_m():
    m = T.dynamic("m")
    f = matmul(m, 256, 256, 64, 64, 32)
    text = f.script()
    assert "func @main dyn[m: int32](A: global float16[m, 256]" in text
    assert "kernel(grid=[4, floordiv(m + 64 - 1, 64)]" in text
    assert [v.name for v in f.ir.dynamic_vars] == ["m"]


def softmax(M, N, block_M):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            A_local = T.alloc_fragment((block_M, N), "float32")
            row_max = T.alloc_fragment((block_M,), "float32")
            row_sum = T.alloc_fragment((block_M,), "float32")
            T.copy(A[bx * block_M:(bx + 1) * block_M, :], A_local)
            T.reduce_max(A_local, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] = T.exp(A_local[i, j] - row_max[i])
            T.reduce_sum(A_local, row_sum, dim=-1)
            for i, j in T.Parallel(block_M, N):
                A_local[i, j] /= row_sum[i]
            T.copy(A_local, B[bx * block_M:(bx + 1) * block_M, :])
    return main


def test_softmax():
    f = softmax(256, 512, 4)
    L = lines(f)
    assert "copy(A[bx * 4 :+ 4, 0 :+ 512], A_local[0 :+ 4, 0 :+ 512])" in L
    assert 'reduce(A_local[0 :+ 4, 0 :+ 512], row_max[0 :+ 4]) {clear = true, dim = 1, type = "max"}' in L
    assert 'reduce(A_local[0 :+ 4, 0 :+ 512], row_sum[0 :+ 4]) {clear = true, dim = 1, type = "sum"}' in L
    assert "A_local[i, j] = exp(A_local[i, j] - row_max[i])" in L
    assert "A_local[i, j] = A_local[i, j] / row_sum[i]" in L


def rms_norm(M, N, blk_m):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float"), B: T.Tensor((M, N), "float")):
        with T.Kernel(T.ceildiv(M, blk_m), threads=128) as bx:
            A_shared = T.alloc_shared((blk_m, N), "float")
            A_pow_local = T.alloc_fragment((blk_m, N), "float")
            A_local = T.alloc_fragment((blk_m, N), "float")
            A_powsum = T.alloc_fragment((blk_m,), "float")
            T.copy(A[bx * blk_m:(bx + 1) * blk_m, :], A_shared)
            T.copy(A_shared, A_local)
            for i, j in T.Parallel(blk_m, N):
                A_pow_local[i, j] = A_local[i, j] * A_local[i, j]
            T.reduce_sum(A_pow_local, A_powsum, dim=1)
            for i in T.Parallel(blk_m):
                A_powsum[i] = T.rsqrt(A_powsum[i] / N + 1e-12)
            for i, j in T.Parallel(blk_m, N):
                A_local[i, j] *= A_powsum[i]
            T.copy(A_local, B[bx * blk_m:(bx + 1) * blk_m, :])
    return main


def test_rms_norm():
    f = rms_norm(1024, 512, 2)
    L = lines(f)
    assert "alloc A_powsum: fragment float32[2]" in L
    assert "A_powsum[i] = rsqrt(A_powsum[i] / 512.0f32 + 1e-12f32)" in L
    assert "A_local[i, j] = A_local[i, j] * A_powsum[i]" in L
    assert [op.op for op in tile_ops(f)] == ["copy", "copy", "reduce", "copy"]


layer_norm = zoo.layer_norm


def test_layer_norm():
    f = layer_norm(64, 256, 4)
    L = lines(f)
    assert "copy(X[bx * 4 :+ 4, 0 :+ 256], x[0 :+ 4, 0 :+ 256])" in L
    assert ("x[i, j] = (x[i, j] - mean[i]) * rsqrt(var[i] / 256.0f32 + 1e-05f32) * "
            "cast<float32>(gamma[j]) + cast<float32>(beta[j])") in L
    (store,) = [s for s in find(f.body, lambda s: s.kind == "store") if s.buffer.name == "x"]
    assert store.span.file == os.path.join(os.path.dirname(os.path.dirname(THIS_FILE)), "kernel_zoo.py")


def test_reduce_and_cumsum():
    @T.prim_func
    def main(A: T.Tensor((64, 32), "float32"), S: T.Tensor((32,), "float32"), C: T.Tensor((64, 32), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((64, 32), "float32")
            col = T.alloc_fragment((32,), "float32")
            T.copy(A, A_s)
            T.reduce_sum(A_s, col, dim=0)
            T.reduce_max(A_s, col, dim=0, clear=False)
            T.reduce_abssum(A_s[0:16, :], col, dim=0)
            T.reduce_min(A_s[3, :], col[0:1], dim=1)   # a row: dim 1 is dim 0 of the squeezed region
            T.cumsum(A_s, dim=1, reverse=True)
            T.cumsum(A_s, C[0:64, 0:32], dim=0)
            T.copy(col, S)
    ops = tile_ops(main)
    reds = [o for o in ops if o.op == "reduce"]
    assert [(r.attrs["type"], r.attrs["dim"], r.attrs["clear"]) for r in reds] == [
        ("sum", 0, True), ("max", 0, False), ("abssum", 0, True), ("min", 0, True)]
    scans = [o for o in ops if o.op == "cumsum"]
    assert scans[0].attrs == {"dim": 1, "reverse": True}
    assert scans[0].args[0].buffer.same_as(scans[0].args[1].buffer)  # in place
    assert scans[1].attrs == {"dim": 0, "reverse": False} and scans[1].args[1].buffer.name == "C"


flashattn = zoo.flashattn


@pytest.mark.parametrize("causal", [True, False])
def test_flash_attention_forward(causal):
    f = flashattn(2, 4, 256, 64, causal)
    L = lines(f)
    assert "kernel(grid=[4, 4, 2], blocks=[bx: int32, by: int32, bz: int32], threads=[128], thread_vars=[tx: int32]) {" in L
    assert "copy(Q[bz :+ 1, bx * 64 :+ 64, by :+ 1, 0 :+ 64], Q_shared[0 :+ 64, 0 :+ 64])" in L
    assert "fill(scores_max[0 :+ 64], -inf_f32)" in L
    if causal:
        assert "let loop_range: int32 = min(4, floordiv((bx + 1) * 64 + 64 - 1, 64))" in L
        assert "for k: int32 in pipelined(0, loop_range) {cross_interval = 1, num_stages = 2} {" in L
        assert "acc_s[i, j] = select(bx * 64 + i >= k * 64 + j, 0.0f32, -inf_f32)" in L
    else:
        assert "for k: int32 in pipelined(0, 4) {cross_interval = 1, num_stages = 2} {" in L
        assert "fill(acc_s[0 :+ 64, 0 :+ 64], 0.0f32)" in L
    gemms = tile_ops(f, "gemm")
    assert [g.attrs["policy"] for g in gemms] == ["FullRow", "FullRow"]
    assert [g.attrs["transpose_B"] for g in gemms] == [True, False]
    # Macro statements carry the macro's source lines, inside the pipelined loop.
    loop = find(f.body, lambda s: s.kind == "for" and s.for_kind == "pipelined")[0]
    macro_copy = tile_ops(loop.body, "copy")[0]
    assert macro_copy.args[0].buffer.name == "K" and macro_copy.span.line < loop.span.line
    assert re.search(r"scores_scale\[(i\w*)\] = exp2\(scores_max_prev\[\1\] \* 0.18033688f32 - "
                     r"scores_max\[\1\] \* 0.18033688f32\)", f.script())


def persistent_gemm(M, N, K, bm, bn, bk, workers, group_size=8):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16")):
        with T.Kernel(workers, threads=128) as block_id:
            A_s = T.alloc_shared((bm, bk), "float16")
            B_s = T.alloc_shared((bk, bn), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            for bx, by in T.Persistent([T.ceildiv(M, bm), T.ceildiv(N, bn)], workers, block_id, group_size):
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                    T.copy(A[bx * bm, k * bk], A_s)
                    T.copy(B[k * bk, by * bn], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[bx * bm, by * bn])
    return main


def reference_grouped_order(rows, cols, group):
    """Tile id -> (row, col): consecutive ids walk `group` rows of a column, then the next column."""
    out = []
    for t in range(rows * cols):
        g, r = divmod(t, group * cols)
        first = g * group
        height = min(rows - first, group)
        out.append((first + r % height, r // height))
    return out


@pytest.mark.parametrize("M,N,workers,group", [(512, 384, 7, 4), (1024, 256, 3, 8), (256, 256, 16, 2),
                                                (640, 384, 5, 3)])
def test_persistent_gemm_schedule(M, N, workers, group):
    f = persistent_gemm(M, N, 256, 128, 128, 32, workers, group)
    rows, cols = -(-M // 128), -(-N // 128)
    total = rows * cols
    (wave_loop,) = find(f.body, lambda s: s.kind == "for" and s.for_kind == "persistent")
    ann = wave_loop.annotations
    assert ann["group_size"] == group and ann["wave_size"].value == workers
    assert [d.value for d in ann["domain"]] == [rows, cols]
    assert wave_loop.extent.value == -(-total // workers)
    lets, guard = lets_until(wave_loop.body, "if")
    assert [v.name for v, _ in lets] == ["tile", "bx", "by"]
    block_id = f.body.block_vars[0]
    seen = {}
    for w, b in itertools.product(range(wave_loop.extent.value), range(workers)):
        env = {wave_loop.var: w, block_id: b}
        for var, value in lets:
            env[var] = evaluate(value, env)
        if evaluate(guard.cond, env):
            seen[env[lets[0][0]]] = (env[lets[1][0]], env[lets[2][0]])
        else:
            assert env[lets[0][0]] >= total
    # Every tile is visited exactly once, in the grouped order.
    assert sorted(seen) == list(range(total))
    assert [seen[t] for t in range(total)] == reference_grouped_order(rows, cols, group)
    assert "copy(C_l[0 :+ 128, 0 :+ 128], C[bx * 128 :+ 128, by * 128 :+ 128])" in f.script()


def test_persistent_three_dimensional_domain():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(4, threads=32) as wid:
            for b, i, j in T.Persistent([2, 3, 5], 4, wid, group_size=2):
                A[0] = b + i + j
    (loop,) = find(main.body, lambda s: s.kind == "for")
    lets, guard = lets_until(loop.body, "if")
    seen = set()
    for w, wid in itertools.product(range(loop.extent.value), range(4)):
        env = {loop.var: w, main.body.block_vars[0]: wid}
        for var, value in lets:
            env[var] = evaluate(value, env)
        if evaluate(guard.cond, env):
            seen.add(tuple(env[v] for v, _ in lets[1:]))
    assert seen == set(itertools.product(range(2), range(3), range(5)))


def test_jit_builder_pattern_parses_each_call():
    # The usual @tilelang.jit builder: a prim_func defined inside a function, closure values constant.
    f1 = elementwise_add_1d(256, 64)
    f2 = elementwise_add_1d(512, 128)
    assert "grid=[4]" in f1.script() and "parallel(0, 64)" in f1.script()
    assert "grid=[4]" in f2.script() and "parallel(0, 128)" in f2.script()
    assert isinstance(f1, T.PrimFunc) and not f1.ir.same_as(f2.ir)
    with pytest.raises(TypeError, match="is a @T.prim_func .* tilelang.compile"):
        f1()
    assert tilelang.language.PrimFunc is T.PrimFunc


KERNELS = {
    "add_1d": lambda: elementwise_add_1d(1000, 256),
    "add_2d": lambda: elementwise_add_2d(512, 1024, 128, 256),
    "gemm": lambda: matmul(1024, 768, 512, 128, 128, 32),
    "gemm_dynamic": lambda: matmul(T.dynamic("m"), 256, 256, 64, 64, 32),
    "softmax": lambda: softmax(256, 512, 4),
    "rms_norm": lambda: rms_norm(1024, 512, 2),
    "layer_norm": lambda: layer_norm(64, 256, 4),
    "flash_causal": lambda: flashattn(2, 4, 256, 64, True),
    "flash": lambda: flashattn(2, 4, 256, 64, False),
    "persistent": lambda: persistent_gemm(640, 384, 256, 128, 128, 32, 5, 3),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_kernels_verify_and_round_trip_through_the_textual_ir(name):
    from tilelang import _core
    f = KERNELS[name]()
    _core.verify(f.ir)
    parsed = _core.parse_ir(f.script(), f"<{name}>")
    assert _core.structural_equal(f.ir, parsed), _core.structural_diff(f.ir, parsed)
    # Parsing the same kernel twice gives structurally equal IR (the kernel-cache key is stable).
    again = KERNELS[name]()
    assert _core.structural_equal(f.ir, again.ir)
    assert _core.canonical_text(f.ir) == _core.canonical_text(again.ir)


def test_different_compile_time_values_give_different_ir():
    from tilelang import _core
    assert not _core.structural_equal(matmul(1024, 768, 512, 128, 128, 32).ir, matmul(1024, 768, 512, 64, 128, 32).ir)
