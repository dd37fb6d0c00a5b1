#!/usr/bin/env bash
# Wheel check (issue 18): `python -m build --wheel` on a fresh clone of this checkout's HEAD makes a
# wheel that works elsewhere. Steps, all under one temporary directory:
#
#   1. clone HEAD (committed work only) and build the wheel with `python -m build --wheel`, in a
#      throwaway venv that has only `build` (pip fetches scikit-build-core, nanobind, ... itself);
#   2. delete the clone and the build venv, so nothing can point back at them;
#   3. install the wheel into a fresh venv and, from another directory and with no environment
#      variable but PATH and a fresh HOME (so a fresh user cache directory): `import tilelang`, the
#      README quickstart (examples/quickstart.py) and float16 / bfloat16 / float32 kernels checked
#      against numpy on random inputs; the package must come from the venv and find its headers in
#      it; the extension must hold no path of the build directory.
#
# Takes 5-15 minutes on 2 cores (the whole C++ core is compiled; ccache helps when
# CMAKE_CXX_COMPILER_LAUNCHER=ccache is set), so it is not part of `make test` / CI; run it before a
# release or after changing pyproject.toml or the install() rules. docs/INSTALL.md.
#
#   scripts/check_wheel.sh                  # python3 from PATH
#   PYTHON=python3.12 scripts/check_wheel.sh  # a stable-ABI (abi3) wheel needs Python >= 3.12
#   KEEP=1 scripts/check_wheel.sh           # keep the temporary directory (the wheel is in dist/)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tl_check_wheel.XXXXXX")
cleanup() { if [ -z "${KEEP:-}" ]; then rm -rf "$TMP"; else echo "kept $TMP"; fi; }
trap cleanup EXIT
step() { echo "== $*"; }

step "clone HEAD ($(git rev-parse --short HEAD)) into $TMP/src"
git clone --quiet --no-hardlinks "$ROOT" "$TMP/src"
git -C "$TMP/src" checkout --quiet "$(git rev-parse HEAD)"

step "build the wheel (python -m build --wheel)"
"$PY" -m venv "$TMP/build-venv"
"$TMP/build-venv/bin/pip" install --quiet --disable-pip-version-check build
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
start=$(date +%s)
"$TMP/build-venv/bin/python" -m build --wheel --outdir "$TMP/dist" "$TMP/src" > "$TMP/build.log" 2>&1 ||
  { tail -40 "$TMP/build.log"; echo "check_wheel: the wheel build failed (log above)"; exit 1; }
WHEEL=$(ls "$TMP"/dist/*.whl)
echo "built $(basename "$WHEEL") in $(( $(date +%s) - start )) s"
case "$(basename "$WHEEL")" in
  *-abi3-*) echo "stable ABI wheel (one wheel for this and every later Python)" ;;
  *) echo "version-specific wheel (nanobind's stable ABI needs Python >= 3.12; this is $("$PY" -V))" ;;
esac

step "forget the build: delete the clone and the build venv"
rm -rf "$TMP/src" "$TMP/build-venv"

step "install into a fresh venv"
"$PY" -m venv "$TMP/venv"
"$TMP/venv/bin/pip" install --quiet --disable-pip-version-check "$WHEEL"
mkdir -p "$TMP/elsewhere" "$TMP/home"
cp "$ROOT/examples/quickstart.py" "$TMP/elsewhere/"
cat > "$TMP/elsewhere/check.py" <<'EOF'
import os
import subprocess
import sys

import ml_dtypes
import numpy as np

import tilelang
import tilelang.language as T

venv = sys.argv[1]
pkg = os.path.dirname(os.path.abspath(tilelang.__file__))
assert pkg.startswith(venv + os.sep), f"tilelang imported from {pkg}, not from the venv {venv}"
inc = tilelang._core.include_dir("tl/cpu/kernel.h")
assert inc == os.path.join(pkg, "include"), f"device headers from {inc}, not from the package"
assert os.path.isfile(os.path.join(inc, "tl", "common", "float_formats.h"))
core = tilelang._core.__file__
strings = subprocess.run(["grep", "-c", "tl_check_wheel", core], capture_output=True, text=True).stdout.strip()
assert strings == "0", f"the extension names the build directory ({strings} matches)"


def add(n, dtype):
    @T.prim_func
    def f(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(4, threads=32) as bx:
            for i in T.Parallel(n // 4):
                C[bx * (n // 4) + i] = A[bx * (n // 4) + i] * B[bx * (n // 4) + i] + A[bx * (n // 4) + i]
    return f


rng = np.random.default_rng(2026)
for dtype, np_type in (("float32", np.float32), ("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)):
    k = tilelang.compile(add(1024, dtype), out_idx=[2], target="cpu")
    a = rng.standard_normal(1024).astype(np_type)
    b = rng.standard_normal(1024).astype(np_type)
    # Reference in float64. The kernel computes in float32 and rounds on the store: each of its
    # roundings is at most half a unit in the last place of the format, relative to |a*b| + |a|.
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = a64 * b64 + a64
    got = k(a, b).astype(np.float64)
    ulp = {"float32": 2.0**-23, "float16": 2.0**-10, "bfloat16": 2.0**-7}[dtype]
    bound = 2 * ulp * (np.abs(a64 * b64) + np.abs(a64)) + 2.0**-24
    bad = np.abs(got - ref) > bound
    assert not bad.any(), f"{dtype}: {bad.sum()} elements off, first at {np.argmax(bad)}: {got[bad][:4]} vs {ref[bad][:4]}"
print(f"tilelang {tilelang.__version__} from {pkg}: cpu kernels OK")
EOF

step "run from another directory with no environment variables"
cd "$TMP/elsewhere"
run() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$TMP/home" "$@"; }
run "$TMP/venv/bin/python" -c "import tilelang; print('import tilelang OK', tilelang.__version__)"
run "$TMP/venv/bin/python" quickstart.py
run "$TMP/venv/bin/python" check.py "$TMP/venv"
cache=$(run "$TMP/venv/bin/python" -c "import tilelang.cache as c; print(c.cache_dir())")
case "$cache" in
  "$TMP/home/"*) echo "kernel cache in the user cache directory: $cache" ;;
  *) echo "check_wheel: kernel cache at $cache, expected under $TMP/home"; exit 1 ;;
esac
echo "check_wheel: OK ($(basename "$WHEEL"))"
