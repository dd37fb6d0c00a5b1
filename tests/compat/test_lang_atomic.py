"""Atomics as TileLang's examples and tests write them: T.atomic_add (element and tile forms, an
element of a fragment as the value inside T.Parallel), T.atomic_max / T.atomic_min,
T.atomic_addx2 / T.atomic_addx4, T.atomic_load / T.atomic_store, return_prev."""
import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit
def scatter_add(M, N, block_M=32, op="add"):
    # Every row of A is combined into Out[row % 4] by a different block: contention across blocks.
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), Out: T.Tensor((4, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a = T.alloc_fragment((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], a)
            for i, j in T.Parallel(block_M, N):
                if op == "add":
                    T.atomic_add(Out[(bx * block_M + i) % 4, j], a[i, j], memory_order="relaxed")
                elif op == "max":
                    T.atomic_max(Out[(bx * block_M + i) % 4, j], a[i, j])
                else:
                    T.atomic_min(Out[(bx * block_M + i) % 4, j], a[i, j], memory_order="relaxed")

    return main


def _fold(A, op):
    rows = [A[r::4] for r in range(4)]
    if op == "add":
        return torch.stack([r.sum(0) for r in rows])
    if op == "max":
        return torch.stack([r.amax(0) for r in rows])
    return torch.stack([r.amin(0) for r in rows])


def test_element_atomics_with_fragment_values():
    M, N = 256, 64
    A = randn(M, N, seed=1)
    for op, init in (("add", 0.0), ("max", -1e30), ("min", 1e30)):
        out = torch.full((4, N), init, device=DEVICE)
        scatter_add(M, N, op=op)(A, out)
        close(out, _fold(A.double(), op), rtol=1e-5, atol=1e-4)


@tilelang.jit
def tile_atomics(M, N, block_M=64, dtype="float32"):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), S: T.Tensor((block_M, N), dtype), Mx: T.Tensor((block_M, N), dtype),
             Mn: T.Tensor((block_M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            a_shared = T.alloc_shared((block_M, N), dtype)
            T.copy(A[bx * block_M, 0], a_shared)
            T.atomic_add(S, a_shared)                      # whole buffers
            T.atomic_max(Mx[0, 0], a_shared)               # an element origin: extents from the value
            T.atomic_min(Mn[0:block_M, :], a_shared)       # a region
            T.atomic_add(S[0:2, 0:2], 1.0)                 # a scalar into every element of a region

    return main


def test_tile_atomics():
    M, N, bm = 256, 32, 64
    A = randn(M, N, seed=2)
    S = torch.zeros(bm, N, device=DEVICE)
    Mx = torch.full((bm, N), -1e30, device=DEVICE)
    Mn = torch.full((bm, N), 1e30, device=DEVICE)
    tile_atomics(M, N, bm)(A, S, Mx, Mn)
    blocks = A.double().reshape(M // bm, bm, N)
    ref = blocks.sum(0)
    ref[0:2, 0:2] += M // bm
    close(S, ref, rtol=1e-5, atol=1e-4)
    close(Mx, blocks.amax(0))
    close(Mn, blocks.amin(0))


@tilelang.jit
def integer_max(N, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "int32"), Out: T.Tensor((1,), "int32"), Old: T.Tensor((N,), "int32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                Old[bx * block + i] = T.atomic_max(Out[0], A[bx * block + i], return_prev=True)

    return main


def test_integer_atomic_max_returns_previous_values():
    N = 512
    A = torch.randint(-1000, 1000, (N,), dtype=torch.int32, device=DEVICE)
    out = torch.full((1,), -2**31, dtype=torch.int32, device=DEVICE)
    old = torch.empty(N, dtype=torch.int32, device=DEVICE)
    integer_max(N)(A, out, old)
    assert int(out[0]) == int(A.max())
    # Each old value is the maximum of some subset of the earlier updates: never above the result,
    # and exactly one update saw the initial value.
    assert int(old.max()) <= int(A.max())
    assert int((old == -2**31).sum()) == 1


@tilelang.jit
def addx(M, N, width):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(M, threads=32) as bx:
            for j in T.serial(N // width):
                if width == 2:
                    T.atomic_addx2(B[bx, j * 2], A[bx, j * 2])
                else:
                    T.atomic_addx4(B[bx, j * 4], A[bx, j * 4])

    return main


def test_atomic_addx2_addx4():
    M, N = 8, 64
    for width in (2, 4):
        A = randn(M, N, seed=width)
        B = randn(M, N, seed=10 + width)
        ref = A.double() + B.double()
        addx(M, N, width)(A, B)
        close(B, ref)


@tilelang.jit
def flag_handoff(N):
    # Block 0 publishes data then a flag with release order; every block reads the flag with
    # acquire order. (The blocks run in any order, so readers only check consistency.)
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Flag: T.Tensor((1,), "int32"), Seen: T.Tensor((N,), "float32"),
             Data: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=1) as bx:
            for i in T.serial(N):
                Data[i] = A[i] * 2.0
            T.atomic_store(Data[0], A[0] * 2.0, memory_order="relaxed")
            T.atomic_store(Flag[0], 1, memory_order="release")
            if T.atomic_load(Flag[0], memory_order="acquire") == 1:
                for i in T.serial(N):
                    Seen[i] = T.atomic_load(Data[i], memory_order="relaxed") + 1.0

    return main


def test_atomic_load_store():
    N = 16
    A = randn(N, seed=3)
    flag = torch.zeros(1, dtype=torch.int32, device=DEVICE)
    seen = torch.zeros(N, device=DEVICE)
    data = torch.zeros(N, device=DEVICE)
    flag_handoff(N)(A, flag, seen, data)
    assert int(flag[0]) == 1
    close(data, A * 2)
    close(seen, A * 2 + 1)


@tilelang.jit
def ragged_element_atomics(M, N, bm=32, bn=32):
    # TileLang's stream-K GEMM adds its partial tiles with T.atomic_add(C[m, n], acc[i, j]) in
    # T.Parallel; here the tiles overhang the tensor (100 x 70 in 32 x 32 tiles).
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"), Old: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            a = T.alloc_fragment((bm, bn), "float32")
            T.copy(A[by * bm, bx * bn], a)
            for i, j in T.Parallel(bm, bn):
                T.atomic_add(C[by * bm + i, bx * bn + j], a[i, j])
            for i, j in T.Parallel(bm, bn):
                Old[by * bm + i, bx * bn + j] = T.atomic_max(C[by * bm + i, bx * bn + j], 0.0, return_prev=True)

    return main


def test_element_atomics_on_ragged_tiles():
    M, N = 100, 70
    A = randn(M, N, seed=9)
    C = torch.ones(M, N, device=DEVICE)
    old = torch.zeros(M, N, device=DEVICE)
    ragged_element_atomics(M, N)(A, C, old)
    close(old, A + 1)
    close(C, (A + 1).clamp(min=0))
