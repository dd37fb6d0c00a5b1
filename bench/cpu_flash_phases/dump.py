"""Prints the generated C++ of bench/cpu_flash.py's kernel (B1 H8 S2048 D128, not causal unless asked).
  python dump.py bfloat16|float32 BM BN [causal|full] [shape=B,H,S,D] [pass.config=value ...]
(the harness counts a causal kernel's steps as a full one's: compare its times, not its GFLOP/s; it
runs any shape with B*H*S*D = 8 * 2048 * 128 and S = 2048, e.g. shape=1,16,2048,64)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cpu_flash  # noqa: E402
import tilelang  # noqa: E402

dtype, bm, bn = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
causal = len(sys.argv) > 4 and sys.argv[4] == "causal"
configs = {"tl.cpu_num_threads": 1}
shape = (1, 8, 2048, 128)
for kv in sys.argv[5:]:
    key, value = kv.split("=", 1)
    if key == "shape":
        shape = tuple(int(x) for x in value.split(","))
        continue
    configs[key] = {"true": True, "false": False}.get(value.lower(), value)
if shape[0] * shape[1] * shape[2] * shape[3] != 8 * 2048 * 128 or shape[2] != 2048:
    sys.exit("dump.py: the harness needs B*H*S*D = 8 * 2048 * 128 and S = 2048, got shape " + str(shape))
kernel = tilelang.compile(cpu_flash.flashattn(*shape, causal, bm, bn, dtype), target="cpu",
                          pass_configs=configs)
print(kernel.get_kernel_source())
