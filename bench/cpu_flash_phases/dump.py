"""Prints the generated C++ of bench/cpu_flash.py's kernel (B1 H8 S2048 D128, not causal).
  python dump.py bfloat16|float32 BM BN"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cpu_flash  # noqa: E402
import tilelang  # noqa: E402

dtype, bm, bn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
kernel = tilelang.compile(cpu_flash.flashattn(1, 8, 2048, 128, False, bm, bn, dtype), target="cpu",
                          pass_configs={"tl.cpu_num_threads": 1})
print(kernel.get_kernel_source())
