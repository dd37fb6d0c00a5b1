"""T.atomic_addx2 / T.atomic_addx4 with return_prev=True, as TileLang's tests write them
(`Prev[0:2] = T.atomic_addx2(Dst[0:2], Val[0:2], return_prev=True)`, also with let-bound slices
and element origins): every lane is added once and its old value returned, checked on random
inputs against float64 references, with many blocks adding into the same elements."""
import pytest

import tilelang
import tilelang.language as T
from lang_util import DEVICE, close, randn, torch


@tilelang.jit
def addxn_prev(n, blocks, dtype):
    add = T.atomic_addx2 if n == 2 else T.atomic_addx4

    @T.prim_func
    def main(Dst: T.Tensor((n,), dtype), Val: T.Tensor((blocks, n), dtype), Prev: T.Tensor((blocks, n), dtype)):
        with T.Kernel(blocks, threads=1) as b:
            dst = Dst[0:n]
            Prev[b, 0:n] = add(dst, Val[b, 0:n], return_prev=True)

    return main


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_addxn_return_prev(n, dtype):
    blocks = 8
    tdt = getattr(torch, dtype)
    # small integers: every order of the adds gives the same exact sums in float16 too
    dst0 = torch.randint(-8, 8, (n,), generator=torch.Generator().manual_seed(n)).to(tdt).to(DEVICE)
    val = torch.randint(-8, 8, (blocks, n), generator=torch.Generator().manual_seed(n + 1)).to(tdt).to(DEVICE)
    dst, prev = dst0.clone(), torch.zeros(blocks, n, dtype=tdt, device=DEVICE)
    addxn_prev(n, blocks, dtype)(dst, val, prev)
    close(dst, dst0.double() + val.double().sum(0), rtol=0, atol=0)
    # Each block's old value plus its value is the value the next add saw (or the final one): per
    # lane, {prev + val} with dst0 and {prev} with the final value are the same multiset, in any
    # order the blocks ran.
    final = dst0.double() + val.double().sum(0)
    for lane in range(n):
        after = sorted((prev[:, lane].double() + val[:, lane].double()).tolist() + [dst0[lane].item()])
        before = sorted(prev[:, lane].double().tolist() + [final[lane].item()])
        assert after == before, (lane, after, before)


def test_addx2_return_prev_element_origin():
    @tilelang.jit
    def k():
        @T.prim_func
        def main(Dst: T.Tensor((3, 4), T.float32), Val: T.Tensor((2,), T.float32), Prev: T.Tensor((2,), T.float32)):
            with T.Kernel(1, threads=1):
                Prev[0:2] = T.atomic_addx2(Dst[1, 2], Val[0:2], return_prev=True)
        return main

    dst0, val = randn(3, 4, seed=3), randn(2, seed=4)
    dst, prev = dst0.clone(), torch.zeros(2, device=DEVICE)
    k()(dst, val, prev)
    ref = dst0.double().clone()
    ref[1, 2:4] += val.double()
    close(dst, ref)
    close(prev, dst0[1, 2:4])


def test_return_prev_needs_n_lanes():
    with pytest.raises(ValueError, match="2 consecutive elements"):
        @T.prim_func
        def main(Dst: T.Tensor((4,), T.float32), Val: T.Tensor((4,), T.float32), Prev: T.Tensor((4,), T.float32)):
            with T.Kernel(1, threads=1):
                Prev[0:4] = T.atomic_addx2(Dst[0:4], Val[0:4], return_prev=True)
