#!/usr/bin/env bash
# Runs every example unchanged (examples/*.py and examples/*/example_*.py, except the Ascend ones):
# target "auto" picks cuda on a GPU machine. Four at a time; an example passes when it exits 0 and
# prints "Kernel Output Match!". Writes $OUT/examples.txt (one "ok"/"FAIL" line per example) and
# $OUT/examples_failed.log (the last lines of each failed one); exits 1 when one failed.
#
#   OUT=dir PYTHON=python3 scripts/run_examples.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_check_out}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
logs=$(mktemp -d)
: > "$OUT/examples.txt"
: > "$OUT/examples_failed.log"
run_one() {
  local f=$1 log
  log="$logs/$(echo "$f" | tr '/' '_').log"
  timeout 240 $PY "$f" > "$log" 2>&1
  local rc=$?
  if [ $rc -eq 0 ] && grep -q "Kernel Output Match!" "$log"; then
    echo "ok   $f" >> "$OUT/examples.txt"
  else
    echo "FAIL $f (rc=$rc: $(grep -v '^[[:space:]]*$' "$log" | tail -n 1 | cut -c1-110))" >> "$OUT/examples.txt"
    { echo "=== $f (rc=$rc)"; tail -n 40 "$log"; } >> "$OUT/examples_failed.log"
  fi
}
export -f run_one
export PY OUT logs
ls examples/*.py examples/*/example_*.py 2>/dev/null | grep -v '^examples/ascend/' | xargs -P 4 -I{} bash -c 'run_one {}'
sort -k2 -o "$OUT/examples.txt" "$OUT/examples.txt"
cat "$OUT/examples.txt"
rm -rf "$logs"
[ -s "$OUT/examples_failed.log" ] || rm -f "$OUT/examples_failed.log"
! grep -q '^FAIL' "$OUT/examples.txt"
