"""TileDevice: the hardware facts a tile search needs."""


class TileDevice:
    """Facts: `platform`, `compute_max_core` (SMs or cores), `warp_size`, `sm_version`,
    `smem_cap` (bytes of shared memory a block may use), `reg_cap` (registers per block),
    `max_smem_usage`, `l2_cache_size_bytes`, `bandwidth` ([global GB/s, shared GB/s]),
    `peak_tflops` (fp16 multiply-add throughput), `transaction_size` ([global, shared] bytes)."""

    platform = "generic"
    compute_max_core = 1
    warp_size = 1
    sm_version = 0
    smem_cap = 48 * 1024
    max_smem_usage = 48 * 1024
    reg_cap = 65536
    l2_cache_size_bytes = 0
    bandwidth = [100, 1000]
    peak_tflops = 1.0
    transaction_size = [32, 128]
    max_threads_per_block = 1024

    def get_avaliable_tensorintrin_shapes(self):
        return []

    def __repr__(self):
        return (f"<{type(self).__name__} {self.platform} cores={self.compute_max_core} smem={self.smem_cap} "
                f"sm_version={self.sm_version}>")
