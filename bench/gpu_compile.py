"""Cold compile time: lower + codegen + NVRTC for representative kernels (no cache). Goal: <= 1 s."""
import time

from gpu_common import cuda, device_arch, record

import cuda_kernels as K


def main():
    kernels = {
        "gemm_f16_4096": K.matmul(4096, 4096, 4096, 128, 256, 64, threads=256, swizzle_panel=8),
        "flash_fwd_d128": K.flashattn(8, 16, 4096, 128, True, block_M=128, block_N=128, threads=256),
        "softmax": K.softmax(32768, 4096, block_M=1),
        "rms_norm": K.rms_norm_rows(32768, 4096),
    }
    arch = device_arch()
    for name, f in kernels.items():
        t = time.time()
        r = cuda.build_func(f.ir, arch, {}, [])
        total = time.time() - t
        print(f"compile {name}: {total:.3f} s (NVRTC {r['seconds']:.3f} s)", flush=True)
        record(bench="compile", kernel=name, seconds=total, nvrtc_seconds=r["seconds"], ok=total <= 1.0)


if __name__ == "__main__":
    main()
