// Textual form of the IR (grammar in docs/IR_TEXT.md). print -> parse (ir/parser.h) gives a
// structurally equal function (ir/structural.h). Names are made unique at print time: two
// distinct variables that share a name print as `i` and `i_1`; names that would read as a
// keyword or a dtype get a trailing `_`.
#pragma once

#include <string>

#include "ir/stmt.h"

namespace tl {

struct PrintOptions {
  // Alpha-renamed output for the kernel cache key: every binding of a variable gets the next
  // name of v0, v1, ... and every buffer definition (parameter, alloc) the next of b0, b1, ...,
  // in the order they appear in the text. Two functions that differ only in the names of their
  // variables, buffers and parameters print identically (the function name and attrs, e.g.
  // global_symbol, are kept). Dtypes, constants, scopes, loop kinds and annotations all print,
  // so functions that print identically in this mode are structurally equal.
  bool canonical_names = false;
  // print_stmt only: begin with a `free[...]` line that declares the variables and buffers the
  // statement uses without defining them, so that parse_stmt can read the text back alone.
  // (print_func always declares them, after the parameter list.)
  bool declare_free = false;
};

std::string print_expr(const Expr& e);
std::string print_stmt(const Stmt& s, const PrintOptions& options = {});
std::string print_func(const PrimFunc& f, const PrintOptions& options = {});
std::string print_attr(const Attr& a);

// print_func(f, {.canonical_names = true}): the text the kernel cache keys on.
std::string canonical_text(const PrimFunc& f);

}  // namespace tl
