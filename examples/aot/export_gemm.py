"""Exports a GEMM kernel as a standalone library (docs/AOT.md): gemm.so + gemm.h in --out.

    python examples/aot/export_gemm.py --target cpu --out build/aot
    cmake -S examples/aot -B build/aot/build -DTL_AOT_DIR=$PWD/build/aot && cmake --build build/aot/build
    build/aot/build/aot_gemm 300

C[M, N] = A[M, K] @ B[K, N] with float16 A and B, float32 C, M dynamic (a run-time argument of the C entry)."""
import argparse
import os

import tilelang
import tilelang.language as T

N, K = 256, 128


def gemm_kernel(block_M=64, block_N=64, block_K=32):
    M = T.dynamic("M")

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return gemm


def cuda_target():
    """The visible GPU's architecture without the "a" suffix (sm_90, not sm_90a: no TMA, which the
    export does not cover), else sm_80; the library's PTX also runs on newer GPUs."""
    from tilelang import _core
    try:
        if _core.cuda_available() and _core.cuda.device_count() > 0:
            return "cuda -arch=" + _core.cuda.device_info(0)["arch"]
    except Exception:  # noqa: BLE001 - no usable device: the portable choice
        pass
    return "cuda -arch=sm_80"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", default="cpu", help='"cpu", "cuda" (the visible GPU\'s architecture, else sm_80) '
                                                    'or a cuda target such as "cuda -arch=sm_80"')
    ap.add_argument("--out", default=".", help="directory for gemm.so and gemm.h")
    args = ap.parse_args()
    target = cuda_target() if args.target == "cuda" else args.target
    os.makedirs(args.out, exist_ok=True)
    kernel = tilelang.compile(gemm_kernel(), target=target)
    header = kernel.export_library(os.path.join(args.out, "gemm.so"))
    print(f"wrote {os.path.join(args.out, 'gemm.so')} and {header} for target {target}")


if __name__ == "__main__":
    main()
