"""tilelang.PassConfigKey: the keys of this project's C++ pass-config table
(src/transform/pass_config.cc) plus TileLang's other keys.

TileLang has keys that tune TVM passes or diagnostics this compiler does not have (the simplifier's
options, CSE, the out-of-bound warning, the data-race checker, ...). Programs and libraries set them
on every kernel, so they are accepted and ignored (`_NOOP_KEYS`). The few whose effect a user would
look for (printing or writing something, extra device-compiler flags) are also accepted and
ignored, with a UserWarning the first time each is used (`_WARN_KEYS`). A key in neither table is a
ValueError. docs/COMPATIBILITY.md lists every key with its status.
"""
import warnings
from enum import Enum

from .. import _core

_TABLE = _core.pass_config_keys()

# TileLang's keys that this compiler implements under another key string.
_ALIASES = {"tirx.disable_vectorize": "tir.disable_vectorize"}

# TileLang's keys with no counterpart here: member name -> key string.
_NOOP_KEYS = {
    "TL_SIMPLIFY": "tl.Simplify",
    "TL_DISABLE_BUFFER_INIT_CHECK": "tl.disable_buffer_init_check",
    "TL_DISABLE_DATA_RACE_CHECK": "tl.disable_data_race_check",
    "TL_DISABLE_PRELOWER_SEMANTIC_CHECK": "tl.disable_prelower_semantic_check",
    "TL_PTXAS_REGISTER_USAGE_LEVEL": "tl.ptxas_register_usage_level",
    "TL_ENABLE_REDUCER_PLAN_VERBOSE": "tl.enable_reducer_plan_verbose",
    "TL_LAYOUT_COST_MODEL": "tl.layout_cost_model",
    "TL_REDUCER_FORCE_BASELINE": "tl.reducer_force_baseline",
    "TL_DISABLE_VECTORIZE_256": "tl.disable_vectorize_256",
    "TL_ENABLE_ASYNC_COPY": "tl.enable_async_copy",
    "TL_ENABLE_LOWER_LDGSTG": "tl.enable_lower_ldgstg",
    "TL_ENABLE_LOWER_LDGSTG_PREDICATED": "tl.enable_lower_ldgstg_predicated",
    "TL_ENABLE_VECTORIZE_PLANNER_VERBOSE": "tl.enable_vectorize_planner_verbose",
    "TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS": "tl.debug_merge_shared_memory_allocations",
    "TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE": "tl.enable_aggressive_shared_memory_merge",
    "TL_DISABLE_SHUFFLE_ELECT": "tl.disable_shuffle_elect",
    "TL_DISABLE_LOOP_UNSWITCHING": "tl.disable_loop_unswitching",
    "TL_LOOP_UNSWITCHING_ALLOW_NON_TRIVIAL_ELSE": "tl.loop_unswitching_allow_non_trivial_else",
    "TL_IF_STMT_BINDING_INLINE_REPLAYABLE_BINDS": "tl.if_stmt_binding_inline_replayable_binds",
    "TL_FORCE_LET_INLINE": "tl.force_let_inline",
    "TL_STORAGE_REWRITE_DETECT_INPLACE": "tl.storage_rewrite_detect_inplace",
    "TIR_ENABLE_EQUIV_TERMS_IN_CSE": "tir.enable_equiv_terms_in_cse_tir",
    "TIR_DISABLE_CSE": "tirx.disable_cse_tir",
    "TIR_SIMPLIFY": "tirx.Simplify",
    "TIR_DISABLE_STORAGE_REWRITE": "tirx.disable_storage_rewrite",
    "TIR_USE_ASYNC_COPY": "tirx.use_async_copy",
    "TIR_MERGE_STATIC_SMEM": "tirx.merge_static_smem",
    "TIR_NOALIAS": "tirx.noalias",
    "TL_DISABLE_OUT_OF_BOUND_WARNING": "tl.disable_out_of_bound_warning",
    # TileLang-Ascend's npuir branch: its MLIR pipeline's automatic multi-buffering (a performance
    # option; the kernel's results do not depend on it) and its HIVM sync injection, which a kernel
    # turns off when it writes its own flags (the simulator's sync keeps those flags and only adds
    # what a race needs, so the kernel's results do not depend on it either).
    "NPUIR_ENABLE_AUTO_MULTI_BUFFER": "npuir.enable_auto_multi_buffer",
    "NPUIR_DISABLE_HIVM_AUTO_INJECT_SYNC": "npuir.disable_hivm_auto_inject_sync",
}

# Accepted and ignored, with a warning: the user expects to see an effect.
_WARN_KEYS = {
    "TL_DEVICE_COMPILE_FLAGS": ("tl.device_compile_flags", "pass compile_flags=... to tilelang.compile / jit"),
    "TL_EMIT_LINE_DIRECTIVES": ("tl.emit_line_directives", "kernel sources carry no #line directives"),
    "TL_AST_PRINT_ENABLE": ("tl.ast_print_enable", "print PrimFunc.script() instead"),
    "TL_LAYOUT_VISUALIZATION_ENABLE": ("tl.layout_visualization_enable", "layouts are not plotted"),
    "TL_LAYOUT_VISUALIZATION_FORMATS": ("tl.layout_visualization_formats", "layouts are not plotted"),
    "TIR_ENABLE_DEBUG": ("tirx.enable_debug", "use TL_DUMP_IR / kernel.get_ir(stage)"),
    "TIR_ADD_LOWER_PASS": ("tirx.add_lower_pass", "user passes cannot be added to the C++ pipeline"),
    "CUDA_KERNELS_OUTPUT_DIR": ("cuda.kernels_output_dir", "kernel.get_kernel_source() / kernel.artifact_dir"),
    "TL_PASS_PROFILE": ("tl.pass_profile", "set TL_PASS_TIMING=1 for a per-pass time table"),
    "TL_PASS_PROFILE_THRESHOLD_MS": ("tl.pass_profile_threshold_ms", "set TL_PASS_TIMING=1"),
}
# TileLang's option keys of the simplifier (nested under tl.Simplify there).
_SIMPLIFY_OPTIONS = {
    "TL_SIMPLIFY_TRANSITIVELY_PROVE_INEQUALITIES": "transitively_prove_inequalities",
    "TL_SIMPLIFY_CONVERT_BOOLEAN_TO_AND_OF_ORS": "convert_boolean_to_and_of_ors",
    "TL_SIMPLIFY_APPLY_CONSTRAINTS_TO_BOOLEAN_BRANCHES": "apply_constraints_to_boolean_branches",
    "TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_PROVE_CONDITIONAL": "propagate_knowns_to_prove_conditional",
    "TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_SIMPLIFY_EXPRESSIONS": "propagate_knowns_to_simplify_expressions",
    "TL_SIMPLIFY_ENABLE_LET_INLINE": "enable_simplify_let_inline",
}
# TileLang's member names for keys this project spells differently.
_MEMBER_ALIASES = {"TL_DISABLE_SAFE_MEMORY_ACCESS": "tl.disable_safe_memory_legalize",
                   "TIR_DISABLE_VECTORIZE": "tir.disable_vectorize"}

_IGNORED = set(_NOOP_KEYS.values()) | set(_SIMPLIFY_OPTIONS.values())
_WARNED_KEYS = {key: why for key, why in _WARN_KEYS.values()}
_warned = set()

_members = [(member, key) for member, key, _type, _doc in _TABLE]
_members += [(m, k) for m, k in _MEMBER_ALIASES.items()]
_members += list(_NOOP_KEYS.items()) + list(_SIMPLIFY_OPTIONS.items())
_members += [(m, k) for m, (k, _why) in _WARN_KEYS.items()]

# A str-valued Enum: members compare equal to their strings and can be passed wherever a key is.
PassConfigKey = Enum("PassConfigKey", _members, type=str)
PassConfigKey.__doc__ = "Keys accepted by pass_configs=... of tilelang.compile / @tilelang.jit.\n\n" + "\n".join(
    f"{member} ({key!r}, {type_}): {doc}" for member, key, type_, doc in _TABLE) + \
    "\n\nTileLang's other keys are accepted and have no effect here (see jit/pass_config.py)."
PassConfigKey.__str__ = lambda self: self.value  # type: ignore[method-assign]

_MEMBER_TO_KEY = {m: k for m, k in _members}


def normalize_pass_configs(pass_configs):
    """Returns a {key string: value} dict; raises ValueError for unknown keys or bad values."""
    if pass_configs is None:
        return {}
    if not isinstance(pass_configs, dict):
        raise ValueError(f"pass_configs must be a dict, got {type(pass_configs).__name__}")
    out = {}
    for key, value in pass_configs.items():
        if isinstance(key, PassConfigKey):
            key = key.value
        elif not isinstance(key, str):
            raise ValueError(f"pass config keys must be strings or tilelang.PassConfigKey members, got {key!r}")
        key = _MEMBER_TO_KEY.get(key, key) if key.isupper() else key
        key = _ALIASES.get(key, key)
        if key in _IGNORED:
            continue
        if key in _WARNED_KEYS:
            if key not in _warned:
                _warned.add(key)
                warnings.warn(f"pass config {key!r} has no effect in tilelang-cpp: {_WARNED_KEYS[key]}",
                              UserWarning, stacklevel=3)
            continue
        out[str(key)] = value
    # The C++ table checks names and value types (and normalizes member names to key strings).
    return dict(_core.validate_pass_configs(out))
