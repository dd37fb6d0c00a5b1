"""A class standing in for a TileLang intrinsic emitter: constructing it raises NotImplementedError."""


def emitter(qualname):
    class Emitter:
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(
                f"not implemented: {qualname} is an internal of TileLang's TVM-based GEMM lowering; tilelang-cpp "
                "lowers T.gemm itself (write T.gemm(A_shared, B_shared, C_local, ...))")
    Emitter.__name__ = Emitter.__qualname__ = qualname.rsplit(".", 1)[-1]
    return Emitter
