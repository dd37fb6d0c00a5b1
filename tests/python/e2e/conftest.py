import atexit
import os
import shutil
import tempfile

# Compile into a private cache (unless the session already has one), removed at exit.
if "TILELANG_CACHE_DIR" not in os.environ:
    os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-e2e-tests-")
    atexit.register(shutil.rmtree, os.environ["TILELANG_CACHE_DIR"], True)
