"""Developer-mode kernels vs their Expert versions on the Ascend simulator (A2 model): each example in
examples/ascend/developer_*.py compiles both forms, checks both against numpy and returns the
simulated cycles. Prints a markdown table (the one in docs/PERFORMANCE.md, "Ascend Developer mode").

    PYTHONPATH=python .venv/bin/python bench/ascend_developer.py
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "ascend"))

import developer_flash_attention  # noqa: E402
import developer_gemm  # noqa: E402
import developer_gemm_bias_relu  # noqa: E402
import developer_layernorm  # noqa: E402
import developer_minicv  # noqa: E402
import developer_softmax  # noqa: E402

CLOCK_HZ = 1.85e9  # A2 (src/sim/model_a2.cc)

CASES = [
    ("GEMM fp16 1024x1024x1024", "gemm_double_buffer.py", lambda: developer_gemm.run(1024, 1024, 1024)),
    ("minicv (gemm -> exp) 1024x1024x256", "developer_minicv.py (minicv_expert)",
     lambda: developer_minicv.run(1024, 1024, 256)),
    ("GEMM + bias + ReLU 1024x1024x512", "developer_gemm_bias_relu.py (..._expert)",
     lambda: developer_gemm_bias_relu.run(1024, 1024, 512)),
    ("softmax fp32 128x1024", "softmax_tile.py", lambda: developer_softmax.run(128, 1024)),
    ("layer norm fp32 128x1024", "developer_layernorm.py (layernorm_expert)",
     lambda: developer_layernorm.run(128, 1024)),
    ("flash attention fwd BH=2 S=256 D=64", "flash_attention_fwd.py",
     lambda: developer_flash_attention.run(2, 256)),
]


def main():
    print("| kernel | Expert version | Developer (simulated) | Expert (simulated) | Developer / Expert |")
    print("|---|---|---|---|---|")
    for name, expert, fn in CASES:
        c = fn()
        d, e = c["developer"], c["expert"]
        print(f"| {name} | {expert} | {d / CLOCK_HZ * 1e3:.4f} ms ({d:.0f} cycles) | "
              f"{e / CLOCK_HZ * 1e3:.4f} ms ({e:.0f} cycles) | {d / e:.2f}x |")


if __name__ == "__main__":
    main()
