"""Layouts for T.annotate_layout and the compatibility import paths."""
import pytest

import tilelang
import tilelang.language as T
from frontend_ir_eval import evaluate, tile_ops


def test_compatibility_paths():
    from tilelang.intrinsics import make_nz_layout, make_zn_layout  # noqa: F401
    from tilelang.language import GemmWarpPolicy
    from tilelang.layout import make_swizzled_layout  # noqa: F401
    from tilelang.primitives.gemm.base import GemmWarpPolicy as P
    assert P is GemmWarpPolicy is T.GemmWarpPolicy is tilelang.GemmWarpPolicy
    assert [p.name for p in P] == ["Square", "FullRow", "FullCol"]
    assert T.Layout is tilelang.layout.Layout and T.Fragment is tilelang.layout.Fragment


def test_layout_objects():
    layout = T.Layout((16, 64), lambda i, j: [i, j ^ (i % 8)])
    assert [v.name for v in layout.get_forward_vars()] == ["i", "j"]
    fwd = layout.get_forward_index()
    env = dict(zip(layout.get_forward_vars(), (5, 9)))
    assert [evaluate(e, env) for e in fwd] == [5, 9 ^ 5]
    assert [repr(e) for e in layout.map_forward_index([1, 2])] == ["1", "3"]
    frag = T.Fragment((64, 16), forward_thread_fn=lambda i, j: i % 32, forward_index_fn=lambda i, j: [i // 32, j])
    assert repr(frag.forward_thread) == "floormod(i, 32)" and frag.replicate == 1
    frag2 = T.Fragment((64,), forward_fn=lambda r: (r % 8, r // 8), replicate=2)
    assert repr(frag2.forward_thread) == "floormod(r, 8)" and [repr(e) for e in frag2.forward_index] == ["floordiv(r, 8)"]
    # TileLang's replicated form: forward_fn takes the copy index after the element index.
    frag3 = T.Fragment((4,), forward_fn=lambda i, rep: (rep, i), replicate=64)
    assert frag3.replicate_var.name == "rep" and repr(frag3.forward_thread) == "rep"
    assert [repr(e) for e in frag3.forward_index] == ["i"] and frag3.replicate == 64


def test_annotate_layout_forms():
    from tilelang.layout import make_swizzled_layout

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float16")):
        with T.Kernel(1, threads=128) as bx:
            S = T.alloc_shared((64, 64), "float16")
            S2 = T.alloc_shared((64, 64), "float16")
            F = T.alloc_fragment((64, 16), "float32")
            T.annotate_layout({
                S: make_swizzled_layout(S),
                S2: lambda i, j: [i, (j + i) % 64],
                F: T.Fragment((64, 16), forward_thread_fn=lambda i, j: i * 2 + j // 8,
                              forward_index_fn=lambda i, j: j % 8),
            })
            T.copy(A, S)
    ops = tile_ops(main, "annotate_layout")
    assert [o.args[0].buffer.name for o in ops] == ["S", "S2", "F"]
    assert ops[0].attrs == {"kind": "swizzled"}
    custom = ops[1].attrs
    assert custom["kind"] == "custom" and [v.name for v in custom["vars"]] == ["i", "j"]
    assert [repr(e) for e in custom["exprs"]] == ["i", "floormod(j + i, 64)"]
    frag = ops[2].attrs
    assert frag["kind"] == "fragment" and frag["replicate"] == 1
    assert repr(frag["thread"]) == "i * 2 + floordiv(j, 8)" and [repr(e) for e in frag["exprs"]] == ["floormod(j, 8)"]


def test_annotate_layout_errors():
    from tilelang.layout import make_swizzled_layout

    def build(make_map):
        @T.prim_func
        def main(A: T.Tensor((64, 64), "float16")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((64, 64), "float16")
                S2 = T.alloc_shared((64,), "float16")
                T.annotate_layout(make_map(S, S2))
    with pytest.raises(ValueError, match="was made for buffer 'S' but annotates 'S2'"):
        build(lambda S, S2: {S2: make_swizzled_layout(S)})
    with pytest.raises(ValueError, match="2-dimensional layout cannot describe the 1-dimensional buffer 'S2'"):
        build(lambda S, S2: {S2: T.Layout((8, 8), lambda i, j: [i * 8 + j])})
    with pytest.raises(TypeError, match="is not a layout"):
        build(lambda S, S2: {S: 42})


def test_annotate_address_errors():
    with pytest.raises(ValueError, match="negative offset -32 for buffer"):
        @T.prim_func
        def main(A: T.Tensor((64,), "float16")):
            with T.Kernel(1, is_npu=True) as (cid, vid):
                ub = T.alloc_ub((64,), "float16")
                T.annotate_address({ub: -32})


def test_unsupported_tilelang_names_raise_not_implemented():
    with pytest.raises(NotImplementedError, match=r"T.alloc_tmem is a hand-scheduled hardware primitive.*use T.gemm"):
        T.alloc_tmem  # noqa: B018
    with pytest.raises(NotImplementedError, match=r"T.launch_thread is a TVM .*T.Kernel"):
        T.launch_thread  # noqa: B018
    with pytest.raises(AttributeError):
        T.no_such_thing  # noqa: B018
