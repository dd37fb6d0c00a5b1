"""TVM-style kernels as TileLang programs write them (docs/COMPATIBILITY.md, "TVM-style forms"):
loops bound with T.thread_binding instead of T.Kernel, pointer parameters (T.handle with
T.match_buffer, T.ptr with T.make_tensor), TVM's cross-thread all-reduce idiom (T.attr with a
T.comm_reducer around T.tvm_thread_allreduce), and apply_simplify dropping unused parameters.
Values are checked against torch / numpy references on random inputs."""
import pytest
import torch

import tilelang
import tilelang.language as T
from tilelang.transform.simplify import apply_simplify


# ---- T.thread_binding ------------------------------------------------------------------------------

def bound_scale(M, N, threads):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        for by in T.thread_binding(M, thread="blockIdx.y"):  # blockIdx.x never bound: extent 1
            for tx in T.thread_binding(threads, thread="threadIdx.x"):
                for k in T.serial(N // threads):
                    B[by, k * threads + tx] = A[by, k * threads + tx] * 3.0 - tx
    return main


def test_thread_binding_grid_and_threads(device):
    M, N, threads = 6, 96, 32
    kernel = tilelang.compile(bound_scale(M, N, threads))
    A = torch.randn(M, N, device=device)
    B = torch.zeros(M, N, device=device)
    kernel(A, B)
    tx = (torch.arange(N, device=device) % threads).float()
    torch.testing.assert_close(B, A * 3.0 - tx, rtol=1e-6, atol=1e-5)


@tilelang.jit
def bound_offset(A: T.Tensor((4, 48), T.float32), B: T.Tensor((4, 40), T.float32)):
    # a binding starting at 8: the variable runs over 8..47
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for j in T.thread_binding(8, 48, thread="threadIdx.x"):
            B[bx, j - 8] = A[bx, j] + bx


def test_thread_binding_with_start(device):
    A = torch.randn(4, 48, device=device)
    B = torch.zeros(4, 40, device=device)
    bound_offset(A, B)
    ref = A[:, 8:] + torch.arange(4, device=device).float()[:, None]
    torch.testing.assert_close(B, ref)


def test_thread_binding_errors():
    with pytest.raises(tilelang.language.tir_compat._SyntaxError, match="T.get_thread_binding"):
        @T.prim_func
        def inside_kernel(A: T.Tensor((32,), T.float32)):
            with T.Kernel(1, threads=32):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    A[tx] = 1.0
    with pytest.raises(tilelang.language.tir_compat._SyntaxError, match="bound twice"):
        @T.prim_func
        def twice(A: T.Tensor((32,), T.float32)):
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for ty in T.thread_binding(32, thread="threadIdx.x"):
                    A[tx] = 1.0
    with pytest.raises(NotImplementedError, match="vthread"):
        T.thread_binding(4, thread="vthread")


# ---- pointer parameters --------------------------------------------------------------------------

def handle_axpy(N, block):
    @T.prim_func
    def main(X_ptr: T.handle, Y_ptr: T.handle, alpha: T.float32):
        X = T.match_buffer(X_ptr, (N,), T.float32)
        Y = T.match_buffer(Y_ptr, (N,), T.float32)
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                if bx * block + i < N:
                    Y[bx * block + i] = alpha * X[bx * block + i] + Y[bx * block + i]
    return main


def test_handle_match_buffer(device):
    kernel = tilelang.compile(handle_axpy(1000, 128))
    x = torch.randn(1000, device=device)
    y = torch.randn(1000, device=device)
    ref = 0.5 * x + y
    kernel(x, y, 0.5)
    torch.testing.assert_close(y, ref)


@tilelang.jit
def ptr_matmul(A: T.ptr, B: T.ptr, C: T.ptr, M: int, N: int, K: int, dtype: T.dtype, block: int = 32):
    A = T.make_tensor(A, (M, K), dtype)
    B = T.make_tensor(B, (K, N), dtype)
    C = T.make_tensor(C, (M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
        A_s = T.alloc_shared((block, K), dtype)
        B_s = T.alloc_shared((K, block), dtype)
        acc = T.alloc_fragment((block, block), T.float32)
        T.clear(acc)
        T.copy(A[by * block, 0], A_s)
        T.copy(B[0, bx * block], B_s)
        T.gemm(A_s, B_s, acc)
        T.copy(acc, C[by * block, bx * block])


def test_ptr_make_tensor(device):
    M, N, K = 64, 96, 32
    kernels = ptr_matmul.par_compile([{"A": T.ptr(), "B": T.ptr(), "C": T.ptr(), "M": M, "N": N, "K": K,
                                       "dtype": dt} for dt in (T.float16, T.float32)])
    assert len(kernels) == 2 and all(k is not None for k in kernels)
    for dt in (torch.float16, torch.float32):
        A = torch.randn(M, K, device=device).to(dt)
        B = torch.randn(K, N, device=device).to(dt)
        C = torch.empty(M, N, device=device)
        ptr_matmul(A, B, C, M, N, K, dt)
        torch.testing.assert_close(C, A.double().matmul(B.double()).float(), rtol=1e-3, atol=1e-2)


def test_pointer_never_viewed():
    with pytest.raises(tilelang.language.tir_compat._SyntaxError, match="never given a tensor view"):
        @T.prim_func
        def main(X_ptr: T.handle, Y: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=4):
                tx = T.get_thread_binding()
                Y[tx] = 1.0


# ---- TVM's all-reduce idiom --------------------------------------------------------------------------

def splitk_gemv(N, K, block_N, reduce_threads, reducer="sum"):
    """y[n] = sum_k W[n, k] * x[k] (or the max of the products), reduced across threadIdx.y."""
    tile_k = K // reduce_threads

    @T.prim_func
    def main(W: T.Tensor((N, K), T.float16), x: T.Tensor((K,), T.float16), y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), threads=(block_N, reduce_threads)) as bn:
            tn = T.get_thread_binding(0)
            tk = T.get_thread_binding(1)
            part = T.alloc_local((1,), T.float32)
            total = T.alloc_local((1,), T.float32)
            if reducer == "sum":
                part[0] = 0.0
            else:
                part[0] = -T.infinity(T.float32)
            for k in T.serial(tile_k):
                prod = W[bn * block_N + tn, tk * tile_k + k].astype(T.float32) * x[tk * tile_k + k].astype(T.float32)
                if reducer == "sum":
                    part[0] += prod
                else:
                    part[0] = T.max(part[0], prod)
            if reducer == "sum":
                red = T.comm_reducer(lambda a, b: a + b, [T.cast(0, T.float32)])
            else:
                red = T.comm_reducer(lambda a, b: T.max(a, b), [-T.infinity(T.float32)])
            with T.attr(red, "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), part[0], True, total[0], tk, dtype="handle"))
            if tk == 0:
                y[bn * block_N + tn] = total[0]
    return main


@pytest.mark.parametrize("block_N,reduce_threads", [(2, 32), (4, 8), (1, 64)])
def test_allreduce_sum_over_thread_y(device, block_N, reduce_threads):
    N, K = 32, 256
    kernel = tilelang.compile(splitk_gemv(N, K, block_N, reduce_threads))
    W = torch.randn(N, K, device=device).half()
    x = torch.randn(K, device=device).half()
    y = torch.zeros(N, device=device)
    kernel(W, x, y)
    torch.testing.assert_close(y, (W.double() @ x.double()).float(), rtol=1e-4, atol=1e-3)


def test_allreduce_max(device):
    N, K = 16, 128
    kernel = tilelang.compile(splitk_gemv(N, K, 4, 16, reducer="max"))
    W = torch.randn(N, K, device=device).half()
    x = torch.randn(K, device=device).half()
    y = torch.zeros(N, device=device)
    kernel(W, x, y)
    torch.testing.assert_close(y, (W.float() * x.float()[None, :]).amax(dim=1))


@tilelang.jit
def lane_stats(X, warps: int = 4):
    """Per warp of threadIdx.x: the sum and the max of 32 values at once (a two-value reducer), every
    lane getting both results; reduced inside a loop over rows (barriers under a uniform loop)."""
    R = T.const("R")
    X: T.Tensor((R, warps * 32), T.float32)
    S = T.empty((R, warps * 32), T.float32)
    Mx = T.empty((R, warps * 32), T.float32)
    with T.Kernel(1, threads=warps * 32):
        tx = T.get_thread_binding(0)
        s = T.alloc_local((1,), T.float32)
        m = T.alloc_local((1,), T.float32)
        for r in T.serial(R):
            with T.attr(T.comm_reducer(lambda a0, a1, b0, b1: (a0 + b0, T.max(a1, b1)),
                                       [T.float32(0), -T.infinity(T.float32)]),
                        "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
                T.evaluate(T.tvm_thread_allreduce(T.uint32(2), X[r, tx], X[r, tx], True, s[0], m[0], tx,
                                                  dtype="handle"))
            S[r, tx] = s[0]
            Mx[r, tx] = m[0]
    return S, Mx


def test_allreduce_two_values_in_loop(device):
    X = torch.randn(5, 128, device=device)
    S, Mx = lane_stats(X)
    torch.testing.assert_close(S, X.sum(dim=1, keepdim=True).expand(5, 128), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(Mx, X.amax(dim=1, keepdim=True).expand(5, 128))


def test_allreduce_errors():
    with pytest.raises(tilelang.language.tir_compat._SyntaxError, match="reduce_scope"):
        @T.prim_func
        def no_scope(A: T.Tensor((32,), T.float32)):
            with T.Kernel(1, threads=32):
                tx = T.get_thread_binding()
                r = T.alloc_local((1,), T.float32)
                T.evaluate(T.tvm_thread_allreduce(T.uint32(1), A[tx], True, r[0], tx, dtype="handle"))
    with pytest.raises(NotImplementedError, match="reduce_scope"):
        T.attr(None, "pragma_unroll", 1)
    with pytest.raises(NotImplementedError, match="T.cast"):
        T.reinterpret(T.float32(1), dtype="int32")


# ---- apply_simplify ----------------------------------------------------------------------------------

def maybe_bias(with_bias):
    @T.prim_func
    def main(A: T.Tensor((64,), T.float32), Bias: T.Tensor((64,), T.float32), C: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            if with_bias:
                C[tx] = A[tx] * 2.0 + Bias[tx]
            else:
                C[tx] = A[tx] * 2.0
    return main


def test_apply_simplify_drops_unused_tensor_parameters(device):
    f = apply_simplify(maybe_bias(False))
    assert [p.name for p in f.params] == ["A", "C"]
    assert [p.name for p in apply_simplify(maybe_bias(True)).params] == ["A", "Bias", "C"]
    A = torch.randn(64, device=device)
    C = torch.zeros(64, device=device)
    tilelang.compile(f)(A, C)
    torch.testing.assert_close(C, A * 2.0)


# ---- tilelang.layout's 8x8 tensor-core fragments ---------------------------------------------------

def _owners(frag, shape):
    return {(frag.map_forward_thread([i, j]), frag.map_forward_index([i, j])[0])
            for i in range(shape[0]) for j in range(shape[1])}


def test_gemm_fragment_8x8_layouts():
    from tilelang.layout import Fragment, make_gemm_fragment_8x8, make_gemm_fragment_8x8_transposed
    plain, trans = make_gemm_fragment_8x8(), make_gemm_fragment_8x8_transposed()
    assert isinstance(trans, Fragment) and trans.shape == [8, 8]
    # 32 threads x 2 registers, each (thread, register) holding one element
    assert _owners(plain, (8, 8)) == {(t, r) for t in range(32) for r in range(2)}
    for i in range(8):
        for j in range(8):
            assert trans.map_forward_thread([i, j]) == plain.map_forward_thread([j, i])
            assert trans.map_forward_index([i, j]) == plain.map_forward_index([j, i])
    # repeated in registers (TileLang's .repeat([2, 1], repeat_on_thread=False)): 16x8, 4 registers each
    rep = trans.repeat([2, 1], repeat_on_thread=False)
    assert rep.shape == [16, 8]
    assert _owners(rep, (16, 8)) == {(t, r) for t in range(32) for r in range(4)}
    assert rep.map_forward_thread([9, 3]) == trans.map_forward_thread([1, 3])
    # repeated on threads: 64 threads x 2 registers
    assert _owners(trans.repeat([2, 1], repeat_on_thread=True), (16, 8)) == {(t, r) for t in range(64) for r in range(2)}
