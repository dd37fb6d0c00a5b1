"""The ldmatrix addressing of include/tl/cuda/gemm.h (load_a / load_b, transcribed here) delivers
exactly the mma.sync operand fragments of src/layout/mma_layout (the tables the hardware tests
check), for plain and swizzled shared tiles, transposed or not, and odd n-tile counts. Runs without
a GPU; keep it in sync with gemm.h."""
import pytest
from tilelang import _core
cuda = _core.cuda

def tile_offset(row, col, cols, swz, eb=2):
    if not swz: return row*cols + col
    chunk = 16//eb
    if (cols*eb) % 128 == 0: return row*cols + (col ^ ((row & 7)*chunk))
    flat = row*cols+col; phase = 128//eb
    return flat ^ (((flat//phase) & 7)*chunk)

def ldmatrix(num, trans, addr_of_lane, mem):
    # addr_of_lane(lane) -> element offset of the row start; returns regs[lane][m] = (e0, e1) element ids
    regs = [[None]*num for _ in range(32)]
    for m in range(num):
        rows = [addr_of_lane(8*m + r) for r in range(8)]
        for t in range(32):
            if not trans:
                r, c = t//4, 2*(t%4)
                regs[t][m] = (mem[rows[r] + c], mem[rows[r] + c + 1])
            else:
                c, r = t//4, 2*(t%4)
                regs[t][m] = (mem[rows[r] + c], mem[rows[r+1] + c])
    return regs

def check(M, K, trans, swz):
    # A logical [16, 16] tile at m0=16, k0=16 within a tile of M x K (stored [K][M] when trans)
    rows, cols = (K, M) if trans else (M, K)
    mem = {}
    ident = {}
    for r in range(rows):
        for c in range(cols):
            m_, k_ = (c, r) if trans else (r, c)
            mem[tile_offset(r, c, cols, swz)] = (m_, k_)
    m0, k0 = 16, 16
    if not trans:
        addr = lambda l: tile_offset(m0 + (l & 15), k0 + (l >> 4)*8, cols, swz)
    else:
        addr = lambda l: tile_offset(k0 + 8*((l>>3)>>1) + (l & 7), m0 + 8*((l>>3)&1), cols, swz)
    regs = ldmatrix(4, trans, addr, mem)
    table = cuda.mma_fragment_table("A", "float16")
    for lane, reg, r, c in table:
        got = regs[lane][reg//2][reg % 2]
        assert got == (m0 + r, k0 + c), (trans, swz, lane, reg, got, (m0+r, k0+c))

def check_b(K, N, trans, swz, nt_count):
    rows, cols = (N, K) if trans else (K, N)
    mem = {}
    for r in range(rows):
        for c in range(cols):
            k_, n_ = (c, r) if trans else (r, c)
            mem[tile_offset(r, c, cols, swz)] = (k_, n_)
    k0, n0 = 16, 8
    b = {}
    nt = 0
    while nt + 1 < nt_count:
        n = n0 + 8*nt
        if trans:
            addr = lambda l: tile_offset(n + (l & 7) + 8*(l >> 4), k0 + 8*((l >> 3) & 1), cols, swz)
        else:
            addr = lambda l: tile_offset(k0 + (l & 7) + 8*((l>>3) & 1), n + 8*((l>>3) >> 1), cols, swz)
        regs = ldmatrix(4, not trans, addr, mem)
        for t in range(32):
            b[(nt, t)] = [regs[t][0], regs[t][1]]; b[(nt+1, t)] = [regs[t][2], regs[t][3]]
        nt += 2
    if nt_count % 2:
        n = n0 + 8*(nt_count-1)
        def addr(l):
            l = l & 15
            return tile_offset(n + (l & 7), k0 + 8*(l >> 3), cols, swz) if trans else tile_offset(k0 + (l & 7) + 8*(l >> 3), n, cols, swz)
        regs = ldmatrix(2, not trans, addr, mem)
        for t in range(32): b[(nt_count-1, t)] = [regs[t][0], regs[t][1]]
    table = cuda.mma_fragment_table("B", "float16")
    for j in range(nt_count):
        for lane, reg, r, c in table:
            got = b[(j, lane)][reg//2][reg % 2]
            assert got == (k0 + r, n0 + 8*j + c), (trans, swz, j, lane, reg, got, (k0+r, n0+8*j+c))


@pytest.mark.parametrize("trans", [False, True])
@pytest.mark.parametrize("swz", [False, True])
def test_ldmatrix_addressing(trans, swz):
    for (M, K) in [(64, 64), (128, 32), (64, 128)]:
        check(M, K, trans, swz)
    for (K, N) in [(64, 64), (32, 128), (64, 32)]:
        for ntc in (1, 2, 3, 4):
            if N >= 8 + 8 * ntc:
                check_b(K, N, trans, swz, ntc)
