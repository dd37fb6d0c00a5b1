"""Prints the generated C++ of bench/cpu_flash.py's kernel (B1 H8 S2048 D128, not causal unless asked).
  python dump.py bfloat16|float32 BM BN [causal|full] [pass.config=value ...]
(the harness counts a causal kernel's steps as a full one's: compare its times, not its GFLOP/s)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cpu_flash  # noqa: E402
import tilelang  # noqa: E402

dtype, bm, bn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
causal = len(sys.argv) > 4 and sys.argv[4] == "causal"
configs = {"tl.cpu_num_threads": 1}
for kv in sys.argv[5:]:
    key, value = kv.split("=", 1)
    configs[key] = {"true": True, "false": False}.get(value.lower(), value)
kernel = tilelang.compile(cpu_flash.flashattn(1, 8, 2048, 128, causal, bm, bn, dtype), target="cpu",
                          pass_configs=configs)
print(kernel.get_kernel_source())
