"""tvm.transform.PassContext: a `with` scope whose `config` (pass configs) tilelang.lower reads."""
import threading

from ._common import unsupported

__all__ = ["PassContext", "module_pass", "Sequential"]

_scope = threading.local()


class PassContext:
    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None, config=None,
                 trace=None, trace_stack=None, make_traceable=None, num_evals=0, tuning_api_database=None):
        self.opt_level = opt_level
        self.config = dict(config or {})
        self.required_pass = list(required_pass or [])
        self.disabled_pass = list(disabled_pass or [])

    def __enter__(self):
        if not hasattr(_scope, "stack"):
            _scope.stack = []
        _scope.stack.append(self)
        return self

    def __exit__(self, *exc):
        _scope.stack.pop()

    @staticmethod
    def current():
        stack = getattr(_scope, "stack", None)
        return stack[-1] if stack else None


module_pass = unsupported("tvm.transform.module_pass", "tilelang-cpp's passes are C++ (tools/tl-opt runs them)")
Sequential = unsupported("tvm.transform.Sequential", "tilelang-cpp's passes are C++ (tools/tl-opt runs them)")
