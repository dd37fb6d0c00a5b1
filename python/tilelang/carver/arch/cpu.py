"""The cpu architecture model: a block of the grid runs as one task on a worker thread; its tiles
should fit the per-core L2 cache (what "shared memory" is on the cpu target)."""
from . import driver
from .arch_base import TileDevice


class CPU(TileDevice):
    platform = "CPU"
    warp_size = 1

    def __init__(self, target="cpu"):
        self.target = target
        self.compute_max_core = driver.get_num_sms()
        self.smem_cap = driver._cpu_cache_bytes(2)
        self.max_smem_usage = self.smem_cap
        self.l2_cache_size_bytes = driver._cpu_cache_bytes(3)
        self.reg_cap = 16 * 32
        self.sm_version = 0
        self.device_name = "cpu"
        # Per core: two 8-wide fp32 FMA units at ~3 GHz (AVX2); ~20 GB/s of DRAM bandwidth per core.
        self.peak_tflops = self.compute_max_core * 2 * 8 * 2 * 3.0e9 / 1e12
        self.bandwidth = [20 * self.compute_max_core, 200 * self.compute_max_core]
        self.transaction_size = [64, 64]
