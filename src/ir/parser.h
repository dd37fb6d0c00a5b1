// Reads the textual IR that ir/printer.h prints (grammar: docs/IR_TEXT.md). For every function f,
// parse_func(print_func(f)) is structurally equal to f (ir/structural.h).
//
// The parser is a deserializer: it rebuilds exactly the nodes the text spells, without constant
// folding (`2 + 3` stays an addition, `cast<int64>(5)` stays a cast), so a pass test's Expected
// text means what it says. Only where operand types disagree (hand-written text such as `x + 1`
// with an int64 x) are the promotion rules of the make_* constructors applied.
//
// Variables are typed at their definition (parameters, dyn[...], free[...], for/let/kernel);
// buffers at parameters, free[...] and `alloc`. A malformed text raises SyntaxError
// "file:line:col: message"; a type error found while building a node (TypeError/ValueError of
// the constructors) is reported the same way, at the construct's position.
#pragma once

#include <map>
#include <string>

#include "ir/stmt.h"

namespace tl {

PrimFunc parse_func(const std::string& text, const std::string& filename = "<text>");

// A bare statement list (what print_stmt prints; with PrintOptions::declare_free it begins with
// a `free[...]` line declaring its free variables and buffers). `vars` / `buffers` predefine
// names the text uses without declaring them.
Stmt parse_stmt(const std::string& text, const std::map<std::string, Var>& vars = {},
                const std::map<std::string, Buffer>& buffers = {}, const std::string& filename = "<text>");

// One expression (what print_expr prints), over the given variables and buffers.
Expr parse_expr(const std::string& text, const std::map<std::string, Var>& vars = {},
                const std::map<std::string, Buffer>& buffers = {}, const std::string& filename = "<text>");

}  // namespace tl
