"""The cost model: a KernelProfile (analysis.py) on a machine description (machine.py) -> Estimate.

Entry: `estimate_profile(profile, machine) -> Estimate`. One function per target family
(_cuda, _cpu, _ascend); docs/TILESIGHT.md states each formula.
"""
import dataclasses
import functools
import math
import operator
from typing import Dict, List

from .analysis import KernelProfile, _bits
from .machine import AscendMachine, CpuMachine, CudaMachine

__all__ = ["Estimate", "estimate_profile"]

BOUNDS = ("compute", "memory", "latency", "occupancy")


@dataclasses.dataclass
class Estimate:
    """TileSight's estimate of one kernel on one machine. `time_s` is math.inf when the kernel cannot
    run there (`fits` False, `reasons` says why: shared memory, registers, UB, ...)."""
    kernel: str
    machine: str
    target: str
    time_s: float
    bound: str
    fits: bool = True
    reasons: List[str] = dataclasses.field(default_factory=list)
    compute_s: float = 0.0               # time the arithmetic units need (whole kernel)
    memory_s: float = 0.0                # time the memory system needs (whole kernel)
    latency_s: float = 0.0               # exposed memory latency / per-block overheads (whole kernel)
    overhead_s: float = 0.0              # launch
    flops: float = 0.0
    bytes: float = 0.0                   # global bytes requested
    dram_bytes: float = 0.0              # after on-chip cache reuse
    num_blocks: int = 0
    threads: int = 0
    blocks_per_unit: int = 0             # resident blocks per SM / core / AI core
    occupancy: float = 0.0               # resident threads per SM / maximum (cuda); busy fraction otherwise
    occupancy_limit: str = ""
    waves: float = 0.0
    wave_efficiency: float = 0.0         # busy fraction of the last-wave-quantised grid
    pipeline_stages: int = 1
    shared_bytes: int = 0
    registers_per_thread: int = 0
    details: Dict[str, float] = dataclasses.field(default_factory=dict)

    @property
    def time_ms(self):
        return self.time_s * 1e3

    @property
    def tflops(self):
        return self.flops / self.time_s / 1e12 if self.fits and self.time_s > 0 else 0.0

    @property
    def arithmetic_intensity(self):
        return self.flops / self.bytes if self.bytes else math.inf

    def as_dict(self):
        d = dataclasses.asdict(self)
        d["time_ms"] = self.time_ms
        return d

    def __str__(self):
        if not self.fits:
            return (f"TileSight estimate of {self.kernel} on {self.machine}: does not fit\n  "
                    + "\n  ".join(self.reasons))
        lines = [
            f"TileSight estimate of {self.kernel} on {self.machine} ({self.target})",
            f"  time        {self.time_s * 1e3:.4f} ms   bound: {self.bound}",
            f"  compute     {self.compute_s * 1e3:.4f} ms   ({self.flops / 1e9:.3f} GFLOP, "
            f"{self.tflops:.1f} TFLOP/s estimated)",
            f"  memory      {self.memory_s * 1e3:.4f} ms   ({self.bytes / 1e6:.2f} MB requested, "
            f"{self.dram_bytes / 1e6:.2f} MB from DRAM/HBM)",
            f"  latency     {self.latency_s * 1e3:.4f} ms   launch {self.overhead_s * 1e6:.1f} us",
            f"  grid        {self.num_blocks} blocks x {self.threads} threads, {self.blocks_per_unit} resident per "
            f"unit ({self.occupancy_limit}), occupancy {self.occupancy:.0%}",
            f"  waves       {self.waves:.2f} (efficiency {self.wave_efficiency:.0%}), pipeline stages "
            f"{self.pipeline_stages}",
            f"  footprint   shared {self.shared_bytes / 1024:.1f} KiB"
            + (f", ~{self.registers_per_thread} registers/thread" if self.registers_per_thread else ""),
        ]
        return "\n".join(lines)

    __repr__ = __str__


def estimate_profile(p: KernelProfile, machine) -> Estimate:
    """The Estimate of profile `p` on `machine` (a CudaMachine, CpuMachine or AscendMachine)."""
    if isinstance(machine, CudaMachine):
        return _cuda(p, machine)
    if isinstance(machine, CpuMachine):
        return _cpu(p, machine)
    if isinstance(machine, AscendMachine):
        return _ascend(p, machine)
    raise TypeError(f"tilesight: unknown machine description {type(machine).__name__}")


def _nofit(p, m, reasons, **kw):
    return Estimate(kernel=p.name, machine=m.name, target=m.target, time_s=math.inf, bound="does not fit",
                    fits=False, reasons=reasons, num_blocks=p.num_blocks, threads=p.threads,
                    shared_bytes=p.shared_bytes, pipeline_stages=p.pipeline_stages, **kw)


def _classify(terms, occupancy_loss):
    """The bound: the largest of the compute / memory / latency terms, or occupancy when wave
    quantisation / an under-filled machine costs more than a third of the time."""
    if occupancy_loss > 1.5:
        return "occupancy"
    return max(terms, key=terms.get)


def _wave_coords(grid, n, panel):
    """Grid coordinates of the first `n` blocks in launch order (x fastest; with T.use_swizzle's
    panel, `panel` rows of tiles are walked column by column)."""
    gx = grid[0] if grid else 1
    gy = grid[1] if len(grid) > 1 else 1
    out = []
    for i in range(n):
        if panel and panel > 1 and gy > 1:
            p_rows = min(panel, gy)
            band, r = divmod(i, p_rows * gx)
            x, y = r // p_rows, band * p_rows + r % p_rows
            rest = 0
        else:
            x, r = i % gx, i // gx
            y, rest = (r % gy, r // gy) if len(grid) > 1 else (0, r)
        out.append((x, y, rest))
    return out


@functools.lru_cache(maxsize=1024)
def _distinct_tiles(grid, n, panel, dims):
    """How many distinct values the grid coordinates `dims` take over the first `n` blocks in launch
    order. Depends only on its arguments, which the configurations of one kernel share (same grid,
    wave and buffers): kept per process, so that a ranking computes each once."""
    if not dims:
        return 1
    # the coordinates the addresses depend on, per block (itemgetter: one value or a tuple)
    return len(set(map(operator.itemgetter(*dims), _wave_coords(grid, n, panel))))


def _dram_bytes(p, cache_bytes, wave_blocks):
    """(bytes that reach DRAM, bytes requested). The unique footprint when it fits the last-level
    cache. Otherwise each wave of `wave_blocks` concurrent blocks loads every distinct tile it touches
    once (its blocks stream their loops roughly together, so a tile one block loads the others find in
    the cache) and waves share nothing: per global buffer, the distinct values of the grid coordinates
    its addresses depend on, among the wave's blocks, times its bytes per block."""
    requested = p.total("global_bytes")
    unique = min(requested, p.global_buffer_bytes) if p.global_buffer_bytes else requested
    if unique <= cache_bytes or not p.global_reads:
        return unique, requested
    w = max(1, min(int(wave_blocks), p.num_blocks, 1 << 16))
    per_wave = 0.0
    for nbytes, dims in p.global_reads.values():
        distinct = _distinct_tiles(tuple(p.grid), w, p.swizzle_panel, tuple(sorted({min(d, 2) for d in dims})))
        per_wave += distinct * nbytes
    waves = p.num_blocks / w
    reads = per_wave * waves
    dram = max(unique, min(requested, reads + p.total("global_write_bytes")))
    return dram, requested


# ---- cuda ---------------------------------------------------------------------------------------
def _warp_split(M, N, warps, wgmma):
    """(rows, cols) of the warp (or warp-group) grid that reads the least shared memory per k step."""
    units = warps // 4 if wgmma else warps
    best = None
    for wm in range(1, units + 1):
        if units % wm:
            continue
        wn = units // wm
        min_m = 64 if wgmma else 16
        if M / wm < min_m and wm > 1:
            continue
        if N / wn < 8 and wn > 1:
            continue
        cost = M * wn + N * wm
        if best is None or cost < best[0]:
            best = (cost, wm, wn)
    if best is None:
        return (units, 1)
    return best[1], best[2]


def _cuda(p: KernelProfile, m: CudaMachine) -> Estimate:
    reasons = []
    threads = p.threads
    warps = max(1, math.ceil(threads / 32))
    if threads > m.max_threads_per_block:
        reasons.append(f"threads: {threads} per block > {m.max_threads_per_block}")
    if p.shared_bytes > m.smem_bytes_per_block:
        reasons.append(f"shared memory: {p.shared_bytes} bytes per block (with {p.pipeline_stages} pipeline "
                       f"stages) > {m.smem_bytes_per_block} on {m.name}")
    # Registers: fragments spread over the block's threads, locals per thread, ~32 for addressing.
    # Above the per-thread limit the compiler spills to local memory: up to 1.5x the limit is
    # modelled as a slowdown (the spilled share of the fragments is re-read every round), beyond
    # that the configuration is dropped.
    need = 32 + math.ceil(p.fragment_bytes / max(threads, 1) / 4) + math.ceil(p.local_bytes / 4)
    if p.lowered_local_bytes:  # the lowered kernel's per-thread arrays (what the fragments became)
        need = 32 + math.ceil(p.lowered_local_bytes / 4)
    need = int(math.ceil(need / 8) * 8)
    if need > 1.5 * m.max_regs_per_thread:
        reasons.append(f"registers: ~{need} per thread (fragments {p.fragment_bytes} bytes over {threads} threads) "
                       f"> 1.5 x {m.max_regs_per_thread} (would spill more than a third)")
    ws = p.warp_specialized and m.sm_version >= 90
    cap = m.max_regs_per_thread
    if ws:
        # setmaxnreg gives the consumers what the 128-thread producer warpgroup leaves (one block per
        # SM); below two consumer warpgroups there is no redistribution.
        cap = (min(240, (m.regs_per_sm - 128 * (40 if threads <= 256 else 24)) // threads // 8 * 8)
               if threads >= 256 else min(m.max_regs_per_thread, m.regs_per_sm // (threads + 128) // 8 * 8))
    regs = min(need, cap)
    spill = max(0.0, need - regs) / max(need, 1)
    if reasons:
        return _nofit(p, m, reasons, registers_per_thread=need)

    limits = {"blocks": m.max_blocks_per_sm, "threads": m.max_threads_per_sm // max(threads, 1),
              "registers": m.regs_per_sm // max(regs * warps * 32, 1)}
    if p.shared_bytes:
        limits["shared memory"] = m.smem_bytes_per_sm // (p.shared_bytes + 1024)
    b = max(0, min(limits.values()))
    limit_name = min(limits, key=limits.get)
    if b == 0:
        return _nofit(p, m, [f"{limit_name}: not even one block fits on an SM"], registers_per_thread=regs)
    if ws:
        b, limit_name = 1, "warp specialization (one block per SM)"
    b = min(b, max(1, math.ceil(p.num_blocks / m.sm_count)))   # more slots than blocks do not help

    # Per-block work.
    per_sm_fp32 = m.fp32_flops / m.sm_count
    per_sm_sfu = m.sfu_ops / m.sm_count
    t_tensor, smem_bytes = 0.0, p.shared_read_bytes
    for g in p.gemms:
        wgmma = m.sm_version >= 90 and warps % 4 == 0 and g.M % 64 == 0
        # sm_90 without warp specialization: wgmma fed by cp.async pipelines reaches about 0.65 of
        # the peak (the measured cp form ran 0.78-0.87x the warp-specialized one), mma.sync 0.6.
        rate = m.tensor_rate(g.dtype) / m.sm_count * (1.0 if m.sm_version < 90 or ws else 0.65 if wgmma else 0.6)
        t_tensor += 2.0 * g.M * g.N * g.K * g.count / rate
        wm, wn = _warp_split(g.M, g.N, warps, wgmma)
        eb = _bits(g.dtype) / 8
        # each warp (group) reads its rows of A and its columns of B: replication across the grid
        a_rep = (wn - 1) * g.M * g.K * eb if g.a_scope in ("shared", "shared.dyn") else 0.0
        b_rep = (wm - 1) * g.N * g.K * eb if g.b_scope in ("shared", "shared.dyn") else 0.0
        smem_bytes += (a_rep + b_rep) * g.count
    t_smem = smem_bytes / m.smem_bytes_per_s_per_sm
    t_vec = p.vector_flops / per_sm_fp32 * 2.0      # vector_flops counts single ops; FMA peak counts 2
    t_sfu = p.transcendental_ops / per_sm_sfu
    t_mem = p.global_bytes / (m.l2_bytes_per_s / m.sm_count)
    rounds = max(1.0, p.pipeline_iters)
    stages = max(1, p.pipeline_stages)
    L = m.dram_latency_s

    def ws_block_time():
        # Warp-specialized: the producer keeps stages - 1 rounds of loads in flight (a wgmma group left
        # in flight holds one more), so a round lasts at least a memory round trip over that depth
        # plus the mbarrier hand-off; the consumers' tensor work runs at the efficiency one or two
        # warpgroups reach; spilled accumulators cost every round.
        eff = m.ws_tensor_efficiency[min(len(m.ws_tensor_efficiency), max(1, threads // 128)) - 1]
        compute = (max(t_tensor / eff, t_smem) + t_vec + t_sfu) / rounds * (1.0 + 20.0 * spill)
        memory = t_mem / rounds
        latency = L / max(1, stages - 1) + m.ws_round_overhead_s
        r = max(compute, memory, latency)
        return rounds * r + L, {"compute": rounds * compute, "memory": rounds * memory, "latency": rounds * latency}

    def block_time(bres):
        if ws:
            return ws_block_time()
        # one SM running `bres` blocks side by side; a tensor core needs 4 warps (one per sub-partition)
        sub = min(1.0, bres * warps / 4.0)
        compute = bres * (max(t_tensor / sub, t_smem) + t_vec + t_sfu) / rounds * (1.0 + 2.0 * spill)
        memory = bres * t_mem / rounds
        # With s stages a load is issued s - 1 rounds before its use, so a round cannot be shorter
        # than round trip / (s - 1); without pipelining a block waits for its load, then computes
        # (other resident blocks fill that time: they appear in `compute` and `memory`).
        if stages > 1:
            latency = L / (stages - 1)
        else:
            latency = L + (t_tensor + t_vec + t_sfu + t_mem) / rounds
        r = max(compute, memory, latency)
        return rounds * r + L, {"compute": rounds * compute, "memory": rounds * memory, "latency": rounds * latency}

    slots = m.sm_count * b
    full, rem = divmod(p.num_blocks, slots)
    t_full, terms = block_time(b)
    t_sm = full * t_full
    terms = {k: v * full for k, v in terms.items()}
    if rem:
        b_tail = math.ceil(rem / m.sm_count)
        t_tail, tail_terms = block_time(b_tail)
        # one wave (or the last one): its slowest block decides, not the average block
        skew = p.imbalance if full == 0 else 1.0
        t_sm += t_tail * skew
        for k in terms:
            terms[k] += tail_terms[k] * skew
    ideal = p.num_blocks / slots * t_full
    dram, requested = _dram_bytes(p, m.l2_bytes, slots)
    t_dram = dram / m.dram_bytes_per_s
    terms["memory"] = max(terms["memory"], t_dram)
    total = m.launch_overhead_s + max(t_sm, t_dram)
    waves = p.num_blocks / slots
    eff = p.num_blocks / (math.ceil(waves) * slots) if p.num_blocks else 0.0
    loss = t_sm / ideal if ideal > 0 and t_dram < t_sm else 1.0
    bound = "memory" if t_dram >= t_sm else _classify(terms, loss)
    return Estimate(kernel=p.name, machine=m.name, target=m.target, time_s=total, bound=bound,
                    compute_s=terms["compute"], memory_s=terms["memory"], latency_s=terms["latency"],
                    overhead_s=m.launch_overhead_s, flops=p.total("tensor_flops") + p.total("vector_flops"),
                    bytes=requested, dram_bytes=dram, num_blocks=p.num_blocks, threads=threads, blocks_per_unit=b,
                    occupancy=min(1.0, b * threads / m.max_threads_per_sm), occupancy_limit=limit_name, waves=waves,
                    wave_efficiency=eff, pipeline_stages=stages, shared_bytes=p.shared_bytes,
                    registers_per_thread=need,
                    details={"spilled_fraction": spill, "t_tensor_block": t_tensor, "t_smem_block": t_smem, "t_vector_block": t_vec,
                             "t_sfu_block": t_sfu, "t_l2_block": t_mem, "t_dram": t_dram, "quantisation": loss})


# ---- cpu ----------------------------------------------------------------------------------------
def _cpu(p: KernelProfile, m: CpuMachine) -> Estimate:
    # No capacity limit: the cpu target puts block buffers over 128 KiB on the heap (docs/TARGET_CPU.md).
    lanes = m.vector_bits // 32
    peak = m.fp32_flops_per_core()
    cache_bw = m.l2_bytes_per_clock * m.clock_hz
    t_gemm, calls, k_chunks = 0.0, 0.0, 0
    mr, nv_max = 6, (4 if m.vector_bits == 512 else 2)
    for g in p.gemms:
        # register-blocked micro-kernel: MR rows x up to NV vectors of C. A row tail wastes the missing
        # rows, the last partial vector its missing lanes; fewer than 8 accumulators (2 FMA pipes x 4
        # cycles of latency) leave the pipes idle; the k loop has a short head.
        nv = min(nv_max, math.ceil(g.N / lanes))
        # k runs in chunks (tl/cpu/gemm.h): packed operands take at most 128 KiB per chunk (B is
        # packed into NR-wide panels unless fp32 whole vectors feed fewer than 96 rows of C; A is
        # read in place when fp32), and a chunk's B strip at most 3/4 of L1d. Each chunk is one pass
        # over the C tile (its loads and stores) with its own loop head.
        nr = nv_max * lanes
        direct_b = g.dtype == "float32" and g.N % lanes == 0 and g.M < 96
        per_k = (0 if g.dtype == "float32" else g.M) + (0 if direct_b else math.ceil(g.N / nr) * nr)
        kc = g.K if per_k == 0 else max(1, min(g.K, (128 << 10) // (per_k * 4)))
        kc = min(kc, max(8, (m.l1d_bytes * 3 // 4) // (nr * 4)))
        chunks = math.ceil(g.K / kc)
        eff = ((g.M / (math.ceil(g.M / mr) * mr)) * (g.N / (math.ceil(g.N / lanes) * lanes))
               * min(1.0, min(mr, g.M) * nv / 8.0) * (g.K / (g.K + 4.0 * chunks)))
        bf16 = "bfloat16" in g.dtype and m.vector_bits == 512
        rate = peak * (2.0 if bf16 else 1.0) * eff
        eb = _bits(g.dtype) / 8
        operand = (g.M * g.K + g.K * g.N) * eb
        packed = operand if g.dtype != "float32" else 0.0     # other dtypes are converted while packing
        c_traffic = g.M * g.N * 4 * 2 * chunks
        work = operand + c_traffic + packed
        # the call's working set streams from L2 when it fits half of it (the rest holds the block's
        # other tiles, the next panels and the stack: BLIS sizes its blocks the same way), else from L3
        bw = cache_bw if work <= m.l2_bytes / 2 else m.core_bytes_per_s * 2
        t_gemm += g.count * (2.0 * g.M * g.N * g.K / rate + work / bw + m.gemm_call_overhead_s)
        calls += g.count
        k_chunks = max(k_chunks, chunks)
    t_vec = p.vector_flops / (m.clock_hz * lanes) + p.transcendental_ops * 10.0 / (m.clock_hz * lanes)
    in_l3 = p.global_buffer_bytes <= m.l3_bytes
    core_bw = m.core_bytes_per_s * (2.5 if in_l3 else 1.0)
    t_mem = p.global_bytes / core_bw + (p.shared_read_bytes / cache_bw)
    t_over = m.block_overhead_s
    t_block = t_gemm + t_vec + t_mem + t_over
    full, rem = divmod(p.num_blocks, m.cores)
    waves_n = full + (1 if rem else 0)
    t_run = waves_n * t_block * (p.imbalance if waves_n == 1 else 1.0)
    dram, requested = _dram_bytes(p, m.l3_bytes, m.cores)
    t_dram = dram / m.dram_bytes_per_s
    total = m.launch_overhead_s + max(t_run, t_dram)
    ideal = p.num_blocks / m.cores * t_block
    loss = t_run / ideal if ideal > 0 else 1.0
    terms = {"compute": waves_n * (t_gemm + t_vec), "memory": max(waves_n * t_mem, t_dram), "latency": waves_n * t_over}
    bound = "memory" if t_dram >= t_run else _classify(terms, loss)
    eff_w = p.num_blocks / (waves_n * m.cores) if waves_n else 0.0
    return Estimate(kernel=p.name, machine=m.name, target=m.target, time_s=total, bound=bound,
                    compute_s=terms["compute"], memory_s=terms["memory"], latency_s=terms["latency"],
                    overhead_s=m.launch_overhead_s, flops=p.total("tensor_flops") + p.total("vector_flops"),
                    bytes=requested, dram_bytes=dram, num_blocks=p.num_blocks, threads=p.threads, blocks_per_unit=1,
                    occupancy=min(1.0, p.num_blocks / m.cores), occupancy_limit="one block per core",
                    waves=p.num_blocks / m.cores, wave_efficiency=eff_w, pipeline_stages=p.pipeline_stages,
                    shared_bytes=p.shared_bytes,
                    details={"t_gemm_block": t_gemm, "t_vector_block": t_vec, "t_memory_block": t_mem,
                             "gemm_calls_block": calls, "gemm_k_chunks": k_chunks, "t_dram": t_dram,
                             "quantisation": loss})


# ---- ascend -------------------------------------------------------------------------------------
_GM = "global"


def _ascend_path(src, dst):
    s = "GM" if src == _GM else src
    d = "GM" if dst == _GM else dst
    return f"{s}->{d}"


def _ascend(p: KernelProfile, m: AscendMachine) -> Estimate:
    reasons = []
    for scope, cap in m.mem_bytes.items():
        used = p.scope_bytes.get(scope, 0)
        if used > cap:
            reasons.append(f"{scope}: {used} bytes per core (with {p.pipeline_stages} pipeline stages) > {cap}")
    if reasons:
        return _nofit(p, m, reasons)
    clk = m.clock_hz
    # Pipes of one logical block (one AIC + its AIVs); a copy costs its start latency + bytes / bandwidth.
    pipes = {"MTE2": 0.0, "MTE1": 0.0, "M": 0.0, "FIX": 0.0, "V": 0.0, "MTE3": 0.0}
    which = {"GM->L1": "MTE2", "GM->UB": "MTE2", "UB->GM": "MTE3", "L0C->GM": "FIX", "L1->L0A": "MTE1",
             "L1->L0B": "MTE1", "UB->UB": "V"}
    for path_key, nbytes in p.copy_bytes_by_path.items():
        src, dst = path_key.split("->")
        path = _ascend_path(src, dst)
        count = p.copy_count_by_path.get(path_key, 0.0)
        gib = m.copy_gib_per_s.get(path)
        if not gib:
            continue
        t = count * m.copy_start_cycles.get(path, 0.0) / clk + nbytes / (gib * (1 << 30))
        pipes[which.get(path, "MTE2")] += t
    for g in p.gemms:
        bits = _bits(g.dtype)
        k0 = 256 // max(bits, 1) if bits <= 16 else 8
        frac = m.mmad_cycles_per_fractal.get(bits, m.mmad_cycles_per_fractal[16])
        if g.a_scope in ("L0A", "L0B", "L0C") or g.b_scope in ("L0A", "L0B"):   # one mma instruction
            cyc = m.mmad_startup_cycles + math.ceil(g.M / 16) * math.ceil(g.K / k0) * math.ceil(g.N / 16) * frac
        else:   # gemm_v0 / T.gemm at tile level: its K chunks each reload L0 (counted here, not as copies)
            chunks = max(1, math.ceil(g.K / m.gemm_v0_k_chunk))
            kc = min(g.K, m.gemm_v0_k_chunk)
            cyc = chunks * (m.mmad_startup_cycles + math.ceil(g.M / 16) * math.ceil(kc / k0) * math.ceil(g.N / 16)
                            * frac)
            eb = bits / 8
            pipes["MTE1"] += g.count * (m.copy_seconds("L1->L0A", g.M * g.K * eb)
                                        + m.copy_seconds("L1->L0B", g.K * g.N * eb))
            if g.b_scope not in ("L0C",):
                pass
        pipes["M"] += g.count * cyc / clk
    # Expert form: the program already describes one vector sub-core (vid); else the vector work of
    # the block is shared by its vector cores.
    vec_cores = 1 if p.vector_lanes else max(1, m.vector_cores // max(m.cube_cores, 1))
    for (name, bits), elems in p.vector_by_op.items():
        calls = p.vector_calls_by_op.get((name, bits), 0.0)
        startup, s16, s32 = m.vector_costs.get(name, m.default_vector_cost)
        slope = s16 if bits <= 16 else s32
        repeats = elems * bits / 8 / m.vector_repeat_bytes
        pipes["V"] += (calls * startup + repeats * slope) / clk / vec_cores
    stages = max(1, p.pipeline_stages)
    busiest = max(pipes.values())
    serial = sum(pipes.values())
    # Double buffering lets the pipes overlap; without it each step waits for the previous pipe.
    overlap = 1.0 - 1.0 / stages
    t_block = busiest + (1.0 - overlap) * (serial - busiest) + m.block_launch_cycles / clk
    units = m.cube_cores
    full, rem = divmod(p.num_blocks, units)
    waves_n = full + (1 if rem else 0)
    # a single wave (the usual Ascend grid: one block per core walking its tiles) lasts as long as
    # its busiest core
    t_run = waves_n * t_block * (p.imbalance if waves_n == 1 else 1.0)
    dram, requested = _dram_bytes(p, m.l2_bytes, m.cube_cores)
    t_hbm = max(dram / m.hbm_bytes_per_s, requested / m.l2_bytes_per_s)
    total = m.launch_overhead_s + max(t_run, t_hbm)
    ideal = p.num_blocks / units * t_block
    loss = t_run / ideal if ideal > 0 else 1.0
    compute = waves_n * max(pipes["M"], pipes["V"])
    memory = max(waves_n * max(pipes["MTE2"], pipes["MTE3"], pipes["FIX"], pipes["MTE1"]), t_hbm)
    latency = waves_n * ((1.0 - overlap) * (serial - busiest) + m.block_launch_cycles / clk)
    terms = {"compute": compute, "memory": memory, "latency": latency}
    bound = "memory" if t_hbm >= t_run else _classify(terms, loss)
    return Estimate(kernel=p.name, machine=m.name, target=m.target, time_s=total, bound=bound, compute_s=compute,
                    memory_s=memory, latency_s=latency, overhead_s=m.launch_overhead_s,
                    flops=p.total("tensor_flops") + p.total("vector_flops"), bytes=requested, dram_bytes=dram,
                    num_blocks=p.num_blocks, threads=p.threads, blocks_per_unit=1,
                    occupancy=min(1.0, p.num_blocks / units), occupancy_limit="one block per AI core",
                    waves=p.num_blocks / units, wave_efficiency=p.num_blocks / (waves_n * units) if waves_n else 0.0,
                    pipeline_stages=stages, shared_bytes=p.scope_bytes.get("L1", 0),
                    details={**{f"pipe_{k}_block": v for k, v in pipes.items()}, "t_hbm": t_hbm,
                             "quantisation": loss, "imbalance": p.imbalance})
