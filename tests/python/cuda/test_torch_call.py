"""The user's call path on cuda with torch tensors: `tilelang.compile(f, target="cuda")(a, b, c)`.

torch tensors are read through their attributes (src/bindings/torch_tensor.cc), not DLPack; these
tests pin what that path must get right: values, dtypes, outputs allocated by torch on the inputs'
device, torch's current stream, and the argument errors (dtype, device, strides) naming the
parameter. GPU tier (markers gpu + torch)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cuda_kernels as K
import tilelang

pytestmark = [pytest.mark.gpu, pytest.mark.torch]

M, N = 64, 256


@pytest.fixture(scope="module")
def torch():
    import torch as t
    return t


@pytest.fixture(scope="module")
def add_fp16():
    return tilelang.compile(K.vector_add(M, N, block_M=32, block_N=128), target="cuda")


@pytest.fixture(scope="module")
def add_fp16_out():
    return tilelang.compile(K.vector_add(M, N, block_M=32, block_N=128), out_idx=[2], target="cuda")


def inputs(torch, dtype=None, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dtype = dtype or torch.float16
    a = torch.randn(M, N, device="cuda", generator=g).to(dtype)
    b = torch.randn(M, N, device="cuda", generator=g).to(dtype)
    return a, b


def test_values_into_a_preallocated_output(torch, add_fp16):
    a, b = inputs(torch)
    c = torch.full_like(a, float("nan"))
    assert add_fp16(a, b, c) is None
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)


def test_out_idx_output_is_a_torch_tensor_on_the_inputs_device(torch, add_fp16_out):
    a, b = inputs(torch, seed=1)
    c = add_fp16_out(a, b)
    assert isinstance(c, torch.Tensor)
    assert c.dtype == torch.float16 and c.device == a.device and tuple(c.shape) == (M, N)
    assert torch.equal(c, a + b)


def test_bfloat16_tensors(torch):
    k = tilelang.compile(K.vector_add(M, N, block_M=32, block_N=128, dtype="bfloat16"), out_idx=[2], target="cuda")
    a, b = inputs(torch, torch.bfloat16, seed=2)
    c = k(a, b)
    assert c.dtype == torch.bfloat16
    assert torch.equal(c, a + b)


def test_tensors_that_require_grad_are_read(torch, add_fp16_out):
    a, b = inputs(torch, seed=3)
    a.requires_grad_(True)
    c = add_fp16_out(a, b)
    assert torch.equal(c, (a + b).detach())


def test_sliced_view_with_contiguous_rows_is_accepted(torch, add_fp16_out):
    # A slice of whole rows is contiguous with a data pointer past the start of the storage.
    g = torch.Generator(device="cuda").manual_seed(4)
    big = torch.randn(3 * M, N, device="cuda", generator=g).half()
    a = big[M:2 * M]
    b = big[2 * M:]
    assert a.data_ptr() != big.data_ptr()
    assert torch.equal(add_fp16_out(a, b), a + b)


def test_launch_uses_torchs_current_stream(torch, add_fp16):
    a, b = inputs(torch, seed=5)
    c = torch.zeros_like(a)
    s = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(s):
        torch.cuda._sleep(50_000_000)  # keeps stream s busy for tens of milliseconds
        a.fill_(2.0)                     # ordered after the sleep, on s
        add_fp16(a, b, c)                # must read the 2.0s: it runs on s, after fill_
    s.synchronize()
    assert torch.equal(c, 2.0 + b)


def test_numpy_arrays_are_staged_through_the_device(add_fp16_out):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((M, N)).astype(np.float16)
    b = rng.standard_normal((M, N)).astype(np.float16)
    c = add_fp16_out(a, b)
    assert isinstance(c, np.ndarray)
    np.testing.assert_array_equal(c, a + b)


def test_wrong_dtype_names_the_parameter(torch, add_fp16):
    a, b = inputs(torch, seed=7)
    c = torch.empty_like(a)
    with pytest.raises(tilelang.ArgumentError, match=r"parameter 'B'.*expects dtype float16, got float32"):
        add_fp16(a, b.float(), c)


def test_unsupported_torch_dtype_names_it(torch, add_fp16):
    a, b = inputs(torch, seed=8)
    with pytest.raises(tilelang.ArgumentError, match=r"parameter 'C'.*complex64"):
        add_fp16(a, b, torch.empty(M, N, dtype=torch.complex64, device="cuda"))


def test_cpu_tensor_for_a_cuda_kernel_names_the_parameter(torch, add_fp16):
    a, b = inputs(torch, seed=9)
    with pytest.raises(tilelang.ArgumentError, match=r"parameter 'A'.*needs cuda device memory"):
        add_fp16(a.cpu(), b, torch.empty_like(b))


def test_transposed_view_is_refused_with_its_strides(torch):
    k = tilelang.compile(K.vector_add(N, N, block_M=32, block_N=128), target="cuda")
    g = torch.Generator(device="cuda").manual_seed(10)
    a = torch.randn(N, N, device="cuda", generator=g).half()
    c = torch.zeros_like(a)
    with pytest.raises(tilelang.ArgumentError, match=r"parameter 'B'.*must be contiguous.*strides are \[1, 256\]"):
        k(a, a.t(), c)
    assert torch.count_nonzero(c) == 0  # nothing was launched
    k(a, a.t().contiguous(), c)  # the process and the kernel still work
    assert torch.equal(c, a + a.t())


def test_attribute_path_without_the_exchange_api():
    """The path for torch builds without the DLPack C exchange API (and for Tensor subclasses)."""
    script = textwrap.dedent(f"""
        import torch, tilelang
        import cuda_kernels as K
        k = tilelang.compile(K.vector_add({M}, {N}, block_M=32, block_N=128), out_idx=[2], target="cuda")
        a = torch.randn({M}, {N}, device="cuda").half()
        b = torch.nn.Parameter(torch.randn({M}, {N}, device="cuda").half(), requires_grad=False)  # a subclass
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            torch.cuda._sleep(50_000_000)
            a.fill_(3.0)
            c = k(a, b)
        s.synchronize()
        assert torch.equal(c, 3.0 + b.detach()), "wrong values"
        try:
            k(a, b.float())
        except tilelang.ArgumentError as e:
            assert "parameter 'B'" in str(e), e
        else:
            raise AssertionError("no ArgumentError for a float32 tensor")
        print("ok")
    """)
    env = dict(os.environ, TILELANG_TORCH_NO_EXCHANGE_API="1")
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.abspath(K.__file__)), env.get("PYTHONPATH", "")])
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
