"""Profiling compiled kernels: timing and checking against a reference program."""
import functools
import types

import numpy as np

from ..jit.adapter import is_torch_tensor, to_numpy
from .bench import do_bench
from .supply import TensorSupplyType, make_tensor, make_torch_tensor

__all__ = ["Profiler", "TensorSupplyType", "do_bench"]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def compare_tensors(actual, expected, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.01, name="output"):
    """Raises AssertionError when more than max_mismatched_ratio of the elements differ by more
    than atol + rtol * |expected| (NaN matches NaN, inf matches the same inf)."""
    a = np.asarray(to_numpy(actual))
    b = np.asarray(to_numpy(expected))
    if a.shape != b.shape:
        if b.size == a.size and b.ndim <= 1 < a.ndim or a.size == b.size == 1:
            b = b.reshape(a.shape)
        else:
            raise AssertionError(f"{name}: kernel result has shape {a.shape} but the reference has shape {b.shape}")
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    with np.errstate(invalid="ignore"):
        close = (a64 == b64) | (np.abs(a64 - b64) <= atol + rtol * np.abs(b64)) | (np.isnan(a64) & np.isnan(b64))
    bad = ~close
    n_bad = int(bad.sum())
    total = max(bad.size, 1)
    if n_bad / total > max_mismatched_ratio:
        with np.errstate(invalid="ignore"):
            err = np.where(bad, np.abs(a64 - b64), -1.0)
        worst = np.unravel_index(int(np.nanargmax(np.where(np.isnan(err), np.inf, err))), a.shape) if a.ndim else ()
        raise AssertionError(
            f"{name}: {n_bad} of {total} elements ({n_bad / total:.2%}) differ beyond atol={atol}, rtol={rtol} "
            f"(allowed: {max_mismatched_ratio:.2%}); worst at index {tuple(int(i) for i in worst)}: "
            f"got {a64[worst]!r}, expected {b64[worst]!r}")


def _module_framework(mod):
    name = getattr(mod, "__name__", "")
    if name == "torch" or name.startswith("torch."):
        return "torch"
    if name == "numpy" or name.startswith("numpy."):
        return "numpy"
    return None


def reference_framework(fn):
    """"torch" when the reference program is written for torch tensors (it uses the torch module or
    torch functions and not numpy, or is a torch.nn.Module), "numpy" when it uses numpy, None when
    its code does not tell (e.g. `lambda a, b: a @ b`, which works with either)."""
    seen, uses = set(), set()

    def visit(obj, depth):
        if depth > 4 or id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, types.ModuleType):
            kind = _module_framework(obj)
            if kind:
                uses.add(kind)
            return
        owner = getattr(obj, "__module__", None) or type(obj).__module__
        if isinstance(owner, str) and (owner == "torch" or owner.startswith("torch.")):
            uses.add("torch")  # a torch function or a torch.nn.Module
            return
        if isinstance(obj, functools.partial):
            visit(obj.func, depth + 1)
            return
        if isinstance(obj, types.MethodType):
            visit(obj.__func__, depth + 1)
            return
        code = getattr(obj, "__code__", None)
        if code is None:
            call = getattr(type(obj), "__call__", None)
            if call is not None and not isinstance(obj, type) and hasattr(call, "__code__"):
                visit(call, depth + 1)
            return
        env = dict(getattr(obj, "__globals__", {}) or {})
        for name, cell in zip(code.co_freevars, getattr(obj, "__closure__", None) or ()):
            try:
                env[name] = cell.cell_contents
            except ValueError:  # an empty cell
                pass
        stack = [code]
        while stack:
            c = stack.pop()
            for name in c.co_names + c.co_freevars:
                if name in env:
                    v = env[name]
                    if isinstance(v, types.ModuleType) or callable(v):
                        visit(v, depth + 1)
            stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))

    visit(fn, 0)
    if uses == {"torch"}:
        return "torch"
    if "numpy" in uses:
        return "numpy"
    return None


def _to_torch(array):
    import torch
    from ..jit.adapter import torch_dtype
    a = np.array(array, copy=True)
    if a.dtype.kind == "V" or a.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"):
        return torch.from_numpy(a.astype(np.float32)).to(torch_dtype(_tilelang_dtype_name(a.dtype)))
    return torch.from_numpy(a)


def _tilelang_dtype_name(dt):
    return {"float8_e4m3fn": "float8_e4m3", "float8_e5m2": "float8_e5m2"}.get(dt.name, dt.name)


def reference_inputs(reference_program, args):
    """Copies of the kernel's arguments for `reference_program`, in the framework it is written for:
    numpy arrays become torch tensors (on the cpu) for a torch reference, torch tensors become numpy
    arrays (bfloat16/float8 as float32) for a numpy reference; a reference whose code does not tell gets the kernel's kind."""
    framework = reference_framework(reference_program)
    wants_torch = framework == "torch" or (framework is None and any(is_torch_tensor(a) for a in args))
    out = []
    for a in args:
        if is_torch_tensor(a):
            out.append(a.clone() if wants_torch else np.array(to_numpy(a), copy=True))
        elif isinstance(a, np.ndarray):
            out.append(_to_torch(a) if wants_torch else np.array(a, copy=True))
        else:
            out.append(a)  # scalars
    return out


def _torch_available():
    global _TORCH
    if _TORCH is None:
        import importlib.util
        _TORCH = importlib.util.find_spec("torch") is not None
    return _TORCH


_TORCH = None


class Profiler:
    """Runs a compiled kernel on generated inputs: timing (do_bench) and correctness (assert_allclose).

    Generated inputs are torch tensors when torch is installed (as in TileLang: reference programs
    are usually written with torch), on the kernel's device; numpy arrays otherwise. For cuda they
    are drawn by torch on the device (supply.make_torch_tensor), elsewhere by numpy."""

    def __init__(self, kernel, tensor_supply_type=TensorSupplyType.Auto):
        self.kernel = kernel
        self.supply_type = tensor_supply_type
        self._inputs = None

    @property
    def target(self):
        return self.kernel.target

    @property
    def params(self):
        return self.kernel.params

    @property
    def result_idx(self):
        return list(self.kernel.out_idx)

    @property
    def func(self):
        return self.kernel

    def __call__(self, *args, **kwargs):
        return self.kernel(*args, **kwargs)

    def _input_params(self):
        return [p for p in self.kernel.params if p.role == "input"]

    def _get_params(self, with_output=False):
        """The KernelParams the caller passes (with_output: the outputs as well)."""
        return [p for p in self.kernel.params if p.role == "input" or (with_output and p.role == "output")]

    def _supply(self, p):
        if not p.is_tensor:
            raise ValueError(f"the profiler cannot invent a value for scalar parameter '{p.name}'; "
                             "pass the arguments yourself (run_once(*args), do_bench(input_tensors=...))")
        if p.is_dynamic():
            raise ValueError(f"parameter '{p.name}' has dynamic shape {list(p.shape)}; pass the arguments "
                             "yourself (run_once(*args), do_bench(input_tensors=...))")
        if self.target.kind == "cuda" and _torch_available():
            # Drawn on the device (milliseconds; numpy on the host takes seconds for large inputs).
            try:
                return make_torch_tensor(p.shape, p.dtype, self.supply_type, device="cuda")
            except (ValueError, TypeError, RuntimeError, NotImplementedError):
                pass  # a dtype torch has no type (or no kernel) for: numpy's values, converted
        return self._device_tensor(make_tensor(p.shape, p.dtype, self.supply_type), p.dtype)

    def _get_inputs(self, with_output=False, refresh=False, dynamic_symbolic_constraints=None):
        """Generated arguments for the kernel's inputs (cached; refresh=True draws new ones;
        with_output=True adds fresh output tensors, for calls that pass every parameter)."""
        if self._inputs is None or refresh:
            self._inputs = [self._supply(p) for p in self._input_params()]
        if not with_output:
            return self._inputs
        ins = iter(self._inputs)
        return [next(ins) if p.role == "input" else self._supply(p) for p in self._get_params(with_output=True)]

    def _device_tensor(self, array, dtype_name):
        """Inputs live where the target runs: torch tensors when torch is installed (cuda tensors
        for cuda), else host numpy arrays."""
        cuda = self.target.kind == "cuda"
        if not cuda and not _torch_available():
            return array
        import torch
        from ..jit.adapter import torch_dtype
        if array.dtype.kind == "V":  # ml_dtypes bfloat16 / float8: through float32
            t = torch.from_numpy(array.astype(np.float32)).to(torch_dtype(dtype_name))
        else:
            t = torch.from_numpy(np.ascontiguousarray(array))
        return t.cuda() if cuda else t

    def run_once(self, *args):
        """Runs the kernel once (on generated inputs when none are given) and returns its outputs;
        `run_once(func)` runs `func` on the generated inputs instead (TileLang's form)."""
        if len(args) == 1 and callable(args[0]) and not hasattr(args[0], "shape"):
            return args[0](*self._get_inputs())
        return self.kernel(*(args or self._get_inputs()))

    def do_bench(self, func=None, warmup=25, rep=100, n_warmup=0, n_repeat=0, input_tensors=None, backend="event",
                 quantiles=None, return_mode="median", dynamic_symbolic_constraints=None, device=None,
                 early_stop_baseline=None):
        """Time in ms of one call of the kernel (or of `func`) on generated inputs. cuda: CUDA events on
        the stream the kernel launches on (torch's current stream), the L2 cache flushed before each
        repetition (`backend` "event", "cupti" or "cudagraph", see tilelang.profiler.do_bench; "auto"
        is "event"); cpu: the wall clock; ascend: the simulator's modeled time of the kernel.
        `dynamic_symbolic_constraints` and `early_stop_baseline` are accepted for TileLang
        compatibility and have no effect."""
        _check_backend(backend)
        if backend == "auto":
            backend = "event"
        args = tuple(input_tensors) if input_tensors is not None else tuple(self._get_inputs())
        fn = func if func is not None else self.kernel
        if func is None and self.target.kind == "ascend":
            self.kernel(*args)
            info = self.kernel.info()
            if "sim_time_ms" not in info:
                raise NotImplementedError("not implemented: simulated timing on target ascend "
                                          "(the simulator reports no 'sim_time_ms')")
            return float(info["sim_time_ms"])
        if device is None:
            device = "cuda" if self.target.kind == "cuda" else "cpu"
        return do_bench(lambda: fn(*args), warmup=warmup, rep=rep, _n_warmup=n_warmup, _n_repeat=n_repeat,
                        quantiles=quantiles, backend=backend, return_mode=return_mode, device=device)

    def _outputs(self, reference_program, input_tensors):
        args = list(input_tensors) if input_tensors is not None else list(self._get_inputs())
        if not self.kernel.out_idx:
            raise ValueError("assert_allclose compares the kernel's returned outputs; compile the kernel with "
                             "out_idx=... naming its output parameters (or return T.empty outputs)")
        # The reference sees copies, so an in-place reference cannot disturb the kernel's inputs.
        # In the framework the reference is written for (see reference_inputs).
        ref_args = reference_inputs(reference_program, args)
        outs = _as_tuple(self.kernel(*args))
        refs = _as_tuple(reference_program(*ref_args))
        return outs, refs

    def assert_allclose(self, reference_program, atol=1e-2, rtol=1e-2, max_mismatched_ratio=0.01,
                        input_tensors=None):
        """Runs the kernel and `reference_program` on the same generated inputs and compares every
        output; raises AssertionError naming the output, the mismatch ratio and the worst element.
        (TileLang's positional order `(ref, input_tensors, atol, ...)` is accepted too.)"""
        if isinstance(atol, (list, tuple)):
            input_tensors, atol = atol, 1e-2
        outs, refs = self._outputs(reference_program, input_tensors)
        pairs = [(o, r, i) for o, r, i in zip(outs, refs, self.kernel.out_idx)]
        if len(refs) != len(outs):
            raise AssertionError(f"the kernel returns {len(outs)} output(s) but the reference program returns "
                                 f"{len(refs)}")
        for out, ref, i in pairs:
            if out is None or ref is None:
                continue  # TileLang: a None reference output is not compared
            compare_tensors(out, ref, atol, rtol, max_mismatched_ratio,
                            name=f"output '{self.kernel.params[i].name}'")

    def manual_assert_close(self, reference_program, input_tensors=None, manual_check_prog=None):
        """Runs both programs and hands (kernel outputs, reference outputs) to manual_check_prog."""
        outs, refs = self._outputs(reference_program, input_tensors)
        manual_check_prog(list(outs), list(refs))

    def assert_consistent(self, repeat=10):
        """Runs the kernel `repeat` times on the same inputs and checks the outputs never change."""
        args = self._get_inputs()
        first = [np.array(to_numpy(o), copy=True) for o in _as_tuple(self.kernel(*args))]
        for _ in range(repeat):
            for a, b in zip(first, _as_tuple(self.kernel(*args))):
                if not np.array_equal(a, np.asarray(to_numpy(b)), equal_nan=a.dtype.kind in "fc"):
                    raise AssertionError("the kernel's result is not consistent across runs (a race?)")


_BACKENDS = ("event", "cupti", "cudagraph", "auto")


def _check_backend(backend):
    if backend not in _BACKENDS:
        raise ValueError(f"do_bench backend must be one of {', '.join(map(repr, _BACKENDS))}; got {backend!r}")
