"""@tilelang.jit and tilelang.compile."""
import functools

from .. import _core
from . import adapter  # noqa: F401  (registers the tensor allocator)
from .kernel import JITKernel, Kernel, KernelParam, _ir_of
from .pass_config import PassConfigKey, normalize_pass_configs

__all__ = ["jit", "compile", "JITKernel", "Kernel", "KernelParam", "PassConfigKey"]


def compile(prim_func, out_idx=None, target="auto", pass_configs=None, verbose=False, execution_backend="auto",
            compile_flags=None, workspace_idx=None):
    """Compiles a @T.prim_func for `target` and returns a Kernel. Compiled kernels are cached on
    disk ($TILELANG_CACHE_DIR) and in the process."""
    return JITKernel(prim_func, out_idx=out_idx, target=target, pass_configs=pass_configs, verbose=verbose,
                     execution_backend=execution_backend, compile_flags=compile_flags, workspace_idx=workspace_idx)


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


class JITFunction:
    """A kernel builder decorated with @tilelang.jit. Calling it with compile-time arguments returns
    the compiled Kernel; the same arguments again return the same Kernel without rebuilding."""

    def __init__(self, builder, **compile_kwargs):
        self.builder = builder
        self.compile_kwargs = compile_kwargs
        self._memo = {}
        functools.update_wrapper(self, builder)

    def _key(self, args, kwargs):
        return _freeze(args), _freeze(kwargs)

    def build(self, *args, **kwargs):
        """Runs the builder: the @T.prim_func for these compile-time arguments (not compiled)."""
        return self.builder(*args, **kwargs)

    def compile_prim(self, prim_func, **overrides):
        opts = dict(self.compile_kwargs)
        opts.update(overrides)
        return compile(prim_func, **opts)

    def __call__(self, *args, **kwargs):
        key = self._key(args, kwargs)
        kernel = self._memo.get(key)
        if kernel is None:
            kernel = self.compile_prim(self.build(*args, **kwargs))
            self._memo[key] = kernel
        return kernel

    def clear_memo(self):
        self._memo.clear()


def jit(func=None, *, out_idx=None, workspace_idx=None, target="auto", pass_configs=None, verbose=False,
        compile_flags=None, execution_backend="auto"):
    """Decorates a kernel builder: `@tilelang.jit(out_idx=[-1])` or bare `@tilelang.jit`.

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
        return JITFunction(fn, **compile_kwargs)

    if func is not None:
        return decorate(func)
    return decorate


def _is_prim_func(obj):
    try:
        _ir_of(obj)
        return True
    except TypeError:
        return False
