// Statements of the textual IR (the Parser of parser_impl.h).
#include <optional>
#include <utility>

#include "ir/error.h"
#include "ir/parser_impl.h"

namespace tl::ir_text {

Stmt Parser::block() {
  expect("{");
  Stmt s = stmts("}");
  expect("}");
  return s;
}

// Statements up to `end` (nullptr: end of input). A let/alloc without braces takes the rest.
Stmt Parser::stmts(const char* end) {
  DepthGuard guard(this);
  std::vector<Stmt> items;
  auto at_end = [&] { return end ? at(end) || peek().kind == Tok::kEnd : peek().kind == Tok::kEnd; };
  while (!at_end()) {
    Token t = peek();
    if (at_word("let") || at_word("alloc")) {
      items.push_back(binding(t, end));
      continue;
    }
    items.push_back(stmt());
  }
  if (items.empty()) return make_nop();
  if (items.size() == 1) return items[0];
  return make_seq(std::move(items));
}

Stmt Parser::binding(const Token& t, const char* end) {
  bool is_let = next().text == "let";
  size_t m = mark();
  Var var;
  Expr value;
  Buffer buf;
  if (is_let) {
    std::string n = ident("a variable name");
    std::optional<DataType> dt;
    if (accept(":")) dt = dtype();
    expect("=");
    value = expr();
    if (!dt) dt = value.dtype();
    var = Var(n, *dt);
    value = adopt_literal(value, *dt);
    define(n, var);
  } else {
    Token at = peek();
    std::string n = ident("a buffer name");
    expect(":");
    buf = buffer_decl_rest(n, at);
    define(n, buf);
  }
  Stmt body = at("{") ? block() : stmts(end);
  release(m);
  return guarded(t, [&] {
    return is_let ? make_let(var, value, body, span(t)) : make_allocate(buf, body, span(t));
  });
}

// A literal written for a typed slot (`let x: int64 = 0`) takes the slot's type.
Expr Parser::adopt_literal(const Expr& e, DataType t) {
  if (e.dtype() == t || t.lanes != 1) return e;
  if (auto* i = e.as<IntImmNode>(); i && (t.is_integer() || t.is_bool() || t.is_float()))
    return make_int(i->value, t);  // exact for int64; bool and float targets convert
  if (auto* f = e.as<FloatImmNode>(); f && t.is_float()) return make_float(f->value, t);
  return e;
}

Stmt Parser::stmt() {
  Token t = peek();
  if (t.kind != Tok::kIdent) fail(t, "expected a statement, got " + describe(t));
  const std::string& w = t.text;
  if (w == "evaluate") {
    next();
    Expr e = expr();
    return guarded(t, [&] { return make_evaluate(e, span(t)); });
  }
  if (w == "break" || w == "continue") {
    next();
    return make_loop_control(w == "break", span(t));
  }
  if (w == "for") return for_stmt();
  if (w == "if") return if_stmt();
  if (w == "attr") {
    next();
    if (peek().kind != Tok::kString) fail(peek(), "expected the attribute key as a string");
    std::string key = next().text;
    expect("=");
    Attr value = attr_value();
    Stmt body = block();
    return make_attr(key, value, body, span(t));
  }
  if (w == "kernel" && at("(", 1)) return kernel_stmt();
  if (w == "tileop") {
    next();
    if (peek().kind != Tok::kString) fail(peek(), "expected the tile op name as a string after 'tileop'");
    return tile_op(next().text, t);
  }
  if (at("[", 1)) {
    Buffer b = buffer_ref();
    expect("[");
    std::vector<Expr> idx = exprs("]");
    expect("]");
    expect("=");
    Expr value = expr();
    return guarded(t, [&] { return make_store(b, std::move(idx), value, span(t)); });
  }
  if (at("(", 1)) {
    next();
    return tile_op(w, t);
  }
  fail(t, "expected a statement, got " + describe(t));
}

Stmt Parser::for_stmt() {
  Token t = next();
  Var v = var_decl();
  expect_word("in");
  Token kind_tok = peek();
  ForKind kind = guarded(kind_tok, [&] { return parse_for_kind(ident("a loop kind")); });
  expect("(");
  Expr min = expr();
  expect(",");
  Expr extent = expr();
  expect(")");
  size_t m = mark();
  define(v.name(), v);
  AttrMap ann = at_attr_map() ? attr_map() : AttrMap{};
  Stmt body = block();
  release(m);
  min = adopt_literal(min, v.dtype());
  extent = adopt_literal(extent, v.dtype());
  return guarded(t, [&] { return make_for(v, min, extent, kind, body, std::move(ann), span(t)); });
}

Stmt Parser::if_stmt() {
  Token t = next();
  expect("(");
  Expr cond = expr();
  expect(")");
  Stmt then_case = block();
  Stmt else_case;
  if (accept_word("else")) else_case = at_word("if") ? if_stmt() : block();
  return guarded(t, [&] { return make_if(cond, then_case, else_case, span(t)); });
}

Stmt Parser::kernel_stmt() {
  Token t = next();
  expect("(");
  auto keyword = [&](const char* k) {
    expect_word(k);
    expect("=");
    expect("[");
  };
  keyword("grid");
  std::vector<Expr> grid = exprs("]");
  expect("]");
  expect(",");
  keyword("blocks");
  std::vector<Var> block_vars = var_decls();
  expect(",");
  keyword("threads");
  std::vector<Expr> threads = exprs("]");
  expect("]");
  expect(",");
  keyword("thread_vars");
  std::vector<Var> thread_vars = var_decls();
  expect(")");
  size_t m = mark();
  for (auto& v : block_vars) define(v.name(), v);
  for (auto& v : thread_vars) define(v.name(), v);
  AttrMap attrs = at_attr_map() ? attr_map() : AttrMap{};
  Stmt body = block();
  release(m);
  return guarded(t, [&] {
    return make_kernel(std::move(grid), std::move(block_vars), std::move(threads), std::move(thread_vars),
                       std::move(attrs), body, span(t));
  });
}

std::vector<Var> Parser::var_decls() {  // after '[', through ']'
  std::vector<Var> out;
  if (!at("]")) {
    do {
      out.push_back(var_decl());
    } while (accept(","));
  }
  expect("]");
  return out;
}

// The current token is '(' after the op name.
Stmt Parser::tile_op(const std::string& op, const Token& t) {
  expect("(");
  std::vector<TileArg> args;
  if (!at(")")) {
    do {
      args.push_back(tile_arg());
    } while (accept(","));
  }
  expect(")");
  AttrMap attrs = at_attr_map(/*body_follows=*/false) ? attr_map() : AttrMap{};
  return guarded(t, [&] { return make_tile_op(op, std::move(args), std::move(attrs), span(t)); });
}

// True when the bracket opened at peek(1) holds a region (`:+` or a lone `:`) at its own depth.
bool Parser::at_region() const {
  if (!(peek().kind == Tok::kIdent && at("[", 1))) return false;
  int depth = 0;
  for (size_t k = 1;; ++k) {
    const Token& t = peek(k);
    if (t.kind == Tok::kEnd) return false;
    if (t.kind != Tok::kPunct) continue;
    if (t.text == "[" || t.text == "(") ++depth;
    else if (t.text == "]" || t.text == ")") {
      if (--depth == 0) return false;
    } else if (depth == 1 && (t.text == ":+" || t.text == ":")) {
      return true;
    }
  }
}

TileArg Parser::tile_arg() {
  if (!at_region()) return TileArg(expr());
  Token t = peek();
  Buffer b = buffer_ref();
  expect("[");
  std::vector<Range> ranges;
  if (!accept(":")) {
    do {
      Expr min = expr();
      expect(":+");
      ranges.emplace_back(min, expr());
    } while (accept(","));
  }
  expect("]");
  return TileArg(BufferRegion(b, std::move(ranges)));
}

}  // namespace tl::ir_text
