// Textual form of the IR (grammar in docs/IR_TEXT.md). print -> parse (ir/parser.h) gives a
// structurally equal function. Names are made unique at print time: two distinct variables
// that share a name print as `i` and `i_1`.
#pragma once

#include <string>

#include "ir/stmt.h"

namespace tl {

std::string print_expr(const Expr& e);
std::string print_stmt(const Stmt& s);
std::string print_func(const PrimFunc& f);
std::string print_attr(const Attr& a);

}  // namespace tl
