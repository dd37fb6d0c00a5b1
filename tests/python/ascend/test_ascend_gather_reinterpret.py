"""T.reinterpretcast, T.tile.createvecindex and T.tile.gather on the ascend target (the AscendC
primitives TileLang-Ascend's pos_embedding/rope example is built from). Values against numpy on
random inputs, on the simulator with its checker on; the error tier names the user's line."""
import os

import numpy as np
import pytest

import tilelang
import tilelang.language as T
from tilelang.errors import DeviceRuntimeError

HERE = os.path.basename(__file__)

# Developer mode as TileLang-Ascend's rope example writes it: no scopes, no flags.
DEV = {
    "tl.ascend_auto_sync": True,
    "tl.ascend_memory_planning": True,
    "tl.ascend_auto_cross_core_sync": True,
    "tl.ascend_auto_cv_combine": True,
}


def line_of(text):
    """Line number of the first line of this file containing `text` (a marker comment)."""
    with open(__file__) as f:
        for i, ln in enumerate(f, 1):
            if text in ln and "line_of" not in ln:
                return i
    raise AssertionError(text)


def build(func, configs=DEV):
    return tilelang.compile(func, target="ascend", pass_configs=configs)


@pytest.mark.parametrize("dtype", ["int32", "float32", "int16", "float16"])
def test_createvecindex_counts_from_first_value_in_row_major_order(dtype):
    R, N = 4, 64
    first = int(np.random.default_rng(3).integers(-50, 50))

    @T.prim_func
    def k(O: T.Tensor((R, N), dtype)):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            o = T.alloc_shared((R, N), dtype)
            T.tile.createvecindex(o, first)
            T.copy(o, O)

    out = np.zeros((R, N), dtype=dtype)
    build(k)(out)
    np.testing.assert_array_equal(out.astype(np.float64), first + np.arange(R * N, dtype=np.float64).reshape(R, N))


def test_createvecindex_on_cpu_is_the_loop_form():
    N = 96

    @T.prim_func
    def k(O: T.Tensor((N,), "int32")):
        with T.Kernel(1) as bx:
            o = T.alloc_fragment((N,), "int32")
            T.tile.createvecindex(o, 7)
            T.copy(o, O)

    out = np.zeros((N,), dtype=np.int32)
    tilelang.compile(k, target="cpu")(out)
    np.testing.assert_array_equal(out, 7 + np.arange(N))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gather_by_byte_offsets_matches_numpy(dtype):
    """Random indices (with repeats) -> byte offsets computed on the vector core -> uint32 view -> gather."""
    R, N = 8, 64
    esize = np.dtype(dtype).itemsize
    base_elems = 5

    @T.prim_func
    def k(S: T.Tensor((R, N), dtype), I: T.Tensor((R, N), "int32"), O: T.Tensor((R, N), dtype)):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            s = T.alloc_shared((R, N), dtype)
            idx = T.alloc_shared((R, N), "int32")
            offs = T.alloc_shared((R, N), "uint32")
            o = T.alloc_shared((R, N), dtype)
            T.copy(S, s)
            T.copy(I, idx)
            T.tile.mul(idx, idx, esize)
            T.reinterpretcast(offs, idx, "uint32_t")
            T.tile.gather(o, s, offs, base_elems * esize)
            T.copy(o, O)

    rng = np.random.default_rng(15)
    src = rng.standard_normal((R, N)).astype(dtype)
    ind = rng.integers(0, R * N - base_elems, size=(R, N)).astype(np.int32)
    out = np.zeros((R, N), dtype=dtype)
    build(k)(src, ind, out)
    np.testing.assert_array_equal(out, src.reshape(-1)[ind + base_elems])


def test_rope_style_pair_swap_and_rotation():
    """The rope example's construction: indices i ^ 1, times 4, viewed as uint32, gathered; then
    out = x * cos + rot(x) * sin with the sign pattern [-, +, -, +, ...]."""
    R, D = 16, 128

    @T.prim_func
    def k(X: T.Tensor((R, D), "float32"), C: T.Tensor((1, D), "float32"), S: T.Tensor((1, D), "float32"),
          O: T.Tensor((R, D), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            x = T.alloc_shared((R, D), "float32")
            c = T.alloc_shared((1, D), "float32")
            s = T.alloc_shared((1, D), "float32")
            sign = T.alloc_shared((1, D), "float32")
            cb = T.alloc_shared((R, D), "float32")
            sb = T.alloc_shared((R, D), "float32")
            idx = T.alloc_shared((R, D), "int32")
            one = T.alloc_shared((R, D), "int32")
            offs = T.alloc_shared((R, D), "uint32")
            rot = T.alloc_shared((R, D), "float32")
            T.copy(X, x)
            T.copy(C, c)
            T.copy(S, s)
            T.tile.createvecindex(idx, 0)
            T.tile.fill(one, 1)
            T.tile.bitwise_xor(idx, idx, one)
            T.tile.mul(idx, idx, 4)
            T.reinterpretcast(offs, idx, "uint32_t")
            T.tile.fill(sign, -1.0)
            for i in T.serial(0, D // 2):
                sign[0, 2 * i + 1] = 1.0
            T.tile.mul(s, s, sign)
            T.tile.broadcast(cb, c)
            T.tile.broadcast(sb, s)
            T.tile.gather(rot, x, offs, 0)
            T.tile.mul(x, x, cb)
            T.tile.mul(rot, rot, sb)
            T.tile.add(x, x, rot)
            T.copy(x, O)

    rng = np.random.default_rng(2026)
    x = rng.standard_normal((R, D)).astype(np.float32)
    c = rng.standard_normal((1, D)).astype(np.float32)
    s = rng.standard_normal((1, D)).astype(np.float32)
    out = np.zeros_like(x)
    build(k)(x, c, s, out)
    xd = x.astype(np.float64)
    pairs = xd.reshape(R, D // 2, 2)
    rot = np.stack([-pairs[..., 1], pairs[..., 0]], axis=-1).reshape(R, D)
    np.testing.assert_allclose(out, xd * c + rot * s, rtol=1e-6, atol=1e-6)


def test_reinterpretcast_is_an_alias_not_a_copy():
    """dst names src's bytes: float bits read as int32, and a write through src after the cast is
    seen through dst."""
    N = 64

    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), Bits: T.Tensor((N,), "int32"), After: T.Tensor((N,), "int32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_shared((N,), "float32")
            bits = T.alloc_shared((N,), "int32")
            T.copy(A, a)
            T.reinterpretcast(bits, a, "int32_t")
            T.copy(bits, Bits)
            T.tile.mul(a, a, 2.0)  # written through src ...
            T.copy(bits, After)    # ... read through the view

    rng = np.random.default_rng(7)
    a = rng.standard_normal(N).astype(np.float32)
    bits = np.zeros(N, np.int32)
    after = np.zeros(N, np.int32)
    build(k)(a, bits, after)
    np.testing.assert_array_equal(bits, a.view(np.int32))
    np.testing.assert_array_equal(after, (a * np.float32(2.0)).view(np.int32))


# ---- error tier -------------------------------------------------------------------------------------


def test_reinterpretcast_of_different_byte_size_is_a_type_error():
    with pytest.raises(TypeError) as e:
        @T.prim_func
        def k(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_shared((64,), "float32")
                h = T.alloc_shared((64,), "float16")
                T.reinterpretcast(h, a, "half")  # marker: bad-size
    msg = str(e.value)
    assert f"{HERE}:{line_of('marker: bad-size')}" in msg
    assert "'h' float16[64] is 128 bytes" in msg and "'a' float32[64] is 256 bytes" in msg
    assert "128 elements of float16" in msg


def test_reinterpretcast_cast_type_must_be_the_destination_dtype():
    with pytest.raises(TypeError, match="cast type 'int32_t' is not the dtype of dst 'u' uint32") as e:
        @T.prim_func
        def k(A: T.Tensor((64,), "int32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_shared((64,), "int32")
                u = T.alloc_shared((64,), "uint32")
                T.reinterpretcast(u, a, "int32_t")  # marker: bad-cast-type
    assert f"{HERE}:{line_of('marker: bad-cast-type')}" in str(e.value)


def test_reinterpretcast_takes_whole_buffers():
    with pytest.raises(TypeError, match="src must be a buffer"):
        @T.prim_func
        def k(A: T.Tensor((64,), "int32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                a = T.alloc_shared((64,), "int32")
                u = T.alloc_shared((32,), "uint32")
                T.reinterpretcast(u, a[0:32], "uint32")


def test_reinterpretcast_is_not_implemented_on_cpu():
    @T.prim_func
    def k(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "uint32")):
        with T.Kernel(1) as bx:
            a = T.alloc_fragment((64,), "int32")
            u = T.alloc_fragment((64,), "uint32")
            T.copy(A, a)
            T.reinterpretcast(u, a, "uint32")
            T.copy(u, B)
    with pytest.raises(NotImplementedError, match="tile.reinterpretcast on target cpu"):
        tilelang.compile(k, target="cpu")


def test_gather_offsets_must_be_uint32():
    with pytest.raises(TypeError, match="must be uint32 byte offsets.*T.reinterpretcast") as e:
        @T.prim_func
        def k(S: T.Tensor((64,), "float32")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                s = T.alloc_shared((64,), "float32")
                i = T.alloc_shared((64,), "int32")
                o = T.alloc_shared((64,), "float32")
                T.tile.gather(o, s, i, 0)  # marker: int32-offsets
    assert f"{HERE}:{line_of('marker: int32-offsets')}" in str(e.value)


def gather_kernel(N):
    @T.prim_func
    def k(S: T.Tensor((N,), "float32"), I: T.Tensor((N,), "uint32"), O: T.Tensor((N,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            s = T.alloc_shared((N,), "float32")
            i = T.alloc_shared((N,), "uint32")
            o = T.alloc_shared((N,), "float32")
            T.copy(S, s)
            T.copy(I, i)
            T.tile.gather(o, s, i, 0)  # marker: gather-run
            T.copy(o, O)
    return k


@pytest.mark.parametrize("bad,what", [(64 * 4, "outside its 256 bytes"), (6, "not a multiple of the element size 4")])
def test_gather_out_of_range_or_misaligned_offset_is_a_runtime_error_naming_the_line(bad, what):
    N = 64
    k = build(gather_kernel(N))
    rng = np.random.default_rng(1)
    s = rng.standard_normal(N).astype(np.float32)
    offs = (rng.integers(0, N, size=N) * 4).astype(np.uint32)
    offs[17] = bad
    with pytest.raises(DeviceRuntimeError) as e:
        k(s, offs, np.zeros(N, np.float32))
    msg = str(e.value)
    assert f"{HERE}:{line_of('marker: gather-run')}" in msg
    assert "gather offset 17 selects byte" in msg and what in msg
    # The kernel still runs afterwards with good offsets.
    offs[17] = 0
    out = np.zeros(N, np.float32)
    k(s, offs, out)
    np.testing.assert_array_equal(out, s[offs // 4])


def test_reinterpretcast_keeps_the_source_memory_for_the_view():
    """With memory planning the source is dead after the cast; its bytes must not be given to a
    buffer allocated later while the view is still read."""
    N = 256

    @T.prim_func
    def k(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), Bits: T.Tensor((N,), "int32"),
          C: T.Tensor((N,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_shared((N,), "float32")
            bits = T.alloc_shared((N,), "int32")
            T.copy(A, a)
            T.reinterpretcast(bits, a, "int32")
            b = T.alloc_shared((N,), "float32")
            T.copy(B, b)
            T.tile.exp(b, b)
            T.copy(b, C)
            T.copy(bits, Bits)

    rng = np.random.default_rng(11)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    bits = np.zeros(N, np.int32)
    c = np.zeros(N, np.float32)
    build(k)(a, b, bits, c)
    np.testing.assert_array_equal(bits, a.view(np.int32))
    np.testing.assert_allclose(c, np.exp(b.astype(np.float64)), rtol=1e-6)


def test_reinterpretcast_across_memories_is_a_syntax_error():
    from tilelang.errors import TileLangSyntaxError

    @T.prim_func
    def k(A: T.Tensor((64,), "int32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_L1((64,), "int32")
            u = T.alloc_ub((64,), "uint32")
            T.reinterpretcast(u, a, "uint32")  # marker: two-memories
    with pytest.raises(TileLangSyntaxError, match="'u' is in UB and 'a' in L1") as e:
        tilelang.compile(k, target="ascend")
    assert f"{HERE}:{line_of('marker: two-memories')}" in str(e.value)


def test_expert_mode_without_memory_planning():
    """Expert form (explicit scope and barriers, no memory planning): the view still aliases."""
    N = 128

    @T.prim_func
    def k(I: T.Tensor((N,), "int32"), S: T.Tensor((N,), "float32"), O: T.Tensor((N,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            idx = T.alloc_ub((N,), "int32")
            offs = T.alloc_ub((N,), "uint32")
            s = T.alloc_ub((N,), "float32")
            o = T.alloc_ub((N,), "float32")
            with T.Scope("V"):
                if vid == 0:
                    T.copy(I, idx)
                    T.copy(S, s)
                    T.barrier_all()
                    T.tile.mul(idx, idx, 4)
                    T.reinterpretcast(offs, idx, "uint32_t")
                    T.pipe_barrier("v")
                    T.tile.gather(o, s, offs, 0)
                    T.barrier_all()
                    T.copy(o, O)

    rng = np.random.default_rng(21)
    ind = rng.integers(0, N, size=N).astype(np.int32)
    s = rng.standard_normal(N).astype(np.float32)
    out = np.zeros(N, np.float32)
    tilelang.compile(k, target="ascend")(ind, s, out)
    np.testing.assert_array_equal(out, s[ind])
