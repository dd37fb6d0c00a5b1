"""Prints the GPU benchmark results (JSON lines written by bench/gpu_*.py) as one compact table,
with the goals of the cuda target."""
import json
import sys


def main(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    print(f"{'benchmark':44s} {'ours':>12s} {'baseline':>12s} {'ratio':>7s}  goal")
    for r in rows:
        b = r.get("bench")
        if b == "gemm":
            name = f"gemm {r['dtype']} {r['size']}^3"
            if not r.get("ok"):
                print(f"{name:44s} {'FAILED':>12s} {r['cublas_tflops']:9.0f} TF")
                continue
            goal = ">=0.6x cuBLAS" if r["size"] == 4096 else ""
            mark = "" if not goal else ("ok" if r["ratio"] >= 0.6 else "MISS")
            print(f"{name:44s} {r['tflops']:9.0f} TF {r['cublas_tflops']:9.0f} TF {r['ratio']:6.2f}x  {goal} {mark}"
                  f"  [{r['config']}]")
            for fam in ("wgmma", "mma"):
                if fam in r and not r["config"].startswith(fam):
                    x = r[fam]
                    print(f"{'  best ' + fam:44s} {x['tflops']:9.0f} TF {'':12s} {x['ratio']:6.2f}x  [{x['config']}]")
        elif b == "flash_fwd":
            name = f"flash fwd {'causal' if r['causal'] else 'full'} {r['shape']}"
            if not r.get("ok"):
                print(f"{name:44s} {'FAILED':>12s}")
                continue
            base = r.get("flash_tflops")
            ratio = r.get("ratio_vs_fa2")
            print(f"{name:44s} {r['tflops']:9.0f} TF {base or 0:9.0f} TF {ratio or 0:6.2f}x  >=0.8x FA2 "
                  f"{'ok' if ratio and ratio >= 0.8 else 'MISS'}"
                  + (f" (cuDNN {r['cudnn_tflops']:.0f} TF)" if "cudnn_tflops" in r else "") + f"  [{r['config']}]")
            for fam in ("wgmma", "mma"):
                if fam in r and not r["config"].startswith(fam):
                    x = r[fam]
                    print(f"{'  best ' + fam:44s} {x['tflops']:9.0f} TF {'':12s} {x['ratio_vs_fa2'] or 0:6.2f}x  "
                          f"[{x['config']}]")
            if "example" in r:
                x = r["example"]
                print(f"{'  examples/flash_attention':44s} {x['tflops']:9.0f} TF {'':12s} {x['ratio_vs_fa2'] or 0:6.2f}x")
        elif b == "memory":
            name = f"{r['kernel']} {r['shape']}"
            print(f"{name:44s} {r['gbs']:8.0f} GB/s {r['copy_gbs']:7.0f} GB/s {r['ratio']:6.2f}x  >=0.8x copy "
                  f"{'ok' if r['ratio'] >= 0.8 else 'MISS'}")
        elif b == "host_overhead":
            print(f"{'host overhead per call kernel(a, b, c)':44s} {r['us_per_call']:9.2f} us {r['torch_add_us']:9.2f} us "
                  f"{'':7s}  <=5 us {'ok' if r['us_per_call'] <= 5 else 'MISS'}")
            for key, what in (("us_per_call_out_idx", "  with out_idx (output allocated)"),
                              ("us_bare_launch", "  bare driver launch, slots prepared"),
                              ("us_launch_in_cpp", "  launch loop in C++ (no Python)")):
                if key in r:
                    print(f"{what:44s} {r[key]:9.2f} us")
        elif b == "compile":
            extra = ""
            if "first_call_seconds" in r:
                extra = f"  [first call {r['first_call_seconds'] * 1e3:.0f} ms, cache hit {r['cache_hit_seconds'] * 1e3:.1f} ms]"
            print(f"{'cold compile ' + r['kernel']:44s} {r['seconds']:10.3f} s {'':12s} {'':7s}  <=1 s "
                  f"{'ok' if r['seconds'] <= 1 else 'MISS'}{extra}")


if __name__ == "__main__":
    main(sys.argv[1])
