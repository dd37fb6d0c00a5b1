"""Integer helpers for host code (tilelang.cdiv, tilelang.next_power_of_2)."""

__all__ = ["cdiv", "next_power_of_2"]


def cdiv(a, b):
    """Ceiling division of two Python ints (for kernel expressions use T.ceildiv)."""
    return (a + b - 1) // b


def next_power_of_2(x):
    """The smallest power of two >= x (1 for x <= 1)."""
    return 1 << (int(x) - 1).bit_length() if x > 1 else 1
