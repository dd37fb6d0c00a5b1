"""tvm.target.Target: a target description and a `with` scope that tilelang.lower / compile read."""
import threading

__all__ = ["Target"]

_scope = threading.local()
_TILELANG = {"c": "cpu", "llvm": "cpu", "cpu": "cpu", "cuda": "cuda", "ascend": "ascend", "npu": "ascend",
             "npuir": "ascend", "ascendc": "ascend", "pto": "ascend", "auto": "auto"}


class _Kind:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return self.name == (other.name if isinstance(other, _Kind) else other)

    def __hash__(self):
        return hash(self.name)


class Target:
    """`Target("cuda")`, `Target("cuda -arch=sm_90a")`, `Target({"kind": "cuda", "arch": "sm_90"})`,
    `Target("c")` / `Target("llvm")` (tilelang-cpp's cpu target)."""

    def __init__(self, target, host=None):
        if isinstance(target, Target):
            target = target.tilelang_target
        if isinstance(target, dict):
            kind = str(target.get("kind", "auto"))
            arch = target.get("arch")
        else:
            parts = str(target).split()
            kind = parts[0] if parts else "auto"
            arch = next((p.split("=", 1)[1] for p in parts[1:] if p.startswith("-arch=")), None)
        if kind not in _TILELANG:
            raise ValueError(f"unknown target kind {kind!r}; tilelang-cpp has cpu (TileLang's 'c' / 'llvm'), cuda "
                             "and ascend")
        self.kind = _Kind(kind)
        self.arch = arch or ""
        self.host = host
        self.attrs = {"arch": self.arch} if arch else {}
        self.keys = [kind]

    @property
    def tilelang_target(self):
        name = _TILELANG[self.kind.name]
        return f"{name} -arch={self.arch}" if self.arch and name == "cuda" else name

    def __str__(self):
        return self.tilelang_target

    def __repr__(self):
        return f"Target({self.tilelang_target!r})"

    def __eq__(self, other):
        return str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __enter__(self):
        if not hasattr(_scope, "stack"):
            _scope.stack = []
        _scope.stack.append(self)
        return self

    def __exit__(self, *exc):
        _scope.stack.pop()

    @staticmethod
    def current(allow_none=True):
        stack = getattr(_scope, "stack", None)
        if stack:
            return stack[-1]
        if allow_none:
            return None
        raise ValueError("no target in scope (use `with tvm.target.Target(...)`)")
