"""bench/cpu_amx_blockloop/instrument_amx.py (the AMX block loop's phase profile and oracles, profile.sh):
its edits still find their anchors in include/tl/cpu/gemm.h, and the instrumented header builds the
profiling variant for an AMX target with and without the oracles (compile only: this machine need not
have AMX). A gemm.h whose anchor moved makes the script fail with the anchor's text."""
import os
import platform
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
HERE = os.path.join(ROOT, "bench", "cpu_amx_blockloop")
sys.path.insert(0, HERE)
import instrument_amx  # noqa: E402

GEMM_H = os.path.join(ROOT, "include", "tl", "cpu", "gemm.h")


def test_every_edit_applies_once_and_adds_the_counters():
    src = open(GEMM_H).read()
    out = instrument_amx.instrument(src)
    assert out.count("amx_prof[0] +=") == 1 and out.count("amx_prof[1] +=") == 2  # A: oracle path and pack
    assert out.count("amx_prof[2] +=") == 1 and out.count("amx_prof[3] += 1") == 1
    for oracle in ("ORACLE_A", "ORACLE_B", "ORACLE_C"):
        assert f"#ifdef {oracle}" in out
    # the edits add a few dozen lines, no more (nothing is rewritten wholesale)
    assert len(out.splitlines()) - len(src.splitlines()) < 60


def test_a_moved_anchor_is_reported():
    src = open(GEMM_H).read().replace("  amx_release();\n}\n#endif", "  amx_release();  // moved\n}\n#endif")
    with pytest.raises(SystemExit) as e:
        instrument_amx.instrument(src)
    assert "amx_release();" in str(e.value) and "found 0 times" in str(e.value)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or shutil.which("g++") is None,
                    reason="AMX code compiles for x86-64 with g++ only")
@pytest.mark.parametrize("flags", [[], ["-DINT8"], ["-DORACLE_A", "-DORACLE_B", "-DORACLE_C"],
                                   ["-DINT8", "-DORACLE_A", "-DORACLE_B", "-DORACLE_C"]])
def test_instrumented_header_builds_for_amx(tmp_path, flags):
    shutil.copytree(os.path.join(ROOT, "include"), tmp_path / "include")
    subprocess.check_call([sys.executable, os.path.join(HERE, "instrument_amx.py"), GEMM_H,
                           str(tmp_path / "include" / "tl" / "cpu" / "gemm.h")])
    subprocess.check_call(["g++", "-std=c++17", "-O0", "-fsyntax-only", "-march=sapphirerapids", *flags,
                           "-I", str(tmp_path / "include"), os.path.join(HERE, "variant_prof.cc")])
