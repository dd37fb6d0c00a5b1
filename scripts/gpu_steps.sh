# Shared by scripts/gpu_hopper.sh and scripts/gpu_distributed.sh (sourced, not run): the step
# runner with a shrinking time limit and the extension build. The caller sets LOG, STEPS,
# DEADLINE, START_S and PY, and runs from the repository root.

has() { [[ " $STEPS " == *" $1 "* ]]; }

step() {  # name limit command...  (the limit shrinks to what is left of the deadline)
  local name=$1 limit=$2; shift 2
  local left=$((DEADLINE - ($(date +%s) - START_S)))
  if [ $left -lt 15 ]; then echo "=== [$name] skipped: no time left" | tee -a "$LOG"; return 1; fi
  [ "$limit" -gt "$left" ] && limit=$left
  local t0=$(date +%s)
  echo "=== [$name] (limit ${limit}s) $*" | tee -a "$LOG"
  timeout "$limit" "$@" >> "$LOG" 2>&1
  local rc=$?
  echo "=== [$name] rc=$rc ($(( $(date +%s) - t0 )) s)" | tee -a "$LOG"
  return $rc
}

# Builds the extension into build-gpu unless the one in python/tilelang already imports.
build_core() {
  if $PY -c 'import tilelang._core' >> "$LOG" 2>&1; then
    echo "=== [build] skipped: the extension in python/tilelang imports" | tee -a "$LOG"
    return 0
  fi
  rm -f python/tilelang/_core*.so
  [ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++ CC=/usr/bin/gcc
  local gen=""; command -v ninja >/dev/null && gen="-G Ninja"
  step cmake 60 cmake -S . -B build-gpu $gen -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE="$(command -v $PY)" \
    -Dnanobind_DIR="$($PY -m nanobind --cmake_dir)" -DTL_BUILD_TESTS=OFF || exit 1
  step build 300 cmake --build build-gpu -j "$(nproc)" --target _core || { tail -n 40 "$LOG"; exit 1; }
}
