// Conversions between Python values and IR objects, shared by the IR binding files
// (ir_bind.cc: expressions and buffers; ir_bind_stmt.cc: statements, functions, the builder).
// Conventions: a DataType crosses the boundary as its name; an expression argument may be a
// PrimExpr, a Python bool/int/float or an alloc_var buffer; attribute maps are dicts.
#pragma once

#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tl::bind::detail {

namespace nb = nanobind;

// The Python class of a BufferLoad expression. It adds no state; it only gives `A[i, j]` a type
// of its own on the Python side, so the frontend can tell a tile origin from any other value.
struct LoadExpr : Expr {
  LoadExpr() = default;
  explicit LoadExpr(Expr e) : Expr(e.node()) {}
};

DataType dt(const std::string& s);
// An expression as its most specific Python class (Var, BufferLoad or PrimExpr).
nb::object wrap(const Expr& e);
nb::list wrap_list(const std::vector<Expr>& v);
// "'A' (shared float16)", for messages.
std::string describe(const Buffer& b);
// Python value -> expression; false (leaving `out` untouched) when `h` is no scalar value.
bool try_to_expr(nb::handle h, Expr* out);
// Like try_to_expr, but raises TypeError mentioning `what`.
Expr to_expr(nb::handle h, const char* what = "value");
// A sequence (or a single value) of expressions.
std::vector<Expr> to_expr_list(nb::handle seq, const char* what);

// `key` names the attribute in errors (an int that does not fit in 64 bits is a ValueError naming it).
Attr to_attr(nb::handle h, const std::string& key = {});
// A Python str as UTF-8; a ValueError naming `what` and showing the text escaped when it holds a
// lone surrogate (which UTF-8 cannot encode), a TypeError when it is no str.
std::string utf8_text(nb::handle h, const std::string& what);
// A Python int as int64_t; a ValueError naming `what` when it does not fit.
int64_t int64_from_py(nb::handle h, const std::string& what);
AttrMap to_attr_map(nb::handle d);
nb::object from_attr(const Attr& a);
nb::dict from_attr_map(const AttrMap& m);

Span make_span(const std::string& file, int line, int col);
Span opt_span(nb::handle h);

BinOp parse_binop(const std::string& s);
UnOp parse_unop(const std::string& s);
const char* expr_kind_name(ExprKind k);
const char* stmt_kind_name(StmtKind k);

// Tile-op arguments: regions, whole buffers (full regions) or scalar expressions.
std::vector<TileArg> to_tile_args(nb::handle args);
std::vector<Param> to_params(nb::handle params);
nb::object tile_arg(const TileArg& a);
nb::list stmt_list(const std::vector<Stmt>& v);

template <typename T>
std::vector<T> vec_of(nb::handle seq) {
  std::vector<T> out;
  for (nb::handle x : nb::iter(seq)) out.push_back(nb::cast<T>(x));
  return out;
}


// ir_bind.cc / ir_bind_stmt.cc
void bind_exprs(nb::module_& m);
void bind_buffers(nb::module_& m);
void bind_stmts(nb::module_& m);
void bind_builder(nb::module_& m);

}  // namespace tl::bind::detail
