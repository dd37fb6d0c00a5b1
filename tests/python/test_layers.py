"""scripts/check_layers.py: the include graph between the layers of src/ points down (docs/ARCHITECTURE.md,
"Layers"), and the check fails on a new wrong-way include, a stale allowlist entry and a directory in no
layer. The failure cases run on a small synthetic tree, not on src/."""
import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_check():
    spec = importlib.util.spec_from_file_location("check_layers", os.path.join(ROOT, "scripts", "check_layers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_src_has_no_wrong_way_include(capsys):
    check = load_check()
    assert check.main([]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "transform      -> op" in out
    assert not re.search(r"\d+\s+WRONG WAY", out), out


def test_layers_form_a_dag_with_ir_at_the_bottom():
    check = load_check()
    below = check.closure()
    for layer in check.LAYERS:
        if layer not in ("ir", "include/tl"):
            assert "ir" in below[layer], layer
    assert "sim" in below["target/ascend"]
    for layer in ("transform", "runtime", "target/cpu", "target/cuda"):
        assert "sim" not in below[layer], layer


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


@pytest.fixture
def fake_src(tmp_path, monkeypatch):
    check = load_check()
    src = tmp_path / "src"
    write(src, "ir/expr.h", "#pragma once\n")
    write(src, "arith/analyzer.cc", '#include "ir/expr.h"\n#include "arith/analyzer.h"\n')
    write(src, "op/copy.cc", '#include "arith/analyzer.h"\n')
    monkeypatch.setattr(check, "SRC", str(src))
    monkeypatch.setattr(check, "ALLOWLIST", set())
    return check, src


def test_downward_includes_pass(fake_src, capsys):
    check, _ = fake_src
    assert check.main(["--quiet"]) == 0


def test_new_wrong_way_include_fails(fake_src, capsys):
    check, src = fake_src
    write(src, "ir/verifier.cc", '#include "op/copy.h"\n')
    assert check.main(["--quiet"]) == 1
    err = capsys.readouterr().err
    assert "src/ir/verifier.cc -> op/copy.h: this include points up the layers" in err


def test_allowlisted_include_passes_and_stale_entry_fails(fake_src, capsys, monkeypatch):
    check, src = fake_src
    write(src, "ir/verifier.cc", '#include "op/copy.h"\n')
    monkeypatch.setattr(check, "ALLOWLIST", {"src/ir/verifier.cc -> op/copy.h"})
    assert check.main(["--quiet"]) == 0
    os.remove(src / "ir" / "verifier.cc")
    assert check.main(["--quiet"]) == 1
    assert "no longer occurs; delete it from ALLOWLIST" in capsys.readouterr().err


def test_directory_in_no_layer_fails(fake_src, capsys):
    check, src = fake_src
    write(src, "distributed/comm.cc", '#include "ir/expr.h"\n')
    assert check.main(["--quiet"]) == 1
    assert "src/distributed/comm.cc: not in any layer" in capsys.readouterr().err
