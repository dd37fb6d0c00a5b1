// parse_func / parse_stmt / parse_expr (parser.h), and the Parser (parser_impl.h) grammar of the
// function header, declarations and attribute maps.
#include "ir/parser.h"

#include <utility>

#include "ir/error.h"
#include "ir/parser_impl.h"

namespace tl {

namespace ir_text {

PrimFunc Parser::func() {
  Token start = peek();
  expect_word("func");
  expect("@");
  std::string name = peek().kind == Tok::kString ? next().text : ident("a function name");
  if (accept_word("dyn")) {
    expect("[");
    do {
      Var v = var_decl();
      define(v.name(), v);
    } while (accept(","));
    expect("]");
  }
  expect("(");
  std::vector<Param> params;
  if (!at(")")) {
    do {
      params.push_back(param());
    } while (accept(","));
  }
  expect(")");
  free_decls();
  AttrMap attrs = at_attr_map() ? attr_map() : AttrMap{};
  Stmt body = block();
  expect_end();
  return guarded(start, [&] { return PrimFunc(name, std::move(params), body, std::move(attrs), span(start)); });
}

Stmt Parser::stmt_list() {
  free_decls();
  Stmt s = stmts(nullptr);
  expect_end();
  return s;
}

Expr Parser::expr_only() {
  Expr e = expr();
  expect_end();
  return e;
}

Buffer Parser::buffer_ref() {
  const Token& t = peek();
  std::string n = ident("a buffer name");
  const Buffer* b = find_buffer(n);
  if (!b) fail(t, "undefined buffer '" + n + "' (declare it as a parameter, with alloc, or in free[...])");
  return *b;
}

// ---- declarations ----
DataType Parser::dtype() {
  const Token& t = peek();
  std::string n = ident("a dtype");
  DataType dt;
  if (!try_parse_dtype(n, &dt)) fail(t, "unknown dtype '" + n + "'");
  return dt;
}

// name [: dtype]  (int32 when omitted). The var is created, not yet in scope.
Var Parser::var_decl(DataType dflt) {
  std::string n = ident("a variable name");
  DataType dt = accept(":") ? dtype() : dflt;
  return Var(n, dt);
}

// name ':' scope dtype '[' shape ']' ['strides' '[' ... ']']  (after the name and colon)
Buffer Parser::buffer_decl_rest(const std::string& name, const Token& at) {
  MemScope scope = guarded(at, [&] { return parse_scope(ident("a memory scope")); });
  DataType dt = dtype();
  expect("[");
  std::vector<Expr> shape = exprs("]");
  expect("]");
  std::vector<Expr> strides;
  if (accept_word("strides")) {
    expect("[");
    strides = exprs("]");
    expect("]");
  }
  return guarded(at, [&] { return Buffer(name, dt, std::move(shape), scope, std::move(strides), span(at)); });
}

bool Parser::at_buffer_decl() const { return peek(2).kind == Tok::kIdent && is_scope_name(peek(2).text); }

Param Parser::param() {
  Token at = peek();
  std::string name = ident("a parameter name");
  expect(":");
  if (peek().kind == Tok::kIdent && is_scope_name(peek().text)) {
    Buffer b = buffer_decl_rest(name, at);
    define(name, b);
    return Param{name, Var(), b};
  }
  DataType dt;
  if (peek().kind != Tok::kIdent || !try_parse_dtype(peek().text, &dt))
    fail(peek(), "unknown memory scope or dtype " + describe(peek()) +
                     " in the declaration of parameter '" + name + "'");
  next();
  // A scalar parameter that is also a dynamic dim was declared in dyn[...] already.
  const Var* dyn = find_var(name);
  if (dyn && dyn->dtype() == dt) return Param{name, *dyn, Buffer()};
  Var v(name, dt);
  define(name, v);
  return Param{name, v, Buffer()};
}

void Parser::free_decls() {
  if (!accept_word("free")) return;
  expect("[");
  if (!at("]")) {
    do {
      Token at = peek();
      if (at_buffer_decl()) {
        std::string n = ident("a buffer name");
        expect(":");
        define(n, buffer_decl_rest(n, at));
      } else {
        Var v = var_decl();
        define(v.name(), v);
      }
    } while (accept(","));
  }
  expect("]");
}

// ---- attributes ----
// `{key = ...}`. After a header that a body follows (func, for, kernel) the map must also be
// followed by `{`, so that a body whose first line is malformed is reported as such.
bool Parser::at_attr_map(bool body_follows) const {
  if (!(at("{") && (peek(1).kind == Tok::kIdent || peek(1).kind == Tok::kString) && at("=", 2))) return false;
  if (!body_follows) return true;
  int depth = 0;
  for (size_t k = 0; peek(k).kind != Tok::kEnd; ++k) {
    if (at("{", k)) ++depth;
    else if (at("}", k) && --depth == 0) return at("{", k + 1);
  }
  return false;
}

AttrMap Parser::attr_map() {
  AttrMap m;
  expect("{");
  do {
    const Token& t = peek();
    std::string key = t.kind == Tok::kString ? next().text : ident("an attribute key");
    expect("=");
    if (m.count(key)) fail(t, "duplicate attribute '" + key + "'");
    m[key] = attr_value();
  } while (accept(","));
  expect("}");
  return m;
}

int64_t Parser::int_literal(bool negative, const Token& t) {
  Expr e = number(negative);
  if (!e.as<IntImmNode>()) fail(t, "expected an integer");
  return e.as<IntImmNode>()->value;
}

Attr Parser::attr_value() {
  const Token& t = peek();
  if (accept_word("none")) return Attr();
  if (accept_word("true")) return Attr(true);
  if (accept_word("false")) return Attr(false);
  if (t.kind == Tok::kString) return Attr(next().text);
  if (accept("[")) {
    std::vector<int64_t> l;
    if (!at("]")) {
      do {
        bool neg = accept("-");
        l.push_back(int_literal(neg, peek()));
      } while (accept(","));
    }
    expect("]");
    return Attr(std::move(l));
  }
  if (t.kind == Tok::kIdent && at(":", 1)) {
    std::string prefix = next().text;
    next();
    if (prefix == "e" && accept("(")) {
      Expr e = expr();
      expect(")");
      return Attr(e);
    }
    if (prefix == "e" && accept("[")) {
      std::vector<Expr> l = exprs("]");
      expect("]");
      return Attr(std::move(l));
    }
    if (prefix == "s" && accept("[")) {
      std::vector<std::string> l;
      if (!at("]")) {
        do {
          if (peek().kind != Tok::kString) fail(peek(), "expected a string in s:[...]");
          l.push_back(next().text);
        } while (accept(","));
      }
      expect("]");
      return Attr(std::move(l));
    }
    if (prefix == "buf") return Attr(buffer_ref());
    fail(t, "unknown attribute form '" + prefix + ":'; expected e:(expr), e:[exprs], s:[strings] or buf:name");
  }
  bool neg = accept("-");
  double v;
  DataType dt;
  const Token& n = peek();
  if (n.kind != Tok::kNumber && !(n.kind == Tok::kIdent && special_float(n.text, &v, &dt)))
    fail(n, "expected an attribute value (none, true, false, a number, a string, [ints], e:(expr), e:[exprs], "
            "s:[strings] or buf:NAME), got " + describe(n));
  Expr e = number(neg);
  if (auto* i = e.as<IntImmNode>()) return Attr(static_cast<int64_t>(i->value));
  return Attr(e.as<FloatImmNode>()->value);
}

}  // namespace ir_text

using ir_text::Parser;

PrimFunc parse_func(const std::string& text, const std::string& filename) { return Parser(text, filename).func(); }

Stmt parse_stmt(const std::string& text, const std::map<std::string, Var>& vars,
                const std::map<std::string, Buffer>& buffers, const std::string& filename) {
  Parser p(text, filename);
  p.predefine(vars, buffers);
  return p.stmt_list();
}

Expr parse_expr(const std::string& text, const std::map<std::string, Var>& vars,
                const std::map<std::string, Buffer>& buffers, const std::string& filename) {
  Parser p(text, filename);
  p.predefine(vars, buffers);
  return p.expr_only();
}

}  // namespace tl
