#!/usr/bin/env bash
# The held-back suite of unmodified upstream TileLang programs (scripts/upstream_suite.txt) on a GPU
# machine: builds the Python extension, then runs the suite on cuda and, at the same time, on cpu
# (tensors on the host) with the machine's cores. The programs must be pre-extracted into
# .upstream_work (the GPU machine has no mirrors): carry it with the run.
#   OUT=... UPSTREAM_DEADLINE=500 scripts/gpu_upstream.sh
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
OUT=${OUT:-$PWD/gpu_upstream_out}
mkdir -p "$OUT"
BUILD=${GPU_CHECK_BUILD_DIR:-$PWD/build-gpu}
if [ -x /usr/bin/g++ ]; then export CXX=/usr/bin/g++ CC=/usr/bin/gcc; fi
GEN=""; command -v ninja >/dev/null && GEN="-G Ninja"
cmake -S . -B "$BUILD" $GEN -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v $PY)" \
  -Dnanobind_DIR="$($PY -m nanobind --cmake_dir)" -DTL_BUILD_TESTS=OFF > /dev/null
cmake --build "$BUILD" -j "${JOBS:-16}" --target _core > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
export PYTHONPATH=$PWD/python TILELANG_SOURCE_DIR=$PWD
WORK=${UPSTREAM_WORK:-$PWD/.upstream_work}
# Third-party packages that some programs compare with (fla-core: flash-linear-attention's Triton
# kernels, for linear_attention/example_linear_attn_fwd and gdn/example_cumsum). The GPU machine
# has no network: wheels downloaded beforehand into $WORK/wheels, e.g.
#   pip download --no-deps -d .upstream_work/wheels fla-core==0.3.2 einops
# are installed from there (fla-core 0.3.2 still takes the `head_first=` that example_cumsum
# passes; 0.6.0 raises on it).
if ls "$WORK"/wheels/*.whl > /dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps "$WORK"/wheels/*.whl > "$OUT/wheels.log" 2>&1 || tail -5 "$OUT/wheels.log"
fi
LEFT=${UPSTREAM_DEADLINE:-480}
DEVICES=${UPSTREAM_DEVICES:-cuda cpu}
for d in $DEVICES; do
  w=$WORK; jobs=${UPSTREAM_JOBS_CUDA:-6}
  if [ "$d" = cpu ]; then w=/tmp/uw_cpu; rm -rf "$w"; cp -r "$WORK" "$w"; jobs=${UPSTREAM_JOBS_CPU:-4}; fi  # own logs
  # UPSTREAM_TILELANG_SITE=folder: the cuda run uses the tilelang installed there (TileLang's own
  # wheel, scripts/tilelang_peer_wheels.sh) instead of this project: TileLang's count, same machine.
  peer=(); [ "$d" = cuda ] && [ -n "${UPSTREAM_TILELANG_SITE:-}" ] && peer=(--tilelang "$UPSTREAM_TILELANG_SITE")
  TILELANG_CACHE_DIR=/tmp/tl-cache-$d timeout "$LEFT" $PY scripts/upstream_suite.py --device "$d" --work "$w" "${peer[@]}" \
    -j "$jobs" --timeout "${UPSTREAM_TIMEOUT:-150}" --json "$OUT/upstream_$d.json" > "$OUT/upstream_$d.txt" 2>&1 &
done
wait
for d in $DEVICES; do echo "== $d"; grep -v '^pass ' "$OUT/upstream_$d.txt" | cut -c1-220; done
