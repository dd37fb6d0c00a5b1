"""Device queries (TileLang's tilelang.carver.arch.driver).

With a CUDA device they report that device (through the CUDA driver API). Without one they report
the cpu target's view of the machine, where a "SM" is a worker thread of the kernel grid: code
that sizes a persistent grid with get_num_sms() then runs well on the cpu too.
"""
import os

from .... import _core

__all__ = ["get_num_sms", "get_device_name", "get_shared_memory_per_block", "get_max_dynamic_shared_size_bytes",
           "get_registers_per_block", "get_device_capability", "get_l2_cache_size", "has_cuda_device"]


def has_cuda_device():
    try:
        ok, _ = _core.cuda.driver_available()
        return bool(ok) and _core.cuda.device_count() > 0
    except Exception:  # noqa: BLE001
        return False


def _info(device_id):
    return _core.cuda.device_info(int(device_id))


def get_num_sms(device_id=0):
    """Streaming multiprocessors of the CUDA device; without one, the cpu worker threads."""
    if has_cuda_device():
        return int(_info(device_id)["sm_count"])
    return max(1, int(_core.hardware_threads()))


def get_device_name(device_id=0):
    if has_cuda_device():
        return _info(device_id)["name"]
    return "cpu"


def get_device_capability(device_id=0):
    if has_cuda_device():
        return tuple(_info(device_id)["cc"])
    return None


def get_shared_memory_per_block(device_id=0, format="bytes"):  # noqa: A002
    if has_cuda_device():
        value = int(_info(device_id)["max_smem_per_block"])
    else:
        value = _cpu_cache_bytes(2)
    return _fmt(value, format)


def get_max_dynamic_shared_size_bytes(device_id=0, format="bytes"):  # noqa: A002
    if has_cuda_device():
        value = int(_info(device_id)["max_smem_per_block_optin"])
    else:
        value = _cpu_cache_bytes(2)
    return _fmt(value, format)


def get_registers_per_block(device_id=0):
    return 65536 if has_cuda_device() else 16 * 32  # cpu: 16 vector registers of 32 bytes (AVX2)


def get_l2_cache_size(device_id=0):
    if has_cuda_device():
        return int(_info(device_id)["l2_bytes"])
    return _cpu_cache_bytes(3)


def _fmt(value, format):  # noqa: A002
    if format == "bytes":
        return value
    if format == "kb":
        return value // 1024
    if format == "mb":
        return value // (1024 * 1024)
    raise ValueError(f"format must be 'bytes', 'kb' or 'mb', got {format!r}")


def _cpu_cache_bytes(level):
    """Size of the level-`level` data cache of cpu 0 (sysfs), with a common default."""
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        for idx in sorted(os.listdir(base)):
            d = os.path.join(base, idx)
            with open(os.path.join(d, "level")) as f:
                lv = int(f.read())
            with open(os.path.join(d, "type")) as f:
                kind = f.read().strip()
            if lv == level and kind in ("Data", "Unified"):
                with open(os.path.join(d, "size")) as f:
                    text = f.read().strip()
                mult = {"K": 1024, "M": 1024 * 1024}.get(text[-1], 1)
                return int(text.rstrip("KM")) * mult
    except (OSError, ValueError):
        pass
    return {1: 32 * 1024, 2: 512 * 1024, 3: 16 * 1024 * 1024}.get(level, 512 * 1024)
