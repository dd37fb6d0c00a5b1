"""T.im2col (a 2-d convolution as im2col + T.gemm, the way TileLang's convolution example writes it)
and T.tvm_warp_shuffle (exchanges between lanes of a warp, in loops, the way TileLang's Hadamard
example uses it); values against torch / numpy references on random inputs."""
import numpy as np
import pytest
import torch

import tilelang
import tilelang.language as T


# ---- T.im2col --------------------------------------------------------------------------------------

@tilelang.jit
def conv2d_nhwc(data, weight, S, D, P, block_M: int = 64, block_N: int = 64, block_K: int = 32, stages: int = 2):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    data: T.Tensor((N, H, W, C), T.float16)
    weight: T.Tensor((K, K, C, F), T.float16)
    out = T.empty((N, OH, OW, F), T.float32)
    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=128) as (bx, by):
        patch = T.alloc_shared((block_M, block_K), T.float16)
        w_tile = T.alloc_shared((block_K, block_N), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        w_flat = T.Tensor((K * K * C, F), T.float16, weight.data)
        out_flat = T.Tensor((N * OH * OW, F), T.float32, out.data)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=stages):
            T.im2col(data, patch, by, k, K, S, D, P)
            T.copy(w_flat[k * block_K, bx * block_N], w_tile)
            T.gemm(patch, w_tile, acc)
        T.copy(acc, out_flat[by * block_M, bx * block_N])
    return out


@pytest.mark.parametrize("shape", [
    (2, 16, 9, 7, 64, 3, 1, 1, 1),    # tiles divide the channels and filters
    (3, 12, 11, 10, 20, 3, 2, 2, 2),  # stride, dilation, padding 2; partial tiles everywhere
    (1, 8, 6, 6, 8, 1, 1, 1, 0),      # 1x1 kernel
])
def test_im2col_conv2d(device, shape):
    N, C, H, W, F, K, S, D, P = shape
    a = torch.randn(N, H, W, C, device=device).half()
    w = torch.randn(K, K, C, F, device=device).half()
    out = conv2d_nhwc(a, w, S, D, P)
    ref = torch.conv2d(a.permute(0, 3, 1, 2).double(), w.permute(3, 2, 0, 1).double(), stride=S, padding=P,
                       dilation=D).permute(0, 2, 3, 1)
    assert out.shape == ref.shape
    torch.testing.assert_close(out.double(), ref, rtol=1e-3, atol=1e-3)


@tilelang.jit
def im2col_tiles(data, K, S, D, P, block_M: int = 32, block_K: int = 16):
    """The im2col matrix itself, tile by tile, zero-padded to whole tiles."""
    N, C, H, W = T.const("N, C, H, W")
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    data: T.Tensor((N, H, W, C), T.float32)
    rows = T.ceildiv(N * OH * OW, block_M) * block_M
    cols = T.ceildiv(K * K * C, block_K) * block_K
    out = T.empty((rows, cols), T.float32)
    with T.Kernel(cols // block_K, rows // block_M, threads=64) as (bx, by):
        tile = T.alloc_shared((block_M, block_K), T.float32)
        T.im2col(data, tile, by, bx, K, S, D, P)
        T.copy(tile, out[by * block_M, bx * block_K])
    return out


def test_im2col_matrix(device):
    N, C, H, W, K, S, D, P = 2, 5, 7, 6, 3, 2, 1, 1
    a = torch.randn(N, H, W, C, device=device)
    out = im2col_tiles(a, K, S, D, P)
    # torch's unfold orders a column (c, kh, kw); TileLang's im2col orders it (kh, kw, c)
    u = torch.nn.functional.unfold(a.permute(0, 3, 1, 2), K, dilation=D, padding=P, stride=S)
    u = u.reshape(N, C, K, K, -1).permute(0, 4, 2, 3, 1).reshape(-1, K * K * C)
    torch.testing.assert_close(out[:u.shape[0], :u.shape[1]], u)
    assert out[u.shape[0]:].abs().max() == 0 and out[:, u.shape[1]:].abs().max() == 0


@tilelang.jit
def view_tile_copy(X, block_K: int = 32, block_N: int = 64):
    """T.copy from a reshaped view (T.Tensor(shape, dtype, X.data)) whose tile runs past the view's
    rows and columns: the part outside the view reads 0 (not the storage's next row)."""
    K, C, F = T.const("K, C, F")
    X: T.Tensor((K, K, C, F), T.float16)
    out = T.empty((T.ceildiv(K * K * C, block_K) * block_K, block_N), T.float16)
    with T.Kernel(T.ceildiv(K * K * C, block_K), threads=128) as bx:
        s = T.alloc_shared((block_K, block_N), T.float16)
        flat = T.Tensor((K * K * C, F), T.float16, X.data)
        T.copy(flat[bx * block_K, 0], s)
        T.copy(s, out[bx * block_K, 0])
    return out


def test_view_copy_out_of_bounds(device):
    x = torch.randn(3, 3, 8, 20, device=device).half()
    out = view_tile_copy(x)
    ref = torch.zeros_like(out)
    ref[:72, :20] = x.reshape(72, 20)
    torch.testing.assert_close(out, ref, rtol=0, atol=0)


# ---- T.tvm_warp_shuffle ------------------------------------------------------------------------------

@T.macro
def butterfly_sum(vals, tmp, n, rounds):
    """After `rounds` xor-butterfly steps, every lane holds the sum over its group of 2**rounds lanes."""
    tx = T.get_thread_binding(0)
    for r in T.serial(rounds):
        partner = tx ^ (1 << r)  # a per-thread value around the barriers of the shuffle
        for j in T.serial(n):
            tmp[j] = T.tvm_warp_shuffle(0xFFFFFFFF, vals[j], partner % 32, 32, 32)
            vals[j] = vals[j] + tmp[j]


@tilelang.jit
def warp_sums(X, n: int = 4, rounds: int = 5, threads: int = 64):
    B = T.const("B")
    X: T.Tensor((B, threads, n), T.float32)
    Y = T.empty((B, threads, n), T.float32)
    R = T.empty((B, threads), T.float32)
    with T.Kernel(B, threads=threads) as bx:
        tx = T.get_thread_binding(0)
        vals = T.alloc_local((n,), T.float32)
        tmp = T.alloc_local((n,), T.float32)
        for j in T.serial(n):
            vals[j] = X[bx, tx, j]
        butterfly_sum(vals, tmp, n, rounds)
        for j in T.serial(n):
            Y[bx, tx, j] = vals[j]
        # rotate inside groups of 8 lanes: lane l gets lane (l // 8) * 8 + (l + 3) % 8
        R[bx, tx] = T.tvm_warp_shuffle(0xFFFFFFFF, X[bx, tx, 0], (tx % 32) + 3, 8, 32)
    return Y, R


@pytest.mark.parametrize("rounds", [5, 3])
def test_warp_shuffle_butterfly(device, rounds):
    B, threads, n = 3, 64, 4
    X = torch.randn(B, threads, n, device=device)
    Y, R = warp_sums(X, rounds=rounds)
    g = 2 ** rounds
    ref = X.double().reshape(B, threads // g, g, n).sum(2, keepdim=True).expand(B, threads // g, g, n)
    torch.testing.assert_close(Y.double(), ref.reshape(B, threads, n), rtol=1e-5, atol=1e-5)
    lane = np.arange(threads)
    src = (lane // 8) * 8 + (lane % 32 + 3) % 8
    torch.testing.assert_close(R, X[:, src, 0])


def test_warp_shuffle_errors():
    with pytest.raises(ValueError, match="width"):
        @T.prim_func
        def bad(A: T.Tensor((32,), T.float32)):
            with T.Kernel(1, threads=32):
                tx = T.get_thread_binding()
                A[tx] = T.tvm_warp_shuffle(0xFFFFFFFF, A[tx], 0, 3, 32)
