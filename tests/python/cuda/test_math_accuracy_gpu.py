"""On a GPU: the cuda column of docs/MATH_ACCURACY.md holds (bench/results/math_accuracy.json). Until
a GPU run is published there, the bounds are NVIDIA's documented maxima for the CUDA math library
(precise mode) and exactness of the T.ieee_* forms in both modes; a published run replaces them
(bench/math_accuracy.py --merge). Also: no non-finite result where the reference is finite."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import math_accuracy as MA  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.torch]
PUBLISHED = json.load(open(MA.RESULTS))
CASES = [(mode, name) for mode in ("precise", "fast") for name in MA.functions()]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    return MA.measure("cuda", points=1 << 16, workdir=str(tmp_path_factory.mktemp("math")), quiet=True)


@pytest.mark.parametrize("mode,name", CASES)
def test_cuda_within_published_bound(measured, mode, name):
    m = measured[mode][name]
    where = f"{name} ({mode}) worst at input {m['worst_input']}"
    if not (mode == "fast" and name in ("sin", "cos", "__sin", "__cos", "sigmoid", "exp", "__exp")):
        # --use_fast_math's __expf overflows before FLT_MAX (finite-math assumption); its sin/cos
        # are only specified on [-pi, pi].
        assert m["nonfinite"] == 0, f"{where}: {m['nonfinite']} non-finite results for finite references"
    bound = PUBLISHED.get("cuda", {}).get(mode, {}).get(name, {}).get("bound")
    if bound is None:
        pytest.skip(f"no published cuda bound for {name} ({mode}) yet: run bench/math_accuracy.py --target cuda")
    if "not_correctly_rounded" in bound:
        assert m["not_correctly_rounded"] == 0, f"{where}: {m['not_correctly_rounded']} not correctly rounded"
    elif "max_abs" in bound:
        assert m["max_abs"] <= bound["max_abs"], f"{where}: abs error {m['max_abs']:.3g} > {bound['max_abs']}"
    else:
        assert m["max_ulp"] <= bound["max_ulp"], f"{where}: {m['max_ulp']:.3f} ulp > {bound['max_ulp']}"
