"""tilelang.PassConfigKey, generated from the C++ pass-config table (src/transform/pass_config.cc)."""
from enum import Enum

from .. import _core

_TABLE = _core.pass_config_keys()

# A str-valued Enum: members compare equal to their strings and can be passed wherever a key is.
PassConfigKey = Enum("PassConfigKey", [(member, key) for member, key, _type, _doc in _TABLE], type=str)
PassConfigKey.__doc__ = "Keys accepted by pass_configs=... of tilelang.compile / @tilelang.jit.\n\n" + "\n".join(
    f"{member} ({key!r}, {type_}): {doc}" for member, key, type_, doc in _TABLE)
PassConfigKey.__str__ = lambda self: self.value  # type: ignore[method-assign]


def normalize_pass_configs(pass_configs):
    """Returns a {key string: value} dict; raises ValueError for unknown keys or bad values."""
    if pass_configs is None:
        return {}
    if not isinstance(pass_configs, dict):
        raise ValueError(f"pass_configs must be a dict, got {type(pass_configs).__name__}")
    out = {}
    for key, value in pass_configs.items():
        if isinstance(key, PassConfigKey):
            key = key.value
        elif not isinstance(key, str):
            raise ValueError(f"pass config keys must be strings or tilelang.PassConfigKey members, got {key!r}")
        out[str(key)] = value
    # The C++ table checks names and value types (and normalizes member names to key strings).
    return dict(_core.validate_pass_configs(out))
