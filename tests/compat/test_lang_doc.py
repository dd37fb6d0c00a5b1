"""docs/COMPATIBILITY.md, section tilelang.language, stays true: every T.<name> marked works or
differs exists, every one marked not implemented raises NotImplementedError (naming it) on access,
and every name the language module exports is listed."""
import os
import re

import pytest

import tilelang.language as T

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "COMPATIBILITY.md")
ROW = re.compile(r"^\|\s*`T\.([A-Za-z_][\w]*)`\s*\|\s*(works|differs|not implemented)\s*\|")


def _rows():
    rows, inside = [], False
    with open(DOC) as f:
        for line in f:
            if line.startswith("## "):
                inside = line.strip() == "## tilelang.language"
            m = ROW.match(line) if inside else None
            if m:
                rows.append((m.group(1), m.group(2)))
    return rows


ROWS = _rows()


def test_the_section_is_there():
    assert len(ROWS) > 300
    assert len({n for n, _ in ROWS}) == len(ROWS), "a name is listed twice"


@pytest.mark.parametrize("name", [n for n, s in ROWS if s != "not implemented"])
def test_documented_name_exists(name):
    getattr(T, name)


@pytest.mark.parametrize("name", [n for n, s in ROWS if s == "not implemented"])
def test_not_implemented_name_says_so(name):
    with pytest.raises(NotImplementedError, match=rf"T\.{re.escape(name)} is .*; "):
        getattr(T, name)


# Module plumbing and names documented through a sibling row ("also ...").
_COVERED_ELSEWHERE = {
    "BufferLoad", "BufferRegion", "Macro", "PrimFunc", "TensorSpec", "Unroll", "Vectorized", "allocate", "atomic",
    "builtins", "context", "distributed", "dtypes", "eager", "kernel", "loops", "math", "npuir", "parser",
    "tile_ops", "unsupported", "to_dtype", "tir_compat",
    "get_block_bindings", "get_block_extent", "get_block_extents", "get_thread_bindings", "get_thread_extents",
    "loop_break", "alloc_L0", "alloc_L0A", "alloc_L0B", "alloc_L0C", "alloc_UB", "alloc_l0", "alloc_l0a", "alloc_l0b",
    "alloc_l0c", "alloc_l1", "alloc_ub", "ieee_fdiv", "ieee_fmaf", "ieee_fsqrt", "ieee_mul", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "bfloat16", "float32", "float64", "half", "double", "float8_e4m3",
    "wait_flag", "pipe_barrier", "barrier_all", "set_cross_flag", "wait_cross_flag", "sync_all",
}


def test_every_exported_name_is_documented():
    documented = {n for n, _ in ROWS}
    missing = [n for n in dir(T) if not n.startswith("_") and n not in documented and n not in _COVERED_ELSEWHERE]
    assert not missing, f"add these to docs/COMPATIBILITY.md: {missing}"
