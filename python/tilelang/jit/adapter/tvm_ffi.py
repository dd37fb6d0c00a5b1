"""TileLang's execution-adapter classes (tilelang.jit.adapter.*).

tilelang-cpp has one execution path (the C++ runtime behind every JITKernel), not per-backend
adapters; these names exist for code that tests `isinstance(kernel.adapter, ...)`, and no kernel
is an instance of them (JITKernel.adapter is None here).
"""

__all__ = ["TVMFFIKernelAdapter", "BaseKernelAdapter", "CythonKernelAdapter", "NVRTCKernelAdapter"]


class BaseKernelAdapter:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("not implemented: TileLang's execution adapters; tilelang-cpp runs every kernel "
                                  "through its C++ runtime (call the JITKernel itself)")


class TVMFFIKernelAdapter(BaseKernelAdapter):
    pass


class CythonKernelAdapter(BaseKernelAdapter):
    pass


class NVRTCKernelAdapter(BaseKernelAdapter):
    pass
