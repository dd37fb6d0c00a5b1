// An index that walks a loop with unit stride: the passes that turn an element loop into one run
// call (stream_global_stores, convert_bf16_rows) need where the run starts.
#pragma once

#include <optional>

#include "ir/stmt.h"

namespace tl {

// The value of `idx` at the first iteration of loop `n` when `idx` is (an expression free of the
// loop variable) + the loop variable (or the loop variable widened to a larger integer type, as in
// the int64 indices of dynamic shapes); nothing for any other form.
std::optional<Expr> unit_stride_start(const Expr& idx, const ForNode* n);

}  // namespace tl
