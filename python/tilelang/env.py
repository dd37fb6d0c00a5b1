"""tilelang.env: the environment variables tilelang reads, as attributes of `env`.

`from tilelang.env import env`; `env.TILELANG_CACHE_DIR`, `env.disable_cache()`, ... Each
attribute reads the variable when accessed (assigning one sets the variable for this process).
Variables that only steer TileLang's TVM/NVCC internals are listed with their defaults so programs
that read them keep working; docs/COMPATIBILITY.md says which ones have an effect here.
"""
import os

__all__ = ["env", "Environment", "EnvVar", "CUDA_HOME", "TILELANG_CACHE_DIR"]


def _cache_default():
    # The runtime's own choice (XDG_CACHE_HOME, ~/.cache/tilelang, or the private per-user fallback of
    # docs/SECURITY.md), so both always name the same directory.
    from tilelang import _core
    return _core.cache_root()


def _cuda_home():
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    return "/usr/local/cuda" if os.path.isdir("/usr/local/cuda") else ""


class EnvVar:
    """An environment variable with a default (a value or a callable)."""

    def __init__(self, key, default=None):
        self.key = key
        self.default = default

    def get(self):
        if self.key in os.environ:
            return os.environ[self.key]
        return self.default() if callable(self.default) else self.default

    def __get__(self, instance, owner):
        return self if instance is None else self.get()

    def __set__(self, instance, value):
        if value is None:
            os.environ.pop(self.key, None)
        else:
            os.environ[self.key] = str(value)


_TRUE = ("1", "true", "yes", "on")


class Environment:
    CUDA_HOME = EnvVar("CUDA_HOME", _cuda_home)
    ROCM_HOME = EnvVar("ROCM_PATH", "")
    TILELANG_CACHE_DIR = EnvVar("TILELANG_CACHE_DIR", _cache_default)
    TILELANG_TMP_DIR = EnvVar("TILELANG_TMP_DIR", lambda: os.path.join(Environment.TILELANG_CACHE_DIR.get(), "tmp"))
    TILELANG_DISABLE_CACHE = EnvVar("TILELANG_DISABLE_CACHE", "0")
    TILELANG_PRINT_ON_COMPILATION = EnvVar("TILELANG_PRINT_ON_COMPILATION", "0")
    TILELANG_AUTO_TUNING_DISABLE_CACHE = EnvVar("TILELANG_AUTO_TUNING_DISABLE_CACHE", "0")
    TILELANG_AUTO_TUNING_CPU_UTILITIES = EnvVar("TILELANG_AUTO_TUNING_CPU_UTILITIES", "0.9")
    TILELANG_AUTO_TUNING_CPU_COUNTS = EnvVar("TILELANG_AUTO_TUNING_CPU_COUNTS", "-1")
    TILELANG_AUTO_TUNING_MAX_CPU_COUNT = EnvVar("TILELANG_AUTO_TUNING_MAX_CPU_COUNT", "-1")
    TILELANG_DEFAULT_TARGET = EnvVar("TILELANG_DEFAULT_TARGET", "auto")
    TILELANG_DEFAULT_EXECUTION_BACKEND = EnvVar("TILELANG_EXECUTION_BACKEND", "auto")
    TILELANG_DEFAULT_VERBOSE = EnvVar("TILELANG_VERBOSE", "0")
    TILELANG_COMPILE_TIMEOUT_SECONDS = EnvVar("TILELANG_COMPILE_TIMEOUT", "")
    TILELANG_ENABLE_IR_SPAN = EnvVar("TILELANG_ENABLE_IR_SPAN", "1")
    TILELANG_CLEANUP_TEMP_FILES = EnvVar("TILELANG_CLEANUP_TEMP_FILES", "0")
    TILELANG_JIT_DIAGNOSTICS = EnvVar("TILELANG_JIT_DIAGNOSTICS", "0")
    TILELANG_PASS_PROFILE = EnvVar("TILELANG_PASS_PROFILE", "0")
    TL_LOWER_TRACE = EnvVar("TL_LOWER_TRACE", "0")
    TL_DUMP_IR = EnvVar("TL_DUMP_IR", "")
    TL_PASS_TIMING = EnvVar("TL_PASS_TIMING", "0")
    SKIP_LOADING_TILELANG_SO = EnvVar("SKIP_LOADING_TILELANG_SO", "0")

    def is_cache_enabled(self):
        from . import _core
        return not _core.cache_disabled()

    def enable_cache(self):
        os.environ.pop("TILELANG_DISABLE_CACHE", None)

    def disable_cache(self):
        os.environ["TILELANG_DISABLE_CACHE"] = "1"

    def is_cache_globally_disabled(self):
        return str(self.TILELANG_DISABLE_CACHE).lower() in _TRUE

    def is_autotune_cache_disabled(self):
        return str(self.TILELANG_AUTO_TUNING_DISABLE_CACHE).lower() in _TRUE

    def is_print_on_compilation_enabled(self):
        return str(self.TILELANG_PRINT_ON_COMPILATION).lower() in _TRUE

    def get_default_target(self):
        return self.TILELANG_DEFAULT_TARGET

    def get_default_execution_backend(self):
        return self.TILELANG_DEFAULT_EXECUTION_BACKEND

    def get_default_verbose(self):
        return str(self.TILELANG_DEFAULT_VERBOSE).lower() in _TRUE

    def is_span_enable(self):
        return str(self.TILELANG_ENABLE_IR_SPAN).lower() in _TRUE

    def is_light_import(self):
        return False


env = Environment()
CUDA_HOME = env.CUDA_HOME
TILELANG_CACHE_DIR = env.TILELANG_CACHE_DIR


def enable_cache():
    env.enable_cache()


def disable_cache():
    env.disable_cache()


def is_cache_enabled():
    return env.is_cache_enabled()
