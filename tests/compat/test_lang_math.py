"""Scalar math and constants as TileLang's examples use them: T.if_then_else, T.clamp, T.infinity,
T.max_value / T.min_value, T.cast / T.Cast, T.exp2 / T.log2 / T.rsqrt, T.ceildiv / T.floordiv /
T.floormod, bit operations (T.shift_left, ..., Python's << >> & | ^ ~), the dtype aliases
(T.float, T.int, T.long, ...) and T.index_to_coordinates."""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit(out_idx=[-1])
def float_ops(M, N, lo, hi, dtype=T.float):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), Out: T.Tensor((M, N, 6), dtype)):
        with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
            for i, j in T.Parallel(16, N):
                x = A[bx * 16 + i, j]
                Out[bx * 16 + i, j, 0] = T.clamp(x, min_val=lo, max_val=hi)  # TileLang's keyword names
                Out[bx * 16 + i, j, 1] = T.if_then_else(x > 0, x, -T.infinity(dtype))
                Out[bx * 16 + i, j, 2] = T.exp2(x) + T.log2(T.abs(x) + 1.0)
                Out[bx * 16 + i, j, 3] = T.rsqrt(x * x + 1.0)
                Out[bx * 16 + i, j, 4] = T.Cast(dtype, T.cast(x * 100.0, T.int32))
                Out[bx * 16 + i, j, 5] = T.max(T.min(x, T.max_value(dtype)), T.min_value(dtype))

    return main


def test_float_math():
    M, N = 32, 24
    A = randn(M, N, seed=1)
    out = float_ops(M, N, -0.5, 0.75)(A)
    a = A.double()
    close(out[..., 0], a.clamp(-0.5, 0.75))
    close(out[..., 1], torch.where(a > 0, a, torch.tensor(-float("inf"), dtype=torch.float64, device=a.device)))
    close(out[..., 2], torch.exp2(a) + torch.log2(a.abs() + 1), rtol=1e-5, atol=1e-5)
    close(out[..., 3], torch.rsqrt(a * a + 1), rtol=1e-5, atol=1e-6)
    close(out[..., 4], torch.trunc(A * 100).double())
    close(out[..., 5], a)


@tilelang.jit(out_idx=[-1])
def int_ops(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.int), B: T.Tensor((N,), "int32"), Out: T.Tensor((N, 10), T.long)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                a = A[bx * block + i]
                b = B[bx * block + i]
                o = bx * block + i
                Out[o, 0] = T.shift_left(a, 3)
                Out[o, 1] = T.shift_right(a, 2)
                Out[o, 2] = T.bitwise_and(a, b)
                Out[o, 3] = T.bitwise_or(a, b) ^ 5
                Out[o, 4] = T.bitwise_xor(a, b)
                Out[o, 5] = T.bitwise_not(a)
                Out[o, 6] = T.floordiv(a, 7)
                Out[o, 7] = T.floormod(a, 7)
                Out[o, 8] = T.ceildiv(T.abs(a), 7)
                Out[o, 9] = T.truncmod(a, 7)

    return main


def test_integer_and_bit_ops():
    N = 256
    g = torch.Generator().manual_seed(4)
    A = torch.randint(-10000, 10000, (N,), generator=g, dtype=torch.int32).to(DEVICE)
    B = torch.randint(0, 1 << 20, (N,), generator=g, dtype=torch.int32).to(DEVICE)
    out = int_ops(N)(A, B).cpu()
    a, b = A.cpu().long(), B.cpu().long()
    assert out.dtype == torch.int64
    ref = torch.stack([
        a << 3, a >> 2, a & b, (a | b) ^ 5, a ^ b, ~a, torch.div(a, 7, rounding_mode="floor"),
        torch.remainder(a, 7), -torch.div(-a.abs(), 7, rounding_mode="floor"), torch.fmod(a, 7),
    ], dim=1)
    assert torch.equal(out, ref)


@tilelang.jit(out_idx=[-1])
def unflatten(M, N, K):
    @T.prim_func
    def main(A: T.Tensor((M, N, K), T.float32), Out: T.Tensor((M * N * K,), T.float32)):
        with T.Kernel(1, threads=128) as _:
            for idx in T.serial(M * N * K):
                i, j, k = T.index_to_coordinates(idx, (M, N, K))
                Out[idx] = A[i, j, k]

    return main


def test_index_to_coordinates_and_dtype_aliases():
    A = randn(3, 5, 7, seed=5)
    close(unflatten(3, 5, 7)(A), A.reshape(-1))
    assert (T.float, T.int, T.uint, T.long, T.short, T.half, T.double) == (
        "float32", "int32", "uint32", "int64", "int16", "float16", "float64")
    assert T.tfloat32 == "float32"  # tf32 math is float32 storage here (docs/COMPATIBILITY.md)
    assert T.dtype(torch.float16) == "float16" and T.dtype("float") == "float32"  # block_causal_attention


@tilelang.jit(out_idx=[-1])
def blocksparse_rows(M, K, block_M=16, block_K=8):
    # TileLang's test_tilelang_language_any_of: skip the k-blocks whose mask row is all false.
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float32), Mask: T.Tensor((M // block_M, K // block_K, 4), "bool"),
             Out: T.Tensor((M, 2), T.float32)):
        with T.Kernel(M // block_M, threads=128) as by:
            acc = T.alloc_fragment((block_M,), T.float32)
            cnt = T.alloc_fragment((block_M,), T.float32)
            T.clear(acc)
            T.clear(cnt)
            for k in T.serial(K // block_K):
                if T.any_of(Mask[by, k, :]):
                    for i in T.Parallel(block_M):
                        for j in T.serial(block_K):
                            acc[i] += A[by * block_M + i, k * block_K + j]
                if T.all_of(Mask[by, k, 0:2]):
                    for i in T.Parallel(block_M):
                        cnt[i] += 1.0
            for i in T.Parallel(block_M):
                Out[by * block_M + i, 0] = acc[i]
                Out[by * block_M + i, 1] = cnt[i]

    return main


def test_any_of_all_of():
    M, K, bm, bk = 64, 64, 16, 8
    A = randn(M, K, seed=6)
    g = torch.Generator().manual_seed(7)
    mask = (torch.rand(M // bm, K // bk, 4, generator=g) > 0.6).to(DEVICE)
    out = blocksparse_rows(M, K, bm, bk)(A, mask)
    keep = mask.any(-1).cpu()
    both = mask[..., 0:2].all(-1).cpu()
    a = A.double().cpu().reshape(M // bm, bm, K // bk, bk).sum(-1)  # [mb, bm, kb]
    ref = (a * keep[:, None, :]).sum(-1).reshape(-1)
    close(out[:, 0], ref, rtol=1e-5, atol=1e-4)
    close(out[:, 1], both.sum(-1).double().repeat_interleave(bm))


@tilelang.jit(out_idx=[-1])
def dot_rows_dp4a(M, K):
    # TileLang's SIMT int8 GEMM: T.dp4a(A_local[i, k * 4], B_local[j, k * 4], C_local[...]).
    @T.prim_func
    def main(A: T.Tensor((M, K), T.int8), B: T.Tensor((M, K), T.int8), C: T.Tensor((M,), T.int32)):
        with T.Kernel(M, threads=32) as bx:
            A_local = T.alloc_local((1, K), T.int8)
            B_local = T.alloc_local((1, K), T.int8)
            C_local = T.alloc_local((1,), T.int32)
            C_local[0] = 0
            for k in T.serial(K):
                A_local[0, k] = A[bx, k]
                B_local[0, k] = B[bx, k]
            for k in T.serial(K // 4):
                T.dp4a(A_local[0, k * 4], B_local[0, k * 4], C_local[0])
            C[bx] = C_local[0]

    return main


def test_dp4a_sums_four_int8_products_in_int32():
    M, K = 8, 64
    g = torch.Generator().manual_seed(3)
    A = torch.randint(-128, 128, (M, K), dtype=torch.int8, generator=g).to(DEVICE)
    B = torch.randint(-128, 128, (M, K), dtype=torch.int8, generator=g).to(DEVICE)
    C = dot_rows_dp4a(M, K)(A, B)
    ref = (A.long() * B.long()).sum(dim=1)
    assert torch.equal(C.long().cpu(), ref.cpu())


def test_dtype_objects_know_their_torch_dtype_and_size():
    assert T.float16.as_torch() is torch.float16 and T.bfloat16.as_torch() is torch.bfloat16
    assert T.int8.as_torch() is torch.int8 and T.float32.as_torch() is torch.float32
    assert (T.float16.bits, T.float16.bytes, T.float64.bits, T.int8.bytes) == (16, 2, 64, 1)
