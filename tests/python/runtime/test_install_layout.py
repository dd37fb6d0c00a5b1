"""The installed-package layout (docs/INSTALL.md) without a pip build: the `tilelang` package with its
extension and its device headers in tilelang/include, copied away from the checkout, imports and runs a
cpu kernel from another directory with no PYTHONPATH to the checkout and no TILELANG_SOURCE_DIR /
TILELANG_INCLUDE_DIR; and the one version number (CMakeLists.txt, read by pyproject.toml) is what
tilelang reports and what the cache key holds."""
import os
import json
import re
import shlex
import shutil
import subprocess
import sys

import tilelang

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

SCRIPT = r"""
import os, sys
import numpy as np
import tilelang
import tilelang.language as T
site = sys.argv[1]
assert os.path.dirname(os.path.abspath(tilelang.__file__)) == os.path.join(site, "tilelang"), tilelang.__file__
print("INCLUDE", tilelang._core.include_dir("tl/cpu/kernel.h"))

@T.prim_func
def axpy(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            C[bx * 32 + i] = A[bx * 32 + i] * 2 + B[bx * 32 + i]

k = tilelang.compile(axpy, out_idx=[2], target="cpu")
rng = np.random.default_rng(7)
a = rng.standard_normal(64).astype(np.float32)
b = rng.standard_normal(64).astype(np.float32)
ref = a.astype(np.float64) * 2 + b.astype(np.float64)
np.testing.assert_allclose(k(a, b), ref, rtol=1e-6, atol=1e-6)
print("OK")
"""


def _version_from_cmake():
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        regex = re.search(r"metadata\.version\.regex\s*=\s*'([^']*)'", f.read()).group(1)
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        return re.search(regex, f.read(), re.MULTILINE).group("value")


def test_version_is_the_cmake_project_version():
    assert tilelang.__version__ == _version_from_cmake()


def test_installed_layout_finds_its_own_headers(tmp_path):
    site = tmp_path / "site-packages"
    pkg = os.path.dirname(os.path.abspath(tilelang.__file__))
    shutil.copytree(pkg, site / "tilelang", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(os.path.join(ROOT, "include", "tl"), site / "tilelang" / "include" / "tl")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "TILELANG_SOURCE_DIR", "TILELANG_INCLUDE_DIR")}
    env["PYTHONPATH"] = str(site)  # what site-packages gives an installed package
    env["TILELANG_CACHE_DIR"] = str(tmp_path / "cache")
    script = work / "run_axpy.py"  # a file: @T.prim_func reads the kernel's source
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, str(script), str(site)], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"INCLUDE {site / 'tilelang' / 'include'}\n" in r.stdout, r.stdout
    assert r.stdout.rstrip().endswith("OK"), r.stdout


def test_no_checkout_path_is_compiled_in():
    # The clone's location reaches no shipped code through a define (it once did: TL_SOURCE_DIR, so
    # moving the clone broke the installation). compile_commands.json is what `make` compiled with.
    commands = os.path.join(ROOT, "build", "compile_commands.json")
    assert os.path.exists(commands), "run `make build` first"
    with open(commands) as f:
        entries = json.load(f)
    shipped = [e for e in entries if e["file"].startswith(os.path.join(ROOT, "src") + os.sep)]
    assert len(shipped) > 50, len(shipped)
    for e in shipped:
        args = shlex.split(e["command"]) if "command" in e else e["arguments"]
        defines = [a for a in args if a.startswith("-D")]
        assert not [d for d in defines if ROOT in d], (e["file"], defines)
        assert any(d.startswith("-DTL_VERSION=") for d in defines), (e["file"], defines)


def test_cache_root_is_the_user_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("TILELANG_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tilelang.cache.cache_dir() == str(tmp_path / "xdg" / "tilelang")
    assert tilelang.env.TILELANG_CACHE_DIR == str(tmp_path / "xdg" / "tilelang")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")  # invalid per XDG: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert tilelang.cache.cache_dir() == str(tmp_path / "home" / ".cache" / "tilelang")
    assert tilelang.env.TILELANG_CACHE_DIR == str(tmp_path / "home" / ".cache" / "tilelang")
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "mine"))
    assert tilelang.cache.cache_dir() == str(tmp_path / "mine")
    assert tilelang.env.TILELANG_CACHE_DIR == str(tmp_path / "mine")
