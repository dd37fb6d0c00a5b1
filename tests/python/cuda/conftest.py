"""With TILELANG_CRASH_BACKTRACE=1 (scripts/gpu_check.sh sets it) a fatal signal in a test prints
the native backtrace, each frame with its library, before faulthandler's Python stack."""
import os

if os.environ.get("TILELANG_CRASH_BACKTRACE"):
    from tilelang import _core

    _core.cuda.install_crash_backtrace()
