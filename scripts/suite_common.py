"""What scripts/upstream_suite.py and scripts/ascend_suite.py share: extracting programs from a bare
git snapshot, running one program in its own process with a time limit and a log, reading its first
error, and running a list of programs in parallel."""
import io
import os
import re
import subprocess
import tarfile
import time


def extract_archive(git_dir, ref, paths, out):
    """`paths` of `ref` in the bare repository `git_dir`, unpacked into `out` (once)."""
    if os.path.isdir(out):
        return out
    os.makedirs(out)
    data = subprocess.run(["git", "--git-dir", git_dir, "archive", ref, "--", *paths],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.extractall(out)
    return out


def first_error(text):
    """The last line that names an exception (pytest's `E   ...` lines too), else the last line."""
    lines = [l for l in text.splitlines() if l.strip()]
    for l in reversed(lines):
        if re.match(r"^(E\s+)?[\w.]*(Error|Exception|Exit|Interrupt)\b.*", l.strip()) or "Error:" in l:
            return l.strip()[:300]
    return lines[-1].strip()[:300] if lines else ""


def run_program(cmd, cwd, env, timeout, log_path):
    """Runs `cmd`; returns (returncode or None when it timed out, seconds, output). The output is
    also written to `log_path`."""
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        rc, out = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
    secs = round(time.time() - t0, 1)
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "w") as f:
        f.write(out)
    return rc, secs, out


def run_all(fn, items, jobs):
    """fn(item) for every item, `jobs` at a time, results in the items' order."""
    if jobs > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(fn, items))
    return [fn(it) for it in items]
