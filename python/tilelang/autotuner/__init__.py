"""tilelang.autotune and tilelang.autotuner.AutoTuner: pick the fastest configuration of a kernel.

See tuner.py for the two entry points and docs/RUNTIME.md for what is checked and timed.
"""
from .capture import get_autotune_inputs, set_autotune_inputs
from .param import AutotuneResult, CompileArgs, ConfigResult, ProfileArgs
from .tuner import AutoTuneImpl, AutoTuner, autotune

__all__ = ["autotune", "AutoTuner", "AutoTuneImpl", "AutotuneResult", "ConfigResult", "CompileArgs", "ProfileArgs",
           "set_autotune_inputs", "get_autotune_inputs"]
