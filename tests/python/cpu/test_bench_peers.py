"""The cpu benchmark's guards against flattering peers (bench/common.py, issue 17): a process with
OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE set re-executes itself without them before OpenBLAS loads, the
peer's kernel is recorded, and a ratio against a peer on an older core type than the CPU is refused."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import common  # noqa: E402  (imported from a test: never re-executes)


def test_refusal_rules():
    assert common.fp32_peer_refusal("avx2", "avx512") == "peer runs avx2 kernels, CPU supports avx512"
    assert common.fp32_peer_refusal("avx", "avx2") is not None
    assert common.fp32_peer_refusal("avx512", "avx512") is None
    assert common.fp32_peer_refusal("avx2", "avx2") is None
    assert "unknown" in common.fp32_peer_refusal("unknown", "avx2")
    amx = {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512_bf16", "amx_bf16", "amx_tile"}
    assert common.bf16_peer_refusal("brg_matmul:avx10_1_512_amx", amx) is None
    assert "AMX-BF16" in common.bf16_peer_refusal("brg_matmul:avx512_core_bf16", amx)
    assert common.bf16_peer_refusal("brg_matmul:avx512_core_bf16", amx - {"amx_bf16", "amx_tile"}) is None
    assert "AVX512-BF16" in common.bf16_peer_refusal("gemm:jit", {"avx512_bf16"})
    amx8 = {"avx512f", "avx512_vnni", "amx_int8", "amx_tile"}
    assert common.int8_peer_refusal("matmul:brg_matmul:avx10_1_512_amx", amx8) is None
    assert "AMX-INT8" in common.int8_peer_refusal("gemm_api", amx8)
    assert "AMX-INT8" in common.int8_peer_refusal("matmul:brg_matmul:avx512_core_vnni", amx8)
    assert common.int8_peer_refusal("matmul:brg_matmul:avx512_core_vnni", {"avx512f", "avx512_vnni"}) is None
    assert "VNNI" in common.int8_peer_refusal("gemm_api", {"avx512f", "avx512_vnni"})
    assert "unknown" in common.int8_peer_refusal(None, amx8)
    fp16 = {"avx512f", "avx512_fp16", "amx_bf16"}
    assert common.f16_peer_refusal("matmul:brg_matmul:avx10_1_512", fp16) is None
    assert common.f16_peer_refusal("matmul:brg_matmul:avx512_core_fp16", fp16) is None
    assert "AVX512-FP16" in common.f16_peer_refusal("matmul:brg_matmul:avx512_core", fp16)
    assert "AMX-FP16" in common.f16_peer_refusal("matmul:brg_matmul:avx10_1_512", fp16 | {"amx_fp16"})
    assert common.f16_peer_refusal("matmul:brg_matmul:avx512_core", {"avx512f"}) is None
    assert "does not run oneDNN" in common.f16_peer_refusal(None, {"avx512f"})
    assert common.OPENBLAS_CORE_LEVEL["haswell"] == "avx2" and common.OPENBLAS_CORE_LEVEL["skylakex"] == "avx512"


def test_cpu_vector_level_from_flags():
    assert common.cpu_vector_level({"avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512dq"}) == "avx512"
    assert common.cpu_vector_level({"avx2", "fma", "avx512f"}) == "avx2"
    assert common.cpu_vector_level({"avx"}) == "avx"
    assert common.cpu_vector_level(set()) == "sse"


PROBE = r"""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # re-executes this script without the peer-slowing variables
p = common.openblas_peer()
print("CORETYPE", os.environ.get("OPENBLAS_CORETYPE"), "REMOVED", os.environ.get("TL_BENCH_REMOVED_ENV"),
      "ARCH", p["architecture"], "LEVEL", p["level"], "CPU", common.cpu_vector_level())
"""


def test_benchmark_reexecutes_without_openblas_coretype():
    probe = os.path.join(ROOT, "bench", "_test_peer_env_probe.py")  # must live in bench/ to re-execute
    with open(probe, "w") as f:
        f.write(PROBE)
    try:
        env = dict(os.environ, OPENBLAS_CORETYPE="Sandybridge", OPENBLAS_L2_SIZE="262144")
        env.pop("TL_BENCH_NO_REEXEC", None)
        r = subprocess.run([sys.executable, probe], env=env, capture_output=True, text=True, timeout=120)
    finally:
        os.remove(probe)
    assert r.returncode == 0, r.stderr[-2000:]
    words = r.stdout.split()
    got = dict(zip(words[0::2], words[1::2]))
    assert got["CORETYPE"] == "None"
    assert got["REMOVED"] == "OPENBLAS_CORETYPE,OPENBLAS_L2_SIZE"
    assert got["ARCH"] != "unknown", "numpy's OpenBLAS kernel could not be read"
    assert got["ARCH"].lower() != "sandybridge"
    assert common.LEVEL_RANK[got["LEVEL"]] >= common.LEVEL_RANK["avx"]


def test_fma_peak_probe_runs_every_chain_and_lane():
    """The peak probe's flop count (2 x chains x lanes per iteration) is what its loop computes: after n
    steps acc = a^n (acc0 - f) + f with f = b / (1 - a) in every lane of every chain, so the checksum of
    all lanes pins both counts and n; the lanes follow the widest vector ISA the CPU reports."""
    import numpy as np
    lib = common.fma_probe()
    assert lib is not None, "the benchmark's FMA probe did not build (g++ missing?)"
    chains, lanes = lib.tl_bench_fma_num_chains(), lib.tl_bench_fma_lanes()
    flags = common.cpu_flags()
    assert lanes == (16 if "avx512f" in flags else 8 if "avx" in flags else 4)
    a, b = float(np.float32(0.999)), float(np.float32(1e-4))
    f = b / (1 - a)
    for n, x in ((1, 0.5), (777, 2.0), (3000, -1.25)):
        want = lanes * sum(a ** n * (x + i - f) + f for i in range(chains))
        got = lib.tl_bench_fma_chains(n, x)
        assert abs(got - want) <= 1e-4 * abs(want) + 1e-3, (n, x, got, want)
    peak = common.fp32_fma_peak(probes=2, seconds=0.01, lib=lib)
    assert peak > 0


def _fake_topology(root, cores):
    """A sysfs cpu tree: CPU i is a hyperthread of core cores[i] (one package)."""
    for cpu, core in enumerate(cores):
        d = root / f"cpu{cpu}" / "topology"
        d.mkdir(parents=True)
        (d / "physical_package_id").write_text("0\n")
        (d / "core_id").write_text(f"{core}\n")
    return str(root)


def test_placement_note_warns_when_threads_share_a_core(tmp_path):
    # CPUs 0/1 are the two hyperthreads of core 0, CPUs 2/3 those of core 5 (a VM's numbering)
    sysfs = _fake_topology(tmp_path, [0, 0, 5, 5])
    assert common.physical_cores([0, 1, 2, 3], sysfs) == {("0", "0"), ("0", "5")}
    note = common.placement_note(2, cpus=[0, 1], sysfs=sysfs)
    assert note.startswith("WARNING") and "1 physical core" in note and "CPUs 0,1" in note
    assert common.placement_note(2, cpus=[1, 2], sysfs=sysfs) is None  # two cores: fine
    assert common.placement_note(4, cpus=[0, 1, 2, 3], sysfs=sysfs).startswith("WARNING")  # 4 threads, 2 cores
    assert "share CPUs" in common.placement_note(2, cpus=[3], sysfs=sysfs)  # fewer CPUs than threads
    assert common.placement_note(1, cpus=[0], sysfs=sysfs) is None  # one thread: nothing to say
    assert common.placement_note(2, cpus=[0, 7], sysfs=sysfs) is None  # sysfs silent about CPU 7
