"""Profiler, do_bench and TensorSupplyType."""
import time

import numpy as np
import pytest

import tilelang
from tilelang.profiler import do_bench
from tilelang.jit.adapter import to_numpy
from tilelang.profiler.supply import make_tensor
from rt_kernels import gemm, gemm_ref, sum_and_diff

TST = tilelang.TensorSupplyType


def test_supply_type_members():
    assert [m.name for m in TST] == ["Integer", "Uniform", "Normal", "Randn", "Zero", "One", "Auto"]


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16"])
def test_supplies_fill_as_documented(dtype):
    shape = (64, 64)
    as_f = lambda x: np.asarray(x).astype(np.float64)  # noqa: E731
    assert (as_f(make_tensor(shape, dtype, TST.Zero)) == 0).all()
    assert (as_f(make_tensor(shape, dtype, TST.One)) == 1).all()
    ints = as_f(make_tensor(shape, dtype, TST.Integer))
    assert set(np.unique(ints)) <= {-2, -1, 0, 1, 2} and len(np.unique(ints)) == 5
    uni = as_f(make_tensor(shape, dtype, TST.Uniform))
    assert uni.min() >= -1 and uni.max() <= 1 and uni.std() > 0.4
    normal = as_f(make_tensor(shape, dtype, TST.Normal))
    assert abs(normal.mean() + 1) < 0.1 and abs(normal.std() - 1) < 0.1
    randn = as_f(make_tensor(shape, dtype, TST.Randn))
    assert abs(randn.mean()) < 0.1 and abs(randn.std() - 1) < 0.1
    assert make_tensor(shape, dtype, TST.Auto).std() > 0.5  # random, not constant


def test_supply_for_integer_types():
    u = make_tensor((1000,), "uint8", TST.Auto)
    assert u.dtype == np.uint8 and set(np.unique(u)) == {0, 1, 2}
    b = make_tensor((1000,), "bool", TST.Auto)
    assert b.dtype == np.bool_ and 300 < b.sum() < 700
    i = make_tensor((1000,), "int32", TST.Auto)
    assert set(np.unique(i)) == {-2, -1, 0, 1, 2}


@pytest.mark.parametrize("dtype", ["float16", "float32", "bfloat16", "float64"])
def test_torch_supplies_fill_as_numpy_ones(dtype):
    """make_torch_tensor (what the profiler uses on cuda, drawn by torch on the device; checked here
    on the cpu device) fills with make_tensor's distributions, in the requested torch dtype."""
    torch = pytest.importorskip("torch")
    from tilelang.jit.adapter import torch_dtype
    from tilelang.profiler.supply import make_torch_tensor
    shape = (128, 96)
    f = lambda s: make_torch_tensor(shape, dtype, s, device="cpu")  # noqa: E731
    as_f = lambda t: t.to(torch.float64).numpy()  # noqa: E731
    for s in TST:
        t = f(s)
        assert t.dtype == torch_dtype(dtype) and tuple(t.shape) == shape and t.device.type == "cpu"
    assert (as_f(f(TST.Zero)) == 0).all() and (as_f(f(TST.One)) == 1).all()
    ints = as_f(f(TST.Integer))
    assert set(np.unique(ints)) == {-2, -1, 0, 1, 2}
    uni = as_f(f(TST.Uniform))
    assert uni.min() >= -1 and uni.max() <= 1 and abs(uni.std() - 1 / np.sqrt(3)) < 0.05
    for s, mean in ((TST.Normal, -1.0), (TST.Auto, -1.0), (TST.Randn, 0.0)):
        v = as_f(f(s))
        assert abs(v.mean() - mean) < 0.05 and abs(v.std() - 1) < 0.05, (s, v.mean(), v.std())
    a, b = f(TST.Normal), f(TST.Normal)
    assert not torch.equal(a, b)  # one seeded stream: successive draws differ


def test_torch_supplies_for_integer_types():
    torch = pytest.importorskip("torch")
    from tilelang.profiler.supply import make_torch_tensor
    u = make_torch_tensor((1000,), "uint8", TST.Auto, device="cpu")
    assert u.dtype == torch.uint8 and set(u.unique().tolist()) == {0, 1, 2}
    b = make_torch_tensor((1000,), "bool", TST.Auto, device="cpu")
    assert b.dtype == torch.bool and 300 < int(b.sum()) < 700
    i = make_torch_tensor((1000,), "int32", TST.Auto, device="cpu")
    assert i.dtype == torch.int32 and set(i.unique().tolist()) == {-2, -1, 0, 1, 2}
    assert (make_torch_tensor((100,), "int8", TST.Normal, device="cpu") == 1).all()  # as make_tensor
    if hasattr(torch, "float8_e4m3fn"):
        f8 = make_torch_tensor((1000,), "float8_e4m3", TST.Auto, device="cpu").to(torch.float32)
        assert f8.min() >= -128 and f8.max() <= 128 and len(f8.unique()) > 50
    with pytest.raises(ValueError, match="no dtype"):
        make_torch_tensor((4,), "int4", TST.Auto, device="cpu")


def test_profiler_assert_allclose_and_bench():
    k = tilelang.compile(gemm(128, 128, 128, 64, 64, 32), out_idx=[-1])
    profiler = k.get_profiler(tensor_supply_type=TST.Normal)
    profiler.assert_allclose(gemm_ref, atol=5e-2, rtol=2e-2)
    with pytest.raises(AssertionError, match=r"output 'C': \d+ of 16384 elements .* differ"):
        profiler.assert_allclose(lambda a, b: gemm_ref(a, b) + 1.0)
    latency = profiler.do_bench(warmup=5, rep=20)
    assert 0 < latency < 1000
    # The reference can be timed on the same inputs.
    assert profiler.do_bench(func=gemm_ref, warmup=5, rep=20) > 0
    outs = profiler.run_once()
    a, b = (to_numpy(x) for x in profiler._get_inputs())
    np.testing.assert_allclose(to_numpy(outs).astype(np.float32), gemm_ref(a, b).astype(np.float32), atol=5e-2,
                               rtol=2e-2)


def test_assert_allclose_tolerates_a_few_mismatches():
    k = tilelang.compile(sum_and_diff(1024), out_idx=[2, 3])
    p = k.get_profiler()

    def ref(a, b):
        s, d = a + b, a - b
        s[:5] += 10  # 5 of 1024 elements wrong: 0.5%
        return s, d

    p.assert_allclose(ref, max_mismatched_ratio=0.01)
    with pytest.raises(AssertionError, match="output 'S'"):
        p.assert_allclose(ref, max_mismatched_ratio=0.001)


def test_do_bench_measures_time():
    def sleepy():
        time.sleep(0.002)

    t = do_bench(sleepy, warmup=5, rep=30)
    assert 1.9 < t < 20
    assert do_bench(sleepy, _n_warmup=1, _n_repeat=3, return_mode="min") >= 1.9
    with pytest.raises(ValueError, match="return_mode"):
        do_bench(sleepy, return_mode="p99")
    q = do_bench(sleepy, _n_repeat=5, quantiles=[0.5, 0.9])
    assert len(q) == 2 and q[0] <= q[1]


def test_profiler_needs_inputs_for_dynamic_shapes():
    from rt_kernels import rows_dynamic
    k = tilelang.compile(rows_dynamic(), out_idx=[1])
    p = k.get_profiler()
    with pytest.raises(ValueError, match="dynamic shape"):
        p.do_bench()
    a = np.ones((8, 64), np.float32)
    assert p.do_bench(input_tensors=[a], warmup=1, rep=5) > 0
    np.testing.assert_array_equal(p.run_once(a), 2 * a)
