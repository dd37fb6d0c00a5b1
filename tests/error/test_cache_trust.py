"""The kernel cache loads only what it verified and never breaks a build: an entry with a file its
MANIFEST does not cover (another kernel's library in place of ours), one another user could have
written, or one replaced by a symbolic-link loop is rebuilt, not loaded; a cache root others can
write is not used; clear_cache() in one process never removes the directory another process is
compiling into, and a compile killed midway leaves no permanent debris. Each process that compiles
here is a child, so the in-process memo never hides what the disk cache did."""
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

import tilelang
from child_process import run_script

KERNELS = '''
import json, sys
import numpy as np, tilelang, tilelang.language as T

def offset_kernel(k):
    @T.prim_func
    def add_k(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as bx:
            for i in T.Parallel(64):
                B[i] = A[i] + k
    return add_k

def check(k, kernel):
    a = np.random.default_rng(k).standard_normal(64).astype(np.float32)
    np.testing.assert_allclose(kernel(a), a + k, rtol=1e-6)
'''


def compile_in_child(cache_dir, offsets, extra_env=None, expect_ok=True, timeout=300):
    """Compiles offset_kernel(k) for each k in a fresh process, checks each result, and returns
    {k: {"hit": bool, "dir": artifact_dir}} (and the child's stderr)."""
    env = dict(os.environ, TILELANG_CACHE_DIR=str(cache_dir))
    env.pop("TILELANG_DISABLE_CACHE", None)
    env.update(extra_env or {})
    r = run_script(KERNELS + f'''
out = {{}}
for k in {list(offsets)!r}:
    kernel = tilelang.compile(offset_kernel(k), out_idx=[1], target="cpu")
    check(k, kernel)
    out[k] = {{"hit": kernel.cache_hit, "dir": kernel.artifact_dir}}
print(json.dumps(out))
''', env=env, timeout=timeout)
    if expect_ok:
        assert r.returncode == 0, r.stderr
        return {int(k): v for k, v in json.loads(r.stdout.strip().splitlines()[-1]).items()}, r.stderr
    return r


def test_distinct_kernels_loaded_from_the_cache_each_run_their_own_code(tmp_path):
    first, _ = compile_in_child(tmp_path, range(1, 7))
    assert not any(v["hit"] for v in first.values())
    again, _ = compile_in_child(tmp_path, range(1, 7))  # each result checked in the child
    assert all(v["hit"] for v in again.values())


def drop_manifest_line(entry, name):
    path = os.path.join(entry, "MANIFEST")
    with open(path) as f:
        lines = [l for l in f if not l.rstrip("\n").endswith(" " + name)]
    os.chmod(path, 0o644)
    with open(path, "w") as f:
        f.writelines(lines)


def test_another_kernels_library_with_its_manifest_line_dropped_is_not_loaded(tmp_path):
    built, _ = compile_in_child(tmp_path, [1, 5])
    victim, other = built[1]["dir"], built[5]["dir"]
    os.chmod(os.path.join(victim, "kernel.so"), 0o644)
    with open(os.path.join(other, "kernel.so"), "rb") as src, open(os.path.join(victim, "kernel.so"), "wb") as dst:
        dst.write(src.read())
    drop_manifest_line(victim, "kernel.so")
    again, _ = compile_in_child(tmp_path, [1])  # checks A + 1, not A + 5
    assert not again[1]["hit"]
    assert compile_in_child(tmp_path, [1])[0][1]["hit"]  # the rebuilt entry is used


@pytest.mark.parametrize("damage", ["world_writable_entry", "world_writable_library", "foreign_owner"])
def test_entries_others_could_write_are_not_loaded(tmp_path, damage):
    if damage == "foreign_owner" and os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    built, _ = compile_in_child(tmp_path, [2])
    entry = built[2]["dir"]
    if damage == "world_writable_entry":
        os.chmod(entry, 0o777)
    elif damage == "world_writable_library":
        os.chmod(os.path.join(entry, "kernel.so"), 0o666)
    else:
        os.chown(os.path.join(entry, "kernel.so"), 65534, 65534)
    again, _ = compile_in_child(tmp_path, [2])
    assert not again[2]["hit"]
    st = os.stat(again[2]["dir"])
    assert st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def test_entry_replaced_by_a_symlink_loop_is_rebuilt(tmp_path):
    built, _ = compile_in_child(tmp_path, [3])
    entry = built[3]["dir"]
    subprocess.run(["rm", "-rf", entry], check=True)
    os.symlink(entry, entry)  # a loop
    again, _ = compile_in_child(tmp_path, [3])
    assert not again[3]["hit"] and again[3]["dir"] == entry
    assert os.path.isdir(entry) and not os.path.islink(entry)


def test_cache_root_others_can_write_is_not_used(tmp_path):
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, 0o777)
    built, err = compile_in_child(root, [4])
    assert not built[4]["hit"] and "not using the kernel cache" in err and "writable by every user" in err
    assert not (root / "v1").exists()
    again, _ = compile_in_child(root, [4])
    assert not again[4]["hit"]


def test_without_home_the_cache_is_never_a_guessable_shared_directory(tmp_path):
    squatted = tmp_path / f"tilelang-cache-{os.geteuid()}"
    squatted.mkdir()
    os.chmod(squatted, 0o777)  # as another user would have left it
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME", "TILELANG_CACHE_DIR")}
    env["TMPDIR"] = str(tmp_path)
    r = run_script("import tilelang\nprint(tilelang.cache.cache_dir())\n", env=env)
    assert r.returncode == 0, r.stderr
    root = r.stdout.strip()
    assert os.path.isabs(root) and root != str(squatted) and not root.startswith("/tmp/tilelang-cache-")


# ---- concurrent clear and killed builds: a slow compiler makes the window deterministic ----------

def slow_compiler(tmp_path, seconds):
    path = tmp_path / "slow-g++"
    path.write_text(f'#!/bin/sh\ncase "$*" in *--version*) exec g++ "$@";; esac\nsleep {seconds}\nexec g++ "$@"\n')
    path.chmod(0o755)
    return str(path)


def wait_for_staging(root, timeout=120):
    staging = os.path.join(root, "v1", "staging")
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.isdir(staging):
            live = [n for n in os.listdir(staging) if not n.startswith("trash.")]
            if live:
                return [os.path.join(staging, n) for n in live]
        time.sleep(0.05)
    raise AssertionError("no build started")


def start_child(cache_dir, offsets, cxx):
    env = dict(os.environ, TILELANG_CACHE_DIR=str(cache_dir), CXX=cxx)
    env.pop("TILELANG_DISABLE_CACHE", None)
    script = cache_dir.parent / "child_build.py"
    script.write_text(KERNELS + f'''
for k in {list(offsets)!r}:
    check(k, tilelang.compile(offset_kernel(k), out_idx=[1], target="cpu"))
print("ok")
''')
    return subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def test_clear_cache_never_breaks_a_concurrent_build(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    child = start_child(cache, [11], slow_compiler(tmp_path, 3))
    try:
        building = wait_for_staging(str(cache))
        monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))
        tilelang.cache.clear_cache()
        assert all(os.path.isdir(d) for d in building), "clear_cache removed a build in progress"
        out, err = child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    assert child.returncode == 0 and "ok" in out, err


def test_debris_of_a_killed_compile_is_collected(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    child = start_child(cache, [12], slow_compiler(tmp_path, 3))
    try:
        debris = wait_for_staging(str(cache))
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the build and its compiler
        child.communicate()
    assert all(os.path.isdir(d) for d in debris)
    for d in debris:
        os.utime(d, (1, 1))  # old: its writer has long been gone
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(cache))
    tilelang.cache.clear_cache()
    assert not any(os.path.exists(d) for d in debris)
    # A killed build's debris is also collected by the next build, without clear_cache().
    child = start_child(cache, [13], slow_compiler(tmp_path, 3))
    try:
        debris = wait_for_staging(str(cache))
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
    for d in debris:
        os.utime(d, (1, 1))
    built, _ = compile_in_child(cache, [14])
    assert not any(os.path.exists(d) for d in debris)


# ---- issue 13 red-team findings: special files, inner directories, trailing MANIFEST text, load dirs

@pytest.mark.parametrize("name", ["MANIFEST", "kernel.so"])
def test_fifo_in_place_of_an_entry_file_is_rebuilt_not_waited_on(tmp_path, name):
    built, _ = compile_in_child(tmp_path, [6])
    entry = built[6]["dir"]
    os.chmod(entry, 0o755)
    os.remove(os.path.join(entry, name))
    os.mkfifo(os.path.join(entry, name), 0o644)
    # Opening a FIFO for reading would block forever (subprocess.TimeoutExpired).
    again, _ = compile_in_child(tmp_path, [6], timeout=90)
    assert not again[6]["hit"] and again[6]["dir"] == entry
    assert stat.S_ISREG(os.lstat(os.path.join(entry, name)).st_mode)
    assert compile_in_child(tmp_path, [6])[0][6]["hit"]


@pytest.mark.parametrize("damage", ["world_writable_v1", "group_writable_shard", "shard_symlinked_outside"])
def test_entries_under_inner_directories_others_could_write_are_not_loaded(tmp_path, damage):
    root = tmp_path / "cache"
    built, _ = compile_in_child(root, [7])
    entry = built[7]["dir"]
    shard = os.path.dirname(entry)
    v1 = os.path.dirname(shard)
    if damage == "world_writable_v1":
        os.chmod(v1, 0o777)
    elif damage == "group_writable_shard":
        os.chmod(shard, 0o775)
        os.chown(shard, -1, 65534)  # a group the current user is not alone in (nogroup)
    else:
        evil = tmp_path / "evil"
        os.rename(shard, evil)
        os.chmod(evil, 0o777)
        os.symlink(evil, shard)
    again, _ = compile_in_child(root, [7])
    assert not again[7]["hit"] and again[7]["dir"] == entry
    for d in (v1, shard):  # rebuilt as real private directories
        st = os.lstat(d)
        assert stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    assert compile_in_child(root, [7])[0][7]["hit"]


def test_manifest_with_text_after_end_is_rebuilt(tmp_path):
    built, _ = compile_in_child(tmp_path, [8])
    manifest = os.path.join(built[8]["dir"], "MANIFEST")
    os.chmod(manifest, 0o644)
    with open(manifest, "a") as f:
        f.write("file 0000 1 evil\n")
    again, err = compile_in_child(tmp_path, [8], extra_env={"TL_CACHE_VERBOSE": "1"})
    assert not again[8]["hit"] and "text after its 'end' line" in err
    assert compile_in_child(tmp_path, [8])[0][8]["hit"]


def test_loading_a_kernel_leaves_no_directory_behind(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(mode=0o700)
    cache = tmp_path / "cache"
    first, _ = compile_in_child(cache, [9, 10], extra_env={"TMPDIR": str(tmpdir)})
    again, _ = compile_in_child(cache, [9, 10], extra_env={"TMPDIR": str(tmpdir)})
    assert not first[9]["hit"] and again[9]["hit"] and again[10]["hit"]
    assert os.listdir(tmpdir) == []
