"""DataType and the NotImplementedError stand-ins of the tvm namespace."""
from .. import _core

__all__ = ["DataType", "unsupported"]

_TYPE_CODES = {"int": 0, "uint": 1, "float": 2, "bool": 1}


class DataType(str):
    """tvm.DataType: a dtype name with `.bits`, `.lanes` and `.type_code`."""

    def __new__(cls, dtype):
        from ..language.dtypes import to_dtype
        return str.__new__(cls, str(to_dtype(dtype)))

    @property
    def _info(self):
        return _core.dtype_info(str(self))

    @property
    def bits(self):
        return 1 if str(self) == "bool" else self._info[1]

    @property
    def lanes(self):
        return self._info[2]

    @property
    def type_code(self):
        kind = self._info[0]
        if str(self) == "bfloat16":
            return 4
        return _TYPE_CODES.get(kind, 2)

    @property
    def dtype(self):
        return str(self)

    def is_float(self):
        return self._info[0] == "float"

    def is_int(self):
        return self._info[0] == "int"

    def is_uint(self):
        return self._info[0] == "uint"

    def is_bool(self):
        return str(self) == "bool"

    def is_scalar(self):
        return self.lanes == 1

    def with_lanes(self, lanes):
        if lanes != 1:
            raise NotImplementedError("not implemented: vector dtypes (tvm.DataType.with_lanes); tilelang-cpp "
                                      "dtypes are scalar")
        return self

    def __repr__(self):
        return f"DataType({str(self)!r})"


def unsupported(name, alternative):
    """A callable standing in for a TVM API: calling it raises NotImplementedError."""
    def stand_in(*_args, **_kwargs):
        raise NotImplementedError(f"not implemented: {name} is part of TVM, which tilelang-cpp does not include; "
                                  f"{alternative}")
    stand_in.__name__ = name.rsplit(".", 1)[-1]
    stand_in.__qualname__ = name
    stand_in.__doc__ = f"{name}: not provided by tilelang-cpp ({alternative})."
    return stand_in
