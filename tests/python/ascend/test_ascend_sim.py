"""Simulator features seen from Python: kernel info, Chrome trace, printing, timing sanity."""
import json

import numpy as np

import tilelang
import tilelang.language as T
import gemm_double_buffer
import vector_add_expert


def compile_ascend(func, configs=None):
    return tilelang._core.ascend.compile(getattr(func, "ir", func), configs or {}, "ascend")


def test_info_reports_time_utilisation_memory_and_syncs():
    k = compile_ascend(vector_add_expert.vec_add.build(8192, 2048))
    info = k.info()
    assert info["peak_bytes.UB"] == 3 * 1024 * 2 and info["capacity_bytes.UB"] == 196608
    assert info["syncs_inserted"] == 0 and "simulated_ms" not in info
    a = np.ones(8192, np.float16)
    k.launch([a, a, np.zeros(8192, np.float16)])
    info = k.info()
    assert info["simulated_ms"] > 0 and info["cycles"] > 0 and info["blocks"] == 4
    assert 0 < info["util.AIV.MTE2"] <= 1 and 0 < info["util.AIV.V"] <= 1
    auto = compile_ascend(tilelang._core.ascend.strip_syncs(vector_add_expert.vec_add.build(8192, 2048).ir),
                          {"tl.ascend_auto_sync": True})
    assert auto.info()["syncs_inserted"] == 4


def test_chrome_trace(tmp_path, monkeypatch):
    path = tmp_path / "trace.json"
    monkeypatch.setenv("TL_ASCEND_TRACE", str(path))
    k = compile_ascend(gemm_double_buffer.matmul.build(256, 256, 256, core_num=2))
    a = np.ones((256, 256), np.float16)
    k.launch([a, a, np.zeros((256, 256), np.float16)])
    trace = json.loads(path.read_text())["traceEvents"]
    procs = {e["args"]["name"] for e in trace if e["name"] == "process_name"}
    assert {"core 0 AIC", "core 1 AIC", "core 0 AIV0"} <= procs
    threads = {e["args"]["name"] for e in trace if e["name"] == "thread_name"}
    assert {"MTE1", "MTE2", "M", "FIX", "V", "MTE3", "S"} <= threads
    ops = [e for e in trace if e["ph"] == "X"]
    assert any(e["name"] == "mma" and e["tid"] == 4 for e in ops)
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in ops)


def test_printf_and_dump_tensor(capfd):
    @T.prim_func
    def k(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, is_npu=True) as (cid, vid):
            a = T.alloc_ub((8,), "float32")
            with T.Scope("V"):
                T.copy(A[0], a)
                T.set_flag("mte2", "s", 0)
                T.wait_flag("mte2", "s", 0)
                if vid == 0:
                    T.printf("first=%f block=%d\n", a[0], cid)
                    T.dump_tensor(a, 1, 4)
    kern = compile_ascend(k)
    kern.launch([np.arange(8, dtype=np.float32) + 0.5])
    out = capfd.readouterr().out
    assert "first=0.500000 block=0" in out
    assert "0.5 1.5 2.5 3.5" in out and "4.5" not in out


def gemm_time(**kw):
    k = compile_ascend(gemm_double_buffer.matmul.build(512, 512, 1024, **kw))
    a = np.zeros((512, 1024), np.float16)
    b = np.zeros((1024, 512), np.float16)
    k.launch([a, b, np.zeros((512, 512), np.float16)])
    return k.info()["cycles"]


def test_more_cores_are_faster():
    t = [gemm_time(core_num=n) for n in (1, 2, 8)]
    assert t[0] > 1.8 * t[1] > 1.8 * 2 * t[2] * 0.9
