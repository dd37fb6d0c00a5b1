"""The CUDA architecture model (facts from the device when there is one, else from sm_<arch>)."""
from . import driver
from .arch_base import TileDevice

# Defaults per compute capability where no device is present: (SMs, max dynamic smem per block,
# L2 bytes, DRAM GB/s, fp16 tensor TFLOPS).
_KNOWN = {
    (7, 0): (80, 96 * 1024, 6 << 20, 900, 125),
    (7, 5): (40, 64 * 1024, 4 << 20, 320, 65),
    (8, 0): (108, 163 * 1024, 40 << 20, 1555, 312),
    (8, 6): (84, 99 * 1024, 6 << 20, 936, 142),
    (8, 9): (128, 99 * 1024, 72 << 20, 1008, 330),
    (9, 0): (132, 227 * 1024, 50 << 20, 3350, 989),
    (10, 0): (148, 227 * 1024, 126 << 20, 8000, 2250),
}


def _arch_cc(target):
    text = str(getattr(target, "arch", "") or "")
    if not text and isinstance(target, str) and "-arch=" in target:
        text = target.split("-arch=", 1)[1].split()[0]
    if isinstance(target, dict):
        text = str(target.get("arch", ""))
    digits = "".join(ch for ch in text.replace("sm_", "") if ch.isdigit())
    if len(digits) >= 2:
        return int(digits[:-1]), int(digits[-1])
    return None


class CUDA(TileDevice):
    platform = "CUDA"
    warp_size = 32

    def __init__(self, target="cuda", device_id=0):
        self.target = target
        cc = _arch_cc(target)
        if driver.has_cuda_device():
            cc = cc or driver.get_device_capability(device_id)
            self.compute_max_core = driver.get_num_sms(device_id)
            self.smem_cap = driver.get_max_dynamic_shared_size_bytes(device_id)
            self.l2_cache_size_bytes = driver.get_l2_cache_size(device_id)
            self.device_name = driver.get_device_name(device_id)
            known = _KNOWN.get(tuple(cc), _KNOWN[(8, 0)])
        else:
            cc = cc or (8, 0)
            known = _KNOWN.get(tuple(cc), _KNOWN[(8, 0)])
            self.compute_max_core, self.smem_cap, self.l2_cache_size_bytes = known[0], known[1], known[2]
            self.device_name = f"sm_{cc[0]}{cc[1]} (no device: model defaults)"
        self.sm_version = cc[0] * 10 + cc[1]
        self.sm_major, self.sm_minor = cc
        self.max_smem_usage = 2 * self.smem_cap
        self.reg_cap = 65536
        self.bandwidth = [known[3], known[3] * 12]
        self.peak_tflops = float(known[4])
        self.transaction_size = [32, 128]

    def get_avaliable_tensorintrin_shapes(self):
        return [[16, 16]] if self.sm_version >= 70 else []


class CDNA(TileDevice):
    """AMD CDNA: tilelang-cpp has no ROCm target; constructing one raises."""
    platform = "CDNA"

    def __init__(self, target="hip"):
        raise NotImplementedError("not implemented: the CDNA (ROCm) architecture; tilelang-cpp targets cpu, cuda "
                                  "and ascend (use tilelang.carver.arch.CUDA or CPU)")
