"""Tuning results kept on disk, and the progress display (docs/RUNTIME.md, "Autotuning").

A finished tuning run is saved as `<cache dir>/autotuner/<sha256>.json`, the hash over: tilelang's
version, the builder's source, the call's arguments (tensors by shape, dtype and device), the
configurations, how they are compiled (target, pass configs, flags, out_idx) and checked / timed
(tolerances, budgets, and the source of ref_prog / supply_prog / manual_check_prog), top_k and the
machine (CPU model and count; GPU name and architecture when one is visible). A later run with the
same key compiles only the best configuration (a kernel-cache hit) instead of tuning again.
`TILELANG_AUTO_TUNING_DISABLE_CACHE=1` (TileLang's variable), `TILELANG_DISABLE_CACHE=1` or
`ignore_cache=True` tune anew (and overwrite the saved result). A run whose key cannot be written down
stably (a callback without source, a value whose repr is an address) is not saved."""
import hashlib
import inspect
import json
import os
import re
import sys
import tempfile

_FORMAT = 1
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _callback_source(fn):
    if fn is None:
        return None
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        raise _Unkeyable(f"the source of {fn!r} is not available") from None


class _Unkeyable(Exception):
    pass


def _machine():
    from .. import _core  # noqa: PLC0415
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") or line.startswith("Model"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gpu = None
    try:
        if _core.cuda_available() and _core.cuda.device_count() > 0:
            info = _core.cuda.device_info(0)
            gpu = (info["name"], info["arch"])
    except Exception:  # noqa: BLE001 - no GPU identity: the key says so
        gpu = None
    return {"cpu": model, "cpus": os.cpu_count(), "gpu": gpu}


def result_key(tuner, configs):
    """The hex key of `tuner`'s run over `configs` (the list it tunes), or None when the run cannot
    be keyed stably."""
    from .. import __version__  # noqa: PLC0415
    p, c = tuner.profile_args, tuner.compile_args
    try:
        src = inspect.getsource(tuner.fn)
        data = {
            "format": _FORMAT,
            "version": __version__,
            "source": src,
            "name": getattr(tuner.fn, "__qualname__", ""),
            "arguments": repr(tuner._kernel_parameters),
            "configs": repr(configs),
            "compile": repr((c.out_idx, str(getattr(c.target, "tilelang_target", c.target)), c.execution_backend,
                             c.pass_configs, c.compile_flags, c.workspace_idx, str(tuner.jit_target))),
            "profile": repr((p.warmup, p.rep, p.timeout, str(p.supply_type), p.rtol, p.atol, p.max_mismatched_ratio,
                             p.skip_check, p.cache_input_tensors, getattr(tuner, "_run_options", None))),
            "callbacks": [_callback_source(p.ref_prog), _callback_source(p.supply_prog),
                          _callback_source(p.manual_check_prog)],
            "top_k": tuner.top_k,
            "machine": _machine(),
        }
    except (OSError, TypeError, _Unkeyable):
        return None
    text = json.dumps(data, sort_keys=True, default=repr)
    if _ADDRESS.search(text):  # an object printed by address: not the same key next time
        return None
    return hashlib.sha256(text.encode()).hexdigest()


def enabled():
    from ..env import env  # noqa: PLC0415
    return env.is_cache_enabled() and not env.is_autotune_cache_disabled()


def _path(key):
    from .. import _core  # noqa: PLC0415
    return os.path.join(_core.cache_root(), "autotuner", key + ".json")


def load(key):
    """The saved record of `key`, or None (absent or unreadable)."""
    try:
        with open(_path(key)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        return None
    return record


def save(key, configs, result, best_index):
    """Writes the record of a finished run (atomically; a failure to write is not an error)."""
    record = {
        "format": _FORMAT,
        "best_index": best_index,
        "best_config": repr(configs[best_index]),
        "latency": result.latency,
        "ref_latency": result.ref_latency,
        "results": [{"config": repr(r.config), "status": r.status, "message": r.message, "latency": r.latency}
                    for r in result.results],
    }
    path = _path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1)
        os.replace(tmp, path)
    except OSError as e:
        print(f"[tilelang.autotune] could not save the tuning result to {path}: {e}", file=sys.stderr)


class Progress:
    """A tqdm bar when tqdm is installed and the tuner is verbose; otherwise nothing is shown."""

    def __init__(self, total, desc, enabled_):
        self.bar = None
        if not enabled_ or total <= 0:
            return
        try:
            from tqdm.auto import tqdm  # noqa: PLC0415
        except ImportError:
            return
        self.bar = tqdm(total=total, desc=desc, file=sys.stderr)

    @property
    def active(self):
        return self.bar is not None

    def step(self, best_ms=None, failed=0):
        if self.bar is None:
            return
        post = {}
        if best_ms is not None:
            post["best"] = f"{best_ms:.4f} ms"
        if failed:
            post["failed"] = failed
        if post:
            self.bar.set_postfix(post, refresh=False)
        self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None
