"""The fuzzing tier: random programs (fuzz_programs.py) compiled for cpu and ascend, called with
random valid arguments (compared with numpy within each output's error bound) and with hostile ones
(each a typed error, or the right result where the arguments are valid after all). The body runs in
a child process (fuzz_runner.py): a signal there fails the test with the seed to reproduce it.

CI runs fixed seeds within a minute on two cores. For longer runs:
    TL_FUZZ_SEEDS=1,2,3 TL_FUZZ_PROGRAMS=200 pytest tests/fuzz
and to replay one program: python tests/fuzz/fuzz_runner.py --target cpu --seed S --programs N."""
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

# target -> programs per seed in CI (cpu programs pay for the system compiler, ascend ones do not).
CI_PROGRAMS = {"cpu": 10, "ascend": 30}
SEEDS = [int(s) for s in os.environ.get("TL_FUZZ_SEEDS", "20260807").split(",") if s.strip()]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("target", list(CI_PROGRAMS))
def test_random_programs_and_arguments(target, seed, tmp_path):
    programs = int(os.environ.get("TL_FUZZ_PROGRAMS", CI_PROGRAMS[target]))
    env = dict(os.environ, TILELANG_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TILELANG_DISABLE_CACHE", None)
    r = subprocess.run([sys.executable, os.path.join(HERE, "fuzz_runner.py"), "--target", target, "--seed", str(seed),
                        "--programs", str(programs)], capture_output=True, text=True, env=env,
                       timeout=60 + 30 * programs)
    replay = f"python tests/fuzz/fuzz_runner.py --target {target} --seed {seed} --programs {programs}"
    assert r.returncode >= 0, f"the fuzz child died of signal {-r.returncode} (replay: {replay})\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert r.returncode == 0, f"the fuzz child failed (replay: {replay})\n{r.stderr[-3000:]}"
    results = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(results) == programs, r.stdout[-2000:] + r.stderr[-2000:]
    failures = [f"seed {x['seed']}: {x['status']}: {x['detail']}\n  {x['program']}" for x in results
                if x["status"] not in ("ok", "unsupported")]
    assert not failures, f"replay: {replay}\n" + "\n".join(failures)
    assert sum(x["status"] == "ok" for x in results) >= programs // 2, "most programs must compile and run"
