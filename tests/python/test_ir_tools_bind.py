"""The IR-tools bindings (src/bindings/ir_tools_bind.cc). Their behaviour is tested in C++
(tests/cpp/ir/*); here: the functions exist, and a parse error reaches Python as the typed
exception with file:line:col (that path needs no PrimFunc class on the Python side)."""
import pytest

from tilelang import _core


@pytest.mark.parametrize("name", ["parse_ir", "structural_equal", "structural_hash", "structural_diff", "canonical_text"])
def test_functions_are_exposed(name):
    assert callable(getattr(_core, name))
    assert getattr(_core, name).__doc__


def test_parse_error_is_a_tilelang_syntax_error_with_location():
    with pytest.raises(_core.TileLangSyntaxError, match=r"^k\.tir:2:10: undefined variable 'x'"):
        _core.parse_ir("func @f(A: global float32[4]) {\n  A[0] = x\n}\n", "k.tir")


def test_error_messages_with_odd_bytes_stay_valid_text():
    # The parser reports the position of a bad escape; the message must reach Python intact.
    with pytest.raises(_core.TileLangSyntaxError, match=r"^<text>:2:12: unknown escape"):
        _core.parse_ir('func @f() {\n  evaluate "caf\u00e9 \\q"\n}\n')
    with pytest.raises(_core.TileLangSyntaxError, match=r"unexpected character '\\xc3'"):
        _core.parse_ir("func @f() {\n  evaluate \u00e9\n}\n")
