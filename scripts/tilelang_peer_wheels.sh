#!/usr/bin/env bash
# Prepare the peer for bench/gpu_vs_tilelang.py: TileLang 0.1.15 and its dependencies as wheels, split
# in two folders that each fit one device call with our tree (64 MiB), plus TileLang's MLA example read
# from a snapshot of its repository. Both folders are ignored (.git/info/exclude).
#
#   scripts/tilelang_peer_wheels.sh [/work/.mirror/tile-ai+tilelang/repo]
# then, on the GPU machine, two calls back to back (the second within the machine's warm time):
#   carry [.peer_a]: python3 -m pip install -q --no-index --no-deps --target build-gpu/tlsite .peer_a/*.whl
#                    && HOPPER_STEPS=build bash scripts/gpu_hopper.sh
#   carry [.peer_b]: python3 -m pip install -q --no-index --no-deps --target build-gpu/tlsite .peer_b/*.whl
#                    && python3 bench/gpu_vs_tilelang.py --driver --site $PWD/build-gpu/tlsite \
#                         --upstream-mla $PWD/.peer_b/example_mla_decode.py --out $OUT/vs_tilelang.json
# (build-gpu/ survives between calls on a warm machine; other ignored folders do not.)
set -euo pipefail
cd "$(dirname "$0")/.."
MIRROR=${1:-/work/.mirror/tile-ai+tilelang/repo}
for d in .peer_a .peer_b; do
  mkdir -p "$d"
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >> .git/info/exclude
done
dl() {
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$@"
}
dl .peer_a "tilelang==0.1.15"
dl .peer_b "apache-tvm-ffi>=0.1.11,<0.1.13" "torch-c-dlpack-ext" "z3-solver>=4.13.0,<4.15.5" "einops"
git --git-dir="$MIRROR" show HEAD:examples/deepseek_mla/example_mla_decode.py > .peer_b/example_mla_decode.py
du -sh .peer_a .peer_b
