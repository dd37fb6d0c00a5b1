"""Flash-attention forward against cuDNN at several sequence lengths with the same total work
(B * S constant), to test the Nsight Compute reading of docs/PERFORMANCE.md ("What limits the
remaining gaps"): if the gap to cuDNN is a fixed cost per CTA (each of our non-persistent CTAs fills
its pipeline and stores its output, cuDNN's persistent CTAs overlap that with the previous tile),
its share falls as S grows, since a CTA then runs S / block_N KV iterations for the same fixed cost.

    python3 bench/gpu_flash_seqlen.py [--rounds 3] [--persistent]

--persistent adds the persistent form (TL_ENABLE_PERSISTENT_FLASH: one CTA per SM, the next tile's
Q, K and V loaded under the current tile's last GEMM) timed in the same rounds.
"""
import argparse
import statistics

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from gpu_common import TorchKernel, bench, record, rel_err

import cuda_kernels as K

H, D = 16, 128
SHAPES = [(32, 1024), (16, 2048), (8, 4096), (4, 8192), (2, 16384)]  # (batch, seq_len): B * S = 32768


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--persistent", action="store_true")
    args = ap.parse_args()
    for causal in (False, True):
        for B, S in SHAPES:
            torch.manual_seed(S)
            q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.float16) for _ in range(3))
            qt, kt, vt = (x.transpose(1, 2).contiguous() for x in (q, k, v))
            o = torch.empty_like(q)

            def cudnn():
                with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                    return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
            ref = cudnn().transpose(1, 2)
            src = K.flashattn(B, H, S, D, causal, block_M=128, block_N=128, num_stages=2, threads=256)
            forms = {"default": TorchKernel(src)}
            if args.persistent:
                forms["persistent"] = TorchKernel(src, {"tl.enable_persistent_flash": True})
            errs = {}
            for name, ours in forms.items():
                o.zero_()
                ours(q, k, v, o)
                torch.cuda.synchronize()
                errs[name] = rel_err(o, ref)
            ratios = {name: [] for name in forms}
            times = {}
            for _ in range(args.rounds):
                t_ref = bench(cudnn)
                for name, ours in forms.items():
                    times[name] = bench(lambda: ours(q, k, v, o))
                    ratios[name].append(t_ref / times[name])
            flops = 4.0 * B * H * S * S * D * (0.5 if causal else 1.0)
            for name in forms:
                t_ours, med = times[name], statistics.median(ratios[name])
                print(f"flash {name} causal={causal} B{B} S{S}: {t_ours:.3f} ms ({flops / t_ours / 1e9:.0f} TFLOPS), "
                      f"cuDNN {t_ref:.3f} ms; x cuDNN median {med:.3f} {[round(r, 3) for r in ratios[name]]}, "
                      f"tiles {B * H * S // 128}, KV iterations per tile {S // 128}, rel err vs cuDNN {errs[name]:.1e}",
                      flush=True)
                record(bench="flash_seqlen", form=name, causal=causal, batch=B, seq_len=S, ratios=ratios[name],
                       ours_ms=t_ours, cudnn_ms=t_ref, rel_err=errs[name])


if __name__ == "__main__":
    main()
