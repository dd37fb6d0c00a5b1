"""Differential tier of small random programs (tests/python/fuzz/random_programs.py): each program is
compiled for cuda sm_80 and sm_90a with NVRTC (compile only), run on the emulator of lowered cuda
IR and on cpu, and compared with numpy.

CI runs a fixed seed; TL_RANDOM_PROGRAMS=<count> and TL_RANDOM_SEED=<seed> run more, e.g.
  TL_RANDOM_PROGRAMS=300 TL_RANDOM_SEED=7 make test-random
A failing program is kept as a runnable file; the assertion message names it."""
import os
import sys
import tempfile

import numpy as np
import pytest

import tilelang
from random_programs import generate

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cuda"))
from cuda_util import EmuRunner  # noqa: E402

SEED = int(os.environ.get("TL_RANDOM_SEED", "2026"))
COUNT = int(os.environ.get("TL_RANDOM_PROGRAMS", "40"))
WORK = os.environ.get("TL_RANDOM_DIR") or tempfile.mkdtemp(prefix="tl-random-programs-")
PROGRAMS = generate(SEED, COUNT)


def _cuda():
    from tilelang import _core
    return _core.cuda


def _nvrtc():
    return _cuda().nvrtc_available()[0]


@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_random_program(prog):
    func = prog.load(WORK)
    rng = np.random.default_rng(abs(hash(prog.name)) % (2 ** 32))
    arrays = prog.inputs(rng)
    # cpu
    kernel = tilelang.compile(func, target="cpu")
    outs = [np.array(a, copy=True) for a in arrays]
    kernel(*outs)
    prog.check(outs[-1], arrays[:-1], "cpu")
    # cuda: NVRTC for both architectures, then the lowered program on the emulator.
    if _nvrtc():
        for arch in ("sm_80", "sm_90a"):
            r = _cuda().build_func(func.ir, arch, {}, [])
            assert r["cubin"][:4] == b"\x7fELF", prog.describe()
    emu = EmuRunner(func)
    outs = emu(*[np.array(a, copy=True) for a in arrays])
    assert emu.report["races"] == [], (emu.report["races"], prog.describe())
    prog.check(outs[-1], arrays[:-1], "cuda emulator")
