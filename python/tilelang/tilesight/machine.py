"""Machine descriptions: the hardware figures TileSight's cost model reads (one dataclass per target).

Every figure is chip-level data (datasheets, the local machine's /proc and /sys, the Ascend simulator's
own machine model), not something fitted to a benchmark; docs/TILESIGHT.md says where each comes from.
"""
import dataclasses
import os
from typing import Dict, Optional

__all__ = ["CudaMachine", "CpuMachine", "AscendMachine", "H100_SXM", "H200_SXM", "A100_SXM", "local_cpu",
           "ascend_machine", "machine_for"]


@dataclasses.dataclass(frozen=True)
class CudaMachine:
    """An NVIDIA GPU. Throughputs are chip-wide, dense (no sparsity), at `clock_hz`."""
    name: str
    sm_version: int
    sm_count: int
    clock_hz: float
    tensor_flops: Dict[str, float]       # tensor-core FLOP/s by input dtype (multiply-add = 2 FLOP)
    fp32_flops: float                    # CUDA-core fp32 FLOP/s (FMA = 2)
    sfu_ops: float                       # transcendental (exp, log, rsqrt, ...) results per second
    dram_bytes_per_s: float
    l2_bytes: int
    l2_bytes_per_s: float                # effective L2 -> SM bandwidth (no datasheet figure: see docs/TILESIGHT.md)
    smem_bytes_per_sm: int
    smem_bytes_per_block: int            # the opt-in maximum of one block
    smem_bytes_per_clock_per_sm: int     # shared-memory bandwidth (ldmatrix / wgmma operand reads)
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    max_threads_per_sm: int = 2048
    max_threads_per_block: int = 1024
    max_blocks_per_sm: int = 32
    dram_latency_s: float = 0.6e-6       # a global load round trip, issue to use
    launch_overhead_s: float = 3e-6
    # Warp-specialized kernels (sm_90a: a TMA producer warpgroup, mbarrier rings, wgmma consumers;
    # one block per SM): the hand-off cost of one pipeline round (mbarrier wait + arrive, TMA issue)
    # and the share of the tensor-core peak one / two consumer warpgroups reach. Fitted on an H200
    # (2026-11-26, 24 GEMM tilings, bench/results/tilesight_cuda_gemm_h200_2026-11-26.json).
    ws_round_overhead_s: float = 0.18e-6
    ws_tensor_efficiency: tuple = (0.6, 0.75)
    target: str = "cuda"

    @property
    def smem_bytes_per_s_per_sm(self):
        return self.smem_bytes_per_clock_per_sm * self.clock_hz

    def tensor_rate(self, dtype):
        """Chip-wide tensor FLOP/s for inputs of `dtype` (fp32 inputs run as TF32)."""
        d = str(dtype)
        for key in (d, "float8" if "float8" in d else None, "int8" if d in ("int8", "uint8") else None):
            if key and key in self.tensor_flops:
                return self.tensor_flops[key]
        if d in ("float32", "tfloat32"):
            return self.tensor_flops.get("float32", self.fp32_flops)
        if d == "float64":
            return self.tensor_flops.get("float64", self.fp32_flops / 2)
        return self.tensor_flops.get("float16")


# H100 SXM5 80 GB (NVIDIA H100 datasheet / Hopper whitepaper; dense figures at the boost clock).
H100_SXM = CudaMachine(
    name="H100 SXM5 80GB", sm_version=90, sm_count=132, clock_hz=1.83e9,
    tensor_flops={"float16": 989e12, "bfloat16": 989e12, "float32": 494e12, "float8": 1979e12, "int8": 1979e12,
                  "float64": 67e12},
    fp32_flops=67e12, sfu_ops=132 * 16 * 1.83e9, dram_bytes_per_s=3.35e12, l2_bytes=50 << 20,
    l2_bytes_per_s=12.0e12, smem_bytes_per_sm=228 << 10, smem_bytes_per_block=227 << 10,
    smem_bytes_per_clock_per_sm=128, dram_latency_s=0.55e-6)

# H200 SXM 141 GB: the H100 SXM's compute with HBM3e (4.8 TB/s).
H200_SXM = dataclasses.replace(H100_SXM, name="H200 SXM 141GB", dram_bytes_per_s=4.8e12)

# A100 SXM4 80 GB (NVIDIA A100 datasheet / Ampere whitepaper).
A100_SXM = CudaMachine(
    name="A100 SXM4 80GB", sm_version=80, sm_count=108, clock_hz=1.41e9,
    tensor_flops={"float16": 312e12, "bfloat16": 312e12, "float32": 156e12, "int8": 624e12, "float64": 19.5e12},
    fp32_flops=19.5e12, sfu_ops=108 * 16 * 1.41e9, dram_bytes_per_s=2.039e12, l2_bytes=40 << 20,
    l2_bytes_per_s=5.5e12, smem_bytes_per_sm=164 << 10, smem_bytes_per_block=163 << 10,
    smem_bytes_per_clock_per_sm=128, dram_latency_s=0.65e-6)


@dataclasses.dataclass(frozen=True)
class CpuMachine:
    """A CPU: the cpu target runs one block of the grid per worker thread (one per core) at a time."""
    name: str
    cores: int
    clock_hz: float
    vector_bits: int                     # widest SIMD register the kernels use (512 AVX-512, 256 AVX2, 128)
    fma_units: int                       # vector FMA pipes per core
    l1d_bytes: int
    l2_bytes: int                        # per core
    l3_bytes: int                        # shared
    dram_bytes_per_s: float              # what the whole socket streams
    core_bytes_per_s: float              # what one core streams from L3/DRAM
    l2_bytes_per_clock: int = 64
    block_overhead_s: float = 0.3e-6     # taking the next block from the worker pool's counter
    launch_overhead_s: float = 8e-6      # waking the pool (docs/RUNTIME.md: 1-4 us on the build VM) + the call
    gemm_call_overhead_s: float = 0.05e-6  # one tl::cpu::gemm call: loop set-up, C tile tails
    target: str = "cpu"

    def fp32_flops_per_core(self):
        return self.clock_hz * self.fma_units * 2 * (self.vector_bits // 32)

    def fp32_flops(self):
        return self.fp32_flops_per_core() * self.cores


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _size(text):
    if not text:
        return None
    t = text.strip().upper()
    mult = 1
    if t.endswith("K"):
        mult, t = 1 << 10, t[:-1]
    elif t.endswith("M"):
        mult, t = 1 << 20, t[:-1]
    try:
        return int(t) * mult
    except ValueError:
        return None


def _cpu_caches():
    out = {}
    base = "/sys/devices/system/cpu/cpu0/cache"
    for i in range(8):
        d = f"{base}/index{i}"
        level, kind, size = _read(f"{d}/level"), _read(f"{d}/type"), _size(_read(f"{d}/size"))
        if level is None or size is None or kind == "Instruction":
            continue
        out[int(level)] = size
    return out


def _cpu_flags_and_clock():
    flags, mhz, model = set(), None, "cpu"
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("flags") and not flags:
            flags = set(line.split(":", 1)[1].split())
        elif line.startswith("cpu MHz") and mhz is None:
            try:
                mhz = float(line.split(":", 1)[1])
            except ValueError:
                pass
        elif line.startswith("model name") and model == "cpu":
            model = line.split(":", 1)[1].strip()
    return flags, mhz, model


_LOCAL = None


def local_cpu():
    """The CpuMachine of this machine: cores (the runtime's worker count), SIMD width from the CPU
    flags (matching the cpu target's GEMM tiers: AVX-512 / AVX2 / 128-bit), clock and caches from
    /proc and /sys. Memory bandwidth is not discoverable without running: a per-core figure typical of
    servers (~12 GB/s per core from DRAM, capped at 100 GB/s per socket) stands in for it."""
    global _LOCAL
    if _LOCAL is not None:
        return _LOCAL
    try:
        from .. import _core
        cores = int(_core.hardware_threads())
    except Exception:  # noqa: BLE001 - the description must not need the extension
        cores = os.cpu_count() or 1
    flags, mhz, model = _cpu_flags_and_clock()
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        vbits = 512
    elif {"avx2", "fma"} <= flags:
        vbits = 256
    else:
        vbits = 128
    caches = _cpu_caches()
    clock = (mhz or 2500.0) * 1e6
    core_bw = 12e9
    _LOCAL = CpuMachine(name=f"{model} ({cores} cores)", cores=cores, clock_hz=clock, vector_bits=vbits,
                        fma_units=2 if vbits >= 256 else 1, l1d_bytes=caches.get(1, 32 << 10),
                        l2_bytes=caches.get(2, 1 << 20), l3_bytes=caches.get(3, 8 << 20),
                        dram_bytes_per_s=min(100e9, core_bw * cores), core_bytes_per_s=core_bw)
    return _LOCAL


@dataclasses.dataclass(frozen=True)
class AscendMachine:
    """The Ascend NPU as the simulator models it (src/sim/machine_model.h; read through
    tilelang._core.ascend.machine_model, so the estimate and the simulator share every constant)."""
    name: str
    clock_hz: float
    cube_cores: int
    vector_cores: int
    mem_bytes: Dict[str, int]            # per core: L1, L0A, L0B, L0C, UB
    hbm_bytes_per_s: float
    l2_bytes: int
    l2_bytes_per_s: float
    copy_gib_per_s: Dict[str, float]     # per core, by path (GM->L1, GM->UB, UB->GM, L0C->GM, ...)
    copy_start_cycles: Dict[str, float]
    mmad_startup_cycles: float
    mmad_cycles_per_fractal: Dict[int, float]   # by input element bits (16, 32, 8)
    vector_costs: Dict[str, tuple]       # op -> (startup, slope b16, slope b32) cycles, slope per 256 B
    default_vector_cost: tuple
    vector_repeat_bytes: int
    block_launch_cycles: float
    scalar_op_cycles: float
    gemm_v0_k_chunk: int
    launch_overhead_s: float = 0.0
    target: str = "ascend"

    def copy_seconds(self, path, nbytes):
        gib = self.copy_gib_per_s.get(path)
        if not gib:
            return 0.0
        return (self.copy_start_cycles.get(path, 0.0) / self.clock_hz) + nbytes / (gib * (1 << 30))


_ASCEND = {}


def ascend_machine(name="A2"):
    """The AscendMachine of the simulator's model `name` ("A2" or "A3")."""
    key = str(name).upper()
    if key in _ASCEND:
        return _ASCEND[key]
    from .. import _core
    d = _core.ascend.machine_model(key)
    m = AscendMachine(
        name=f"Ascend {d['name']} (simulator model)", clock_hz=float(d["clock_hz"]), cube_cores=int(d["cube_cores"]),
        vector_cores=int(d["vector_cores"]), mem_bytes={k: int(d[k]) for k in ("L1", "L0A", "L0B", "L0C", "UB")},
        hbm_bytes_per_s=float(d["hbm_bytes_per_s"]), l2_bytes=int(d["l2_bytes"]),
        l2_bytes_per_s=float(d["l2_bytes_per_s"]), copy_gib_per_s=dict(d["copy_gib_per_s"]),
        copy_start_cycles=dict(d["copy_start_cycles"]), mmad_startup_cycles=float(d["mmad_startup_cycles"]),
        mmad_cycles_per_fractal={16: float(d["mmad_cycles_per_fractal_b16"]),
                                 32: float(d["mmad_cycles_per_fractal_b32"]),
                                 8: float(d["mmad_cycles_per_fractal_b8"])},
        vector_costs={k: tuple(v) for k, v in dict(d["vector_costs"]).items()},
        default_vector_cost=tuple(d["default_vector_cost"]), vector_repeat_bytes=int(d["vector_repeat_bytes"]),
        block_launch_cycles=float(d["block_launch_cycles"]), scalar_op_cycles=float(d["scalar_op_cycles"]),
        gemm_v0_k_chunk=int(d["gemm_v0_k_chunk"]))
    _ASCEND[key] = m
    return m


_CUDA_BY_NAME = {"h100": H100_SXM, "h100_sxm": H100_SXM, "sm_90": H100_SXM, "sm_90a": H100_SXM, "h200": H200_SXM,
                 "a100": A100_SXM, "a100_sxm": A100_SXM, "sm_80": A100_SXM}


def machine_for(target="auto", machine: Optional[object] = None):
    """The machine description for a target string ("cpu", "cuda", "cuda -arch=sm_80", "ascend", "ascend -model=A3",
    "auto") or a machine name ("h100", "a100"); `machine` (a description object) wins when given."""
    if machine is not None:
        if isinstance(machine, (CudaMachine, CpuMachine, AscendMachine)):
            return machine
        if isinstance(machine, str):
            return machine_for(machine)
        raise TypeError(f"tilesight: machine must be a CudaMachine, CpuMachine, AscendMachine or a name, got "
                        f"{type(machine).__name__}")
    text = str(getattr(target, "tilelang_target", target) or "auto").strip()
    low = text.lower()
    if low in _CUDA_BY_NAME:
        return _CUDA_BY_NAME[low]
    head = low.split()[0] if low else "auto"
    if head == "auto":
        from .. import _core
        head = "cuda" if _core.cuda_available() else "cpu"
    if head.startswith("cuda"):
        if "sm_80" in low or "sm_86" in low or "sm_89" in low:
            return A100_SXM
        if "sm_" in low and "sm_90" not in low and "sm_10" not in low:
            return A100_SXM
        if "-arch" not in low:
            try:
                from ..carver.arch import driver
                if driver.has_cuda_device():
                    if tuple(driver.get_device_capability(0)) < (9, 0):
                        return A100_SXM
                    if "H200" in driver.get_device_name(0):
                        return H200_SXM
            except Exception:  # noqa: BLE001
                pass
        return H100_SXM
    if head in ("cpu", "c", "llvm"):
        return local_cpu()
    if head in ("ascend", "npu", "npuir"):
        model = "A3" if "model=a3" in low.replace(" ", "") else "A2"
        return ascend_machine(model)
    raise ValueError(f"tilesight: no machine description for target {text!r}; use \"cpu\", \"cuda\" (H100 SXM), "
                     "\"cuda -arch=sm_80\" (A100), \"ascend\" / \"ascend -model=A3\", or pass machine=...")
