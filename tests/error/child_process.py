"""Running a test's hostile case in a fresh interpreter, so that a crash (a signal) fails the test
instead of taking the test run down. The script is written to a file: @T.prim_func reads kernel
source from files."""
import os
import subprocess
import sys
import tempfile


def run_script(source, timeout=300, env=None):
    """Runs `source` as a Python script; returns the CompletedProcess (text output). A death by a
    signal is an AssertionError with the child's output."""
    with tempfile.TemporaryDirectory(prefix="tl-child-") as d:
        path = os.path.join(d, "child_script.py")
        with open(path, "w") as f:
            f.write(source)
        r = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ) if env is None else env)
    assert r.returncode >= 0, f"the child died of signal {-r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    return r
