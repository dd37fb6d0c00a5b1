"""docs/COMPATIBILITY.md stays current: every name it marks *works* or *differs* exists."""
import importlib
import os
import re

import pytest

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "COMPATIBILITY.md")
ROW = re.compile(r"^\|\s*`([A-Za-z_][\w.]*)`\s*\|\s*(works|differs|not implemented)\s*\|")


def _rows():
    rows = []
    with open(DOC) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                rows.append((m.group(1), m.group(2)))
    return rows


def resolve(dotted):
    """The object a documented name denotes (`T.x` is tilelang.language.x)."""
    if dotted.startswith("T."):
        dotted = "tilelang.language." + dotted[2:]
    parts = dotted.split(".")
    obj, i = None, len(parts)
    while i > 0:
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            i -= 1
    if obj is None:
        raise ImportError(dotted)
    for p in parts[i:]:
        obj = getattr(obj, p)
    return obj


ROWS = _rows()


def test_the_doc_lists_every_module():
    assert len(ROWS) > 250
    names = {n for n, _ in ROWS}
    for prefix in ("tilelang.jit.", "tilelang.autotuner.", "tilelang.profiler.", "tilelang.testing.",
                   "tilelang.utils.", "tilelang.carver.", "tilelang.tvm.", "tilelang.PassConfigKey.", "T."):
        assert any(n.startswith(prefix) for n in names), prefix


@pytest.mark.parametrize("name", [n for n, s in ROWS if s in ("works", "differs")])
def test_documented_name_exists(name):
    resolve(name)
