"""@tilelang.jit and tilelang.compile.

`@tilelang.jit` accepts both of TileLang's styles (docs/COMPATIBILITY.md):

* lazy: the decorated function is a builder whose arguments are compile-time values and which
  returns a @T.prim_func; calling it returns the compiled kernel (memoized per argument tuple);
* eager: the tensor parameters are declared in the body (`A: T.Tensor((M, N), dtype)`), sizes come
  from `T.const`, outputs from `T.empty`; calling it with tensors compiles once per distinct
  binding and runs the kernel, returning its outputs; `f.compile(M=..., block=...)` compiles
  without running.
"""
import concurrent.futures
import functools
import inspect
import os
import sys

from .. import _core
from . import adapter  # noqa: F401  (registers the tensor allocator)
from .kernel import JITKernel, Kernel, KernelParam, _ir_of
from .pass_config import PassConfigKey, normalize_pass_configs

__all__ = ["jit", "compile", "par_compile", "JITImpl", "JITFunction", "JITKernel", "Kernel", "KernelParam",
           "PassConfigKey"]


def compile(prim_func, out_idx=None, target="auto", pass_configs=None, verbose=False, execution_backend="auto",
            compile_flags=None, workspace_idx=None, target_host=None):
    """Compiles a @T.prim_func for `target` and returns a Kernel. Compiled kernels are cached on
    disk ($TILELANG_CACHE_DIR) and in the process. A function that returns T.empty outputs
    brings its own out_idx (giving out_idx as well is a ValueError). `target_host` is accepted
    for TileLang compatibility and ignored (host code is built with the kernel)."""
    func_out = getattr(prim_func, "out_idx", None)
    if func_out is not None:
        if out_idx is not None:
            raise ValueError("out_idx conflict: the function returns T.empty outputs, which set out_idx "
                             f"({func_out}); do not pass out_idx={out_idx!r} as well")
        out_idx = func_out
    if target is None:
        target = os.environ.get("TILELANG_DEFAULT_TARGET", "auto")
    return JITKernel(prim_func, out_idx=out_idx, target=target, pass_configs=pass_configs, verbose=bool(verbose),
                     execution_backend=execution_backend or "auto", compile_flags=compile_flags,
                     workspace_idx=workspace_idx)


def par_compile(funcs, out_idx=None, execution_backend="auto", target="auto", target_host=None, verbose=False,
                pass_configs=None, compile_flags=None, num_workers=None, ignore_error=False):
    """Compiles several @T.prim_funcs in parallel threads (the system compiler runs in parallel
    processes); returns the kernels in order (None for a failure when ignore_error)."""
    funcs = list(funcs)
    if not funcs:
        return []
    workers = num_workers or max(1, min(len(funcs), os.cpu_count() or 1))

    def one(f):
        return compile(f, out_idx=out_idx, target=target, pass_configs=pass_configs, verbose=verbose,
                       execution_backend=execution_backend, compile_flags=compile_flags)

    results = [None] * len(funcs)
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(one, f): i for i, f in enumerate(funcs)}
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            try:
                results[i] = fut.result()
            except Exception as e:  # noqa: BLE001
                if not ignore_error:
                    raise
                print(f"[tilelang.par_compile] function {i} failed: {type(e).__name__}: {e}", file=sys.stderr)
    return results


def _freeze(value):
    """A hashable stand-in for a builder argument (lists, dicts, dtypes...)."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), _freeze(v)) for k, v in value.items())))
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(v) for v in value)))
    try:
        hash(value)
        return (type(value).__name__, value)
    except TypeError:
        return ("repr", type(value).__name__, repr(value))


_MISSING = object()


def _dim_of(tensor, kind, dim):
    """Dimension (or element stride) `dim` of a torch / numpy / DLPack-like tensor argument."""
    if kind == "shape":
        return int(tensor.shape[dim])
    stride = getattr(tensor, "stride", None)
    if callable(stride):
        return int(stride(dim))
    return int(tensor.strides[dim]) // int(tensor.itemsize)


def _copy_names(wrapper, func):
    """__name__, __qualname__, __doc__, __module__ of `func` on `wrapper`, but no __wrapped__: pytest
    would collect a module-level `@tilelang.jit def test_kernel(A)` as a test function through it."""
    functools.update_wrapper(wrapper, func, updated=())
    wrapper.__dict__.pop("__wrapped__", None)


class _CallPlan:
    """How a call form of an eager function finds its kernel: where its run-time arguments are
    (a position or a keyword each), which tensor dimensions bind the T.const sizes, and the kernel
    of each binding seen."""

    __slots__ = ("picks", "dims", "kernels")

    def __init__(self, picks, dims):
        self.picks = picks
        self.dims = dims
        self.kernels = {}


class JITImpl:
    """A function decorated with @tilelang.jit (either style; `mode` says which)."""

    def __init__(self, func, out_idx=None, target="auto", target_host=None, execution_backend="auto", verbose=False,
                 pass_configs=None, debug_root_path=None, compile_flags=None, workspace_idx=None):
        from ..language.eager import eager_spec  # noqa: PLC0415
        self.func = func
        self.builder = func
        self.out_idx = out_idx
        self.workspace_idx = workspace_idx
        self.target = target
        self.target_host = target_host
        self.execution_backend = execution_backend
        self.verbose = verbose
        self.pass_configs = pass_configs
        self.debug_root_path = debug_root_path
        self.compile_flags = compile_flags
        try:
            self.signature = inspect.signature(func)
        except (TypeError, ValueError):
            self.signature = None
        self._eager = eager_spec(func)
        self.mode = "eager" if self._eager is not None else "lazy"
        if self._eager is not None:
            if out_idx is not None:
                raise ValueError(f"@tilelang.jit: out_idx is only for builders returning a @T.prim_func; the eager "
                                 f"function '{func.__name__}' declares its outputs with T.empty(...) and returns them")
            spec = self._eager
            self._compile_params = [n for n in spec.param_names if n not in spec.runtime_index]
            self._defaults = {p.name: p.default for p in spec.signature.parameters.values()
                              if p.default is not inspect.Parameter.empty}
            self._name_set = frozenset(spec.param_names)
            self._runtime_positions = frozenset(i for i, n in enumerate(spec.param_names) if n in spec.runtime_index)
        self._memo = {}       # lazy: argument key -> Kernel
        self._templates = {}  # eager: compile-time key -> ProbeResult
        self._kernels = {}    # eager: (compile-time key, constant values) -> Kernel
        self._fast = {}       # eager: call form (tensors left out) -> _CallPlan
        _copy_names(self, func)

    @property
    def __jit_impl__(self):
        """TileLang-Ascend's handle from the decorated function to its JIT object (`f.__jit_impl__.target`)."""
        return self

    # ---- options ----------------------------------------------------------------------------------
    @property
    def compile_kwargs(self):
        return dict(out_idx=self.out_idx, workspace_idx=self.workspace_idx, target=self.target,
                    pass_configs=self.pass_configs, verbose=self.verbose, compile_flags=self.compile_flags,
                    execution_backend=self.execution_backend)

    def compile_prim(self, prim_func, **overrides):
        """Compiles a PrimFunc with this function's options (overrides win)."""
        opts = self.compile_kwargs
        opts.update(overrides)
        kernel = sys.modules[__name__].compile(prim_func, **opts)  # module lookup: tests may patch it
        if self.debug_root_path:
            self._dump(prim_func, kernel)
        return kernel

    def _dump(self, prim_func, kernel):
        os.makedirs(self.debug_root_path, exist_ok=True)
        name = getattr(prim_func, "name", None) or self.func.__name__
        with open(os.path.join(self.debug_root_path, f"tilelang_jit_kernel_{name}.c"), "w") as f:
            f.write(kernel.get_kernel_source())
        with open(os.path.join(self.debug_root_path, f"tilelang_jit_program_{name}.py"), "w") as f:
            f.write(prim_func.script())

    # ---- lazy style ---------------------------------------------------------------------------------
    def build(self, *args, **kwargs):
        """Runs the builder: the @T.prim_func for these compile-time arguments (not compiled)."""
        return self.builder(*args, **kwargs)

    def _lazy_kernel(self, args, kwargs):
        key = (_freeze(args), _freeze(kwargs))
        kernel = self._memo.get(key)
        if kernel is None:
            kernel = self.compile_prim(self.build(*args, **kwargs))
            self._memo[key] = kernel
        return kernel

    # ---- eager style --------------------------------------------------------------------------------
    def _bind(self, args, kwargs):
        """(compile-time values by name, explicit T.const values, run-time arguments in order)."""
        spec = self._eager
        names = spec.param_names
        if len(args) > len(names):
            raise TypeError(f"{self.func.__name__}() takes {len(names)} arguments but {len(args)} were given")
        values = dict(zip(names, args))
        consts = {}
        for k, v in kwargs.items():
            if k in self._name_set:
                if k in values:
                    raise TypeError(f"{self.func.__name__}() got multiple values for argument '{k}'")
                values[k] = v
            else:
                consts[k] = v  # a T.const value (M=1024)
        runtime = [values.pop(n, _MISSING) for n in spec.runtime_params]
        for n in self._compile_params:
            if n not in values:
                d = self._defaults.get(n, _MISSING)
                if d is _MISSING:
                    raise TypeError(f"{self.func.__name__}() missing the compile-time argument '{n}'")
                values[n] = d
        return values, consts, runtime

    def _eager_kernel(self, values, consts, runtime):
        key, const_values = self._eager_resolve(values, consts, runtime)
        kernel = self._kernels.get(key)
        if kernel is None:
            from ..language.eager import parse_eager  # noqa: PLC0415
            kernel = self.compile_prim(parse_eager(self._eager, values, const_values))
            self._kernels[key] = kernel
        return kernel

    def _probe_key(self, values, consts):
        """(the compile-time key, the probe result) of these compile-time values and T.const keywords."""
        from ..language.eager import parse_eager  # noqa: PLC0415
        p1 = (tuple(_freeze(values[n]) for n in self._compile_params),
              tuple(sorted((k, _freeze(v)) for k, v in consts.items())))
        probe = self._templates.get(p1)
        if probe is None:
            probe = parse_eager(self._eager, values, consts, probe=True)
            unknown = set(consts) - set(probe.consts)
            if unknown:
                raise TypeError(f"{self.func.__name__}() got unexpected keyword argument(s) "
                                f"{', '.join(sorted(unknown))} (neither a parameter nor a T.const name)")
            self._templates[p1] = probe
        return p1, probe

    def _probe_for(self, values, consts):
        return self._probe_key(values, consts)[1]

    def _eager_resolve(self, values, consts, runtime):
        """The cache key of this binding and the value of every T.const."""
        spec = self._eager
        p1, probe = self._probe_key(values, consts)
        bound = []
        for n in probe.consts:
            if n in consts:
                bound.append(consts[n])
                continue
            src = probe.sources.get(n)
            if src is None and probe.stopped_by is not None:
                # The body failed before declaring the tensor that binds `n`: that error is the cause.
                raise probe.stopped_by
            if src is None or runtime[spec.runtime_index[src[0]]] is _MISSING:
                hint = f" or pass the tensor '{src[0]}'" if src is not None else ""
                raise TypeError(f"{self.func.__name__}: no value for T.const '{n}': pass it as a keyword argument "
                                f"({n}=...){hint}")
            bound.append(_dim_of(runtime[spec.runtime_index[src[0]]], src[1], src[2]))
        const_values = dict(consts)
        const_values.update(zip(probe.consts, bound))
        return (p1, tuple(bound)), const_values

    # ---- public -------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """Lazy: the compiled kernel for these compile-time arguments. Eager: compile (once per
        binding) and run with the given tensors; returns the T.empty outputs."""
        if self._eager is None:
            return self._lazy_kernel(args, kwargs)
        # Fast path: a call of a form seen before (same compile-time values, tensors in the same
        # places) reads the tensors' dimensions and looks the kernel up, nothing else.
        rp = self._runtime_positions
        try:
            # Values and their types: 3 and 3.0 are equal keys but different kernels.
            form = (tuple(None if i in rp else a for i, a in enumerate(args)), tuple(map(type, args)),
                    tuple((k, None if k in self._eager.runtime_index else v, type(v)) for k, v in kwargs.items()))
            plan = self._fast.get(form)
        except TypeError:  # an unhashable compile-time value: the general path
            form = plan = None
        if plan is not None:
            runtime = [args[p] if p.__class__ is int else kwargs[p] for p in plan.picks]
            dims = tuple(runtime[r].shape[d] if k == "shape" else _dim_of(runtime[r], k, d) for r, k, d in plan.dims)
            kernel = plan.kernels.get(dims)
            if kernel is not None:
                return kernel(*runtime)
        values, consts, runtime = self._bind(args, kwargs)
        kernel = self._eager_kernel(values, consts, runtime)
        missing = [n for n, a in zip(self._eager.runtime_params, runtime) if a is _MISSING]
        if missing:
            raise TypeError(f"{self.func.__name__}() missing tensor argument(s) {', '.join(missing)}; to compile "
                            f"without running, call {self.func.__name__}.compile(...)")
        if form is not None:
            self._remember(form, plan, args, values, consts, runtime, kernel)
        return kernel(*runtime)

    def _remember(self, form, plan, args, values, consts, runtime, kernel):
        """Records the call form `form` (and this binding's kernel) for the fast path of __call__."""
        spec = self._eager
        if plan is None:
            picks = []
            for n in spec.runtime_params:
                i = spec.param_names.index(n)
                picks.append(i if i < len(args) else n)
            probe = self._probe_for(values, consts)
            dims = [(spec.runtime_index[probe.sources[n][0]],) + probe.sources[n][1:]
                    for n in probe.consts if n not in consts]
            plan = self._fast[form] = _CallPlan(picks, dims)
        key = tuple(runtime[r].shape[d] if k == "shape" else _dim_of(runtime[r], k, d) for r, k, d in plan.dims)
        plan.kernels[key] = kernel

    def compile(self, *args, **kwargs):
        """The compiled kernel, without running it. Eager style: every T.const not determined by a
        tensor argument is passed by keyword (`f.compile(M=1024, N=1024, block_M=128)`)."""
        if self._eager is None:
            return self._lazy_kernel(args, kwargs)
        return self._eager_kernel(*self._bind(args, kwargs))

    def get_tir(self, *args, **kwargs):
        """The PrimFunc these arguments produce (not compiled)."""
        if self._eager is None:
            return self.build(*args, **kwargs)
        from ..language.eager import parse_eager  # noqa: PLC0415
        values, consts, runtime = self._bind(args, kwargs)
        return parse_eager(self._eager, values, self._eager_resolve(values, consts, runtime)[1])

    def get_kernel_source(self, *args, **kwargs):
        return self.compile(*args, **kwargs).get_kernel_source()

    def par_compile(self, configs, num_workers=None, ignore_error=False):
        """Compiles one kernel per config (a dict of keyword arguments or a tuple of positional ones)."""
        configs = list(configs)

        def one(cfg):
            if isinstance(cfg, tuple):
                return self.compile(*cfg)
            if isinstance(cfg, dict):
                return self.compile(**cfg)
            raise ValueError(f"par_compile: a config is a dict or a tuple, got {type(cfg).__name__}")

        results = [None] * len(configs)
        workers = num_workers or max(1, min(len(configs), os.cpu_count() or 1))
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(one, c): i for i, c in enumerate(configs)}
            for fut in concurrent.futures.as_completed(futures):
                try:
                    results[futures[fut]] = fut.result()
                except Exception as e:  # noqa: BLE001
                    if not ignore_error:
                        raise
                    print(f"[tilelang.par_compile] config {configs[futures[fut]]} failed: {type(e).__name__}: {e}",
                          file=sys.stderr)
        return results

    def is_lazy_mode(self):
        return self.mode == "lazy"

    def clear_memo(self):
        self._memo.clear()
        self._fast.clear()
        self._templates.clear()
        self._kernels.clear()

    def __repr__(self):
        return f"<tilelang.jit {self.mode} function {self.func.__qualname__}>"


JITFunction = JITImpl  # the name this project used before


def jit(func=None, *, out_idx=None, workspace_idx=None, target="auto", target_host=None, pass_configs=None,
        verbose=False, compile_flags=None, execution_backend="auto", debug_root_path=None):
    """Decorates a kernel function: `@tilelang.jit(out_idx=[-1])` or bare `@tilelang.jit`.

    Applied to a @T.prim_func directly, it compiles it and returns the Kernel."""
    compile_kwargs = dict(out_idx=out_idx, workspace_idx=workspace_idx, target=target, pass_configs=pass_configs,
                          verbose=verbose, compile_flags=compile_flags, execution_backend=execution_backend)
    # Check the options now, not at the first call.
    normalize_pass_configs(pass_configs)

    def decorate(fn):
        if _is_prim_func(fn):
            return compile(fn, **compile_kwargs)
        if not callable(fn):
            raise TypeError(f"@tilelang.jit expects a function, got {type(fn).__name__}")
        return JITImpl(fn, target_host=target_host, debug_root_path=debug_root_path, **compile_kwargs)

    if func is not None:
        return decorate(func)
    return decorate


def _is_prim_func(obj):
    try:
        _ir_of(obj)
        return True
    except TypeError:
        return False
