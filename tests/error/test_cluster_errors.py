"""Thread-block clusters used wrongly: each mistake raises a typed error that names the cause (and
the kernel's line where the compiler finds it), never a crash or a silently different launch."""
import os

import pytest

import tilelang
import tilelang.language as T
from tilelang import _core

HERE = os.path.abspath(__file__)


def _kernel(cluster_dims=2, gx=8, body=None, **kw):
    @T.prim_func
    def main(A: T.Tensor((gx * 128,), "float32")):
        with T.Kernel(gx, threads=128, cluster_dims=cluster_dims, **kw) as bx:
            for i in T.Parallel(128):
                A[bx * 128 + i] = A[bx * 128 + i] + 1.0
            if body is not None:
                body()
    return main


def test_grid_not_a_multiple_of_the_cluster_size():
    with pytest.raises(ValueError, match=r"first grid extent \(6\) must be a multiple of the cluster size"):
        _kernel(cluster_dims=4, gx=6)


@pytest.mark.parametrize("dims", [3, (3, 1, 1), 16, "2", (2.0,), (2, 1, 1, 1)])
def test_bad_cluster_shapes(dims):
    with pytest.raises(ValueError, match="cluster"):
        _kernel(cluster_dims=dims)


@pytest.mark.parametrize("dims", [(1, 2), (2, 1, 2)])
def test_clusters_along_y_or_z_are_not_implemented(dims):
    with pytest.raises(NotImplementedError, match="cluster along the first"):
        _kernel(cluster_dims=dims)


def test_both_spellings_at_once():
    with pytest.raises(ValueError, match="not both"):
        _kernel(cluster_dims=2, cta_cluster=2)


def test_scale_cta_cluster_without_clusters():
    def body():
        with T.Scale("cta_cluster"):
            pass

    with pytest.raises(ValueError, match=r"T.Scale\(\"cta_cluster\"\) in a kernel without clusters"):
        _kernel(cluster_dims=None, body=body)


def test_cluster_sync_without_clusters():
    with pytest.raises(ValueError, match="T.cluster_sync\\(\\) in a kernel without clusters"):
        _kernel(cluster_dims=None, body=T.cluster_sync)


def test_cluster_sync_on_cpu_is_not_implemented():
    f = _kernel(cluster_dims=2, body=T.cluster_sync)
    with pytest.raises(NotImplementedError, match="T.cluster_sync on target cpu"):
        tilelang.compile(f, target="cpu")


def test_ascend_kernels_have_no_clusters():
    with pytest.raises(ValueError, match="Ascend kernels have none"):
        @T.prim_func
        def main(A: T.Tensor((128,), "float32")):
            with T.Kernel(4, is_npu=True, cluster_dims=2) as (cid, vid):
                pass


def test_clusters_before_sm_90_name_the_kernel_line():
    f = _kernel(cluster_dims=2)
    with pytest.raises(NotImplementedError, match=r"need sm_90 or later; the target is sm_80") as e:
        _core.cuda.lower_func(f.ir, "sm_80")
    assert HERE in str(e.value)
