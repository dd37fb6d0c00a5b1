"""Layer norm forward + backward and top-k, written like TileLang's examples/norm/layernorm.py and
examples/topk (issue 12, item 6): the backward accumulates dgamma/dbeta with
`T.atomic_add(DGamma[j], dgamma_acc[j], memory_order="relaxed")` inside T.Parallel (a LayoutError
on cuda: the element value was taken for a tile); top-k reduces an int32 fragment of column indices.
"""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, torch


@tilelang.jit(out_idx=[-3, -2, -1])
def layernorm_fwd(N, D, eps=1e-5, blk_m=1, threads=128, dtype="bfloat16"):
    accum = "float"

    @T.prim_func
    def main(X: T.Tensor((N, D), dtype), gamma: T.Tensor((D,), dtype), beta: T.Tensor((D,), dtype),
             Y: T.Tensor((N, D), dtype), Mean: T.Tensor((N,), accum), Rstd: T.Tensor((N,), accum)):
        with T.Kernel(T.ceildiv(N, blk_m), threads=threads) as bx:
            x_s = T.alloc_shared((blk_m, D), dtype)
            g_s = T.alloc_shared((D,), dtype)
            b_s = T.alloc_shared((D,), dtype)
            x = T.alloc_fragment((blk_m, D), accum)
            x2 = T.alloc_fragment((blk_m, D), accum)
            s1 = T.alloc_fragment((blk_m,), accum)
            s2 = T.alloc_fragment((blk_m,), accum)
            mean = T.alloc_fragment((blk_m,), accum)
            rstd = T.alloc_fragment((blk_m,), accum)
            T.copy(X[bx * blk_m, 0], x_s)
            T.copy(gamma, g_s)
            T.copy(beta, b_s)
            for i, j in T.Parallel(blk_m, D):
                x[i, j] = T.Cast(accum, x_s[i, j])
            for i, j in T.Parallel(blk_m, D):
                x2[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(x, s1, dim=1)
            T.reduce_sum(x2, s2, dim=1)
            inv_d = T.float32(1.0) / T.Cast(accum, D)
            for i in T.Parallel(blk_m):
                mean[i] = s1[i] * inv_d
                rstd[i] = T.rsqrt(s2[i] * inv_d - mean[i] * mean[i] + T.Cast(accum, eps))
                Mean[bx * blk_m + i] = mean[i]
                Rstd[bx * blk_m + i] = rstd[i]
            for i, j in T.Parallel(blk_m, D):
                norm = (x[i, j] - mean[i]) * rstd[i]
                x_s[i, j] = T.Cast(dtype, norm * T.Cast(accum, g_s[j]) + T.Cast(accum, b_s[j]))
            T.copy(x_s, Y[bx * blk_m, 0])

    return main


@tilelang.jit(out_idx=[-3])
def layernorm_bwd(N, D, blk_m=8, threads=128, dtype="bfloat16"):
    accum = "float"

    @T.prim_func
    def main(DY: T.Tensor((N, D), dtype), X: T.Tensor((N, D), dtype), gamma: T.Tensor((D,), dtype),
             Mean: T.Tensor((N,), accum), Rstd: T.Tensor((N,), accum), DX: T.Tensor((N, D), dtype),
             DGamma: T.Tensor((D,), accum), DBeta: T.Tensor((D,), accum)):
        with T.Kernel(T.ceildiv(N, blk_m), threads=threads) as bx:
            dy_s = T.alloc_shared((1, D), dtype)
            x_s = T.alloc_shared((1, D), dtype)
            g_s = T.alloc_shared((D,), dtype)
            dx_s = T.alloc_shared((1, D), dtype)
            x_hat = T.alloc_fragment((1, D), accum)
            dx_hat = T.alloc_fragment((1, D), accum)
            prod = T.alloc_fragment((1, D), accum)
            sum_dx_hat = T.alloc_fragment((1,), accum)
            sum_prod = T.alloc_fragment((1,), accum)
            dgamma_acc = T.alloc_fragment((D,), accum)
            dbeta_acc = T.alloc_fragment((D,), accum)
            T.copy(gamma, g_s)
            T.clear(dgamma_acc)
            T.clear(dbeta_acc)
            inv_d = T.float32(1.0) / T.Cast(accum, D)
            for k in T.serial(blk_m):
                row = bx * blk_m + k
                T.copy(DY[row, 0], dy_s)
                T.copy(X[row, 0], x_s)
                m_v = Mean[row]
                r_v = Rstd[row]
                for i, j in T.Parallel(1, D):
                    xv = T.Cast(accum, x_s[i, j])
                    x_hat[i, j] = (xv - m_v) * r_v
                    dx_hat[i, j] = T.Cast(accum, dy_s[i, j]) * T.Cast(accum, g_s[j])
                    prod[i, j] = dx_hat[i, j] * x_hat[i, j]
                T.reduce_sum(dx_hat, sum_dx_hat, dim=1)
                T.reduce_sum(prod, sum_prod, dim=1)
                for i, j in T.Parallel(1, D):
                    c1 = sum_prod[0] * inv_d
                    c2 = sum_dx_hat[0] * inv_d
                    dx_s[i, j] = T.Cast(dtype, r_v * (dx_hat[i, j] - c2 - x_hat[i, j] * c1))
                    dy_v = T.Cast(accum, dy_s[i, j])
                    dgamma_acc[j] += dy_v * x_hat[i, j]
                    dbeta_acc[j] += dy_v
                T.copy(dx_s, DX[row, 0])
            for j in T.Parallel(D):
                T.atomic_add(DGamma[j], dgamma_acc[j], memory_order="relaxed")
                T.atomic_add(DBeta[j], dbeta_acc[j], memory_order="relaxed")

    return main


def test_layernorm_forward_backward():
    N, D, eps = 64, 256, 1e-5
    g = torch.Generator().manual_seed(11)
    x = torch.randn(N, D, generator=g).bfloat16().to(DEVICE)
    gamma = torch.randn(D, generator=g).bfloat16().to(DEVICE)
    beta = torch.randn(D, generator=g).bfloat16().to(DEVICE)
    dy = torch.randn(N, D, generator=g).bfloat16().to(DEVICE)
    y, mean, rstd = layernorm_fwd(N, D, eps)(x, gamma, beta)
    dgamma = torch.zeros(D, device=DEVICE)
    dbeta = torch.zeros(D, device=DEVICE)
    dx = layernorm_bwd(N, D)(dy, x, gamma, mean, rstd, dgamma, dbeta)

    xr, gr, br = (t.double().requires_grad_() for t in (x, gamma, beta))
    ref = torch.nn.functional.layer_norm(xr, (D,), gr, br, eps)
    ref.backward(dy.double())
    close(y, ref.detach(), rtol=2e-2, atol=2e-2)
    close(mean, x.double().mean(1), rtol=1e-4, atol=1e-4)
    close(dx, xr.grad, rtol=2e-2, atol=5e-2)
    close(dgamma, gr.grad, rtol=1e-3, atol=1e-2)
    close(dbeta, br.grad, rtol=1e-3, atol=1e-2)


@tilelang.jit(out_idx=[1, 2])
def topk(M, N, k, blk_m=16, threads=128):
    @T.prim_func
    def main(logits: T.Tensor((M, N), T.float32), gates: T.Tensor((M, k), T.float32),
             indices: T.Tensor((M, k), T.int32)):
        with T.Kernel(T.ceildiv(M, blk_m), threads=threads) as bx:
            frag = T.alloc_fragment((blk_m, N), T.float32)
            max_val = T.alloc_fragment((blk_m,), T.float32)
            idx = T.alloc_fragment((blk_m, N), T.int32)
            max_idx = T.alloc_fragment((blk_m,), T.int32)
            T.copy(logits[bx * blk_m, 0], frag)
            for t in T.serial(k):
                T.fill(idx, -1)
                T.reduce_max(frag, max_val, dim=1, clear=True)
                for i, j in T.Parallel(blk_m, N):
                    idx[i, j] = T.if_then_else(max_val[i] == frag[i, j], j, idx[i, j])
                T.reduce_max(idx, max_idx, dim=1, clear=True)
                for i, j in T.Parallel(blk_m, N):
                    frag[i, j] = T.if_then_else(max_val[i] == frag[i, j], -10000.0, frag[i, j])
                for i in T.Parallel(blk_m):
                    gates[bx * blk_m + i, t] = max_val[i]
                    indices[bx * blk_m + i, t] = max_idx[i]

    return main


def test_topk():
    M, N, k = 64, 64, 4
    # distinct values: the reference order is then unambiguous
    logits = torch.randperm(M * N, generator=torch.Generator().manual_seed(5)).float().reshape(M, N).to(DEVICE)
    gates, idx = topk(M, N, k)(logits)
    ref_g, ref_i = logits.topk(k, dim=1)
    close(gates, ref_g)
    assert torch.equal(idx.cpu(), ref_i.to(torch.int32).cpu())
