"""ptxas' note that it serialized a kernel's wgmma instructions becomes a warning on stderr at build
time (src/target/cuda/backend.cc, wgmma_serialization_note in nvrtc.h): a T.print inside the pipelined
loop of a warp-specialized sm_90a GEMM puts a printf call in the wgmma pipeline (C7510). The same
kernel without it builds silently. Compile only (NVRTC), no GPU."""
import pytest

import cuda_util as cu
import tilelang
import tilelang.language as T


def ws_gemm(with_print, M=512, N=512, K=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"), C: T.Tensor((M, N), "float16"),
             n: T.int32):
        with T.Kernel(N // 128, M // 128, threads=256) as (bx, by):
            A_s = T.alloc_shared((128, 64), "float16")
            B_s = T.alloc_shared((64, 128), "float16")
            C_l = T.alloc_fragment((128, 128), "float32")
            T.clear(C_l)
            for k in T.Pipelined(K // 64, num_stages=3):
                T.copy(A[by * 128, k * 64], A_s)
                T.copy(B[k * 64, bx * 128], B_s)
                T.gemm(A_s, B_s, C_l)
                if with_print:
                    T.print(n)
            T.copy(C_l, C[by * 128, bx * 128])

    return main


@cu.requires_nvrtc
@pytest.mark.parametrize("with_print", [True, False])
def test_serialized_wgmma_is_reported(with_print, capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path))  # a fresh build, not a cached kernel
    k = tilelang.compile(ws_gemm(with_print), target="cuda -arch=sm_90a")
    assert "tl::setmaxnreg_inc" in k.get_kernel_source()  # warp-specialized
    err = capfd.readouterr().err
    if with_print:
        assert "ptxas serialized the wgmma instructions" in err and "C7510" in err, err
        assert "out of the pipelined loop" in err
    else:
        assert "serialized" not in err, err
