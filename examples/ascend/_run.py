"""Shared launcher of the Ascend examples: tilelang.compile when the JIT runtime is present, else the
ascend backend directly (tilelang._core.ascend), with the same arguments. Kept tiny on purpose:
each example reads like a tilelang-ascend script."""
import numpy as np

import tilelang


def compile(func, out_idx, workspace_idx=None, pass_configs=None, target="ascend"):  # noqa: A001
    if hasattr(tilelang, "compile"):
        return tilelang.compile(func, out_idx=out_idx, workspace_idx=workspace_idx, target=target,
                                pass_configs=pass_configs)
    return _DirectKernel(func, out_idx, workspace_idx, pass_configs, target)


class _DirectKernel:
    """Calls the ascend backend without the JIT runtime: allocates the `out_idx` outputs (zeros)."""

    def __init__(self, func, out_idx, workspace_idx, pass_configs, target):
        self.func = func
        self.out_idx = [out_idx] if isinstance(out_idx, int) else list(out_idx or [])
        self.workspace_idx = [workspace_idx] if isinstance(workspace_idx, int) else list(workspace_idx or [])
        configs = {str(getattr(k, "value", k)): v for k, v in (pass_configs or {}).items()}
        self.kernel = tilelang._core.ascend.compile(getattr(func, "ir", func), configs, target)

    def __call__(self, *inputs):
        params = self.func.params
        n = len(params)
        outs = {i % n for i in self.out_idx}
        work = {i % n for i in self.workspace_idx}
        args, it, results = [], iter(inputs), []
        for i, p in enumerate(params):
            if i in outs or i in work:
                arr = np.zeros([int(s.value) for s in p.shape], dtype=np.dtype(p.dtype))
                if i in outs:
                    results.append(arr)
                args.append(arr)
            else:
                args.append(next(it))
        self.kernel.launch(args)
        return results[0] if len(results) == 1 else tuple(results)

    def get_kernel_source(self):
        return self.kernel.source

    def info(self):
        return self.kernel.info()
