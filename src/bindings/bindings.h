// The nanobind extension `tilelang._core`. Each area binds itself in its own file; module.cc calls
// them in dependency order (errors, IR, then compile/runtime).
#pragma once

#include <nanobind/nanobind.h>

namespace tl::bind {

void bind_errors(nanobind::module_& m);   // errors.cc
void bind_ir(nanobind::module_& m);       // ir_bind.cc: dtypes, Expr, Var, Buffer, regions, Stmt, PrimFunc, IRBuilder
void bind_runtime(nanobind::module_& m);  // runtime_bind.cc: Target, compile(), CompiledKernel, cache
void bind_ir_tools(nanobind::module_& m); // ir_tools_bind.cc: parse_ir, structural_equal/hash, canonical_text
void bind_cuda(nanobind::module_& m);     // cuda_bind.cc: tilelang._core.cuda (NVRTC, driver) for tests/tools
void bind_ascend(nanobind::module_& m);   // ascend_bind.cc: tilelang._core.ascend (pipeline + simulator) for tests/tools

}  // namespace tl::bind
