// The textual-IR parser (internal to src/ir/parser*.cc, not installed; the entry points are
// parse_func / parse_stmt / parse_expr in parser.h, the grammar is docs/IR_TEXT.md).
//
// One recursive-descent class over the tokens of ir_lexer.h. Its small token and scope helpers are
// defined here; the grammar lives in
//   parser.cc       the entry points, the function header, declarations and attribute maps
//   parser_stmt.cc  statements (let/alloc bindings, for, if, kernel, attr, stores, tile ops)
//   parser_expr.cc  expressions (precedence climbing, literals, calls, casts, loads)
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/ir_lexer.h"
#include "ir/stmt.h"

namespace tl::ir_text {

class Parser {
 public:
  Parser(const std::string& text, const std::string& filename)
      : file_(std::make_shared<const std::string>(filename)), toks_(tokenize(text, filename)) {}

  void predefine(const std::map<std::string, Var>& vars, const std::map<std::string, Buffer>& buffers) {
    for (auto& [n, v] : vars) define(n, v);
    for (auto& [n, b] : buffers) define(n, b);
  }

  PrimFunc func();     // a whole `func @name(...) {...}`
  Stmt stmt_list();    // [free[...]] statements, to the end of the input
  Expr expr_only();    // one expression, to the end of the input

 private:
  // Recursion depth of statements and expressions: deeper text is refused with an error rather
  // than overflowing the stack (here or in the passes that would walk the IR).
  static constexpr int kMaxDepth = 2000;
  struct DepthGuard {
    Parser* p;
    DepthGuard(Parser* parser) : p(parser) {  // NOLINT
      if (++p->depth_ > kMaxDepth)
        p->fail(p->peek(), "nesting too deep (more than " + std::to_string(kMaxDepth) +
                               " levels of statements and expressions); split the function or the expression");
    }
    DepthGuard(DepthGuard&& o) noexcept : p(o.p) { o.p = nullptr; }
    DepthGuard(const DepthGuard&) = delete;
    ~DepthGuard() {
      if (p) --p->depth_;
    }
  };

  // ---- tokens ----
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool at(const char* punct, size_t k = 0) const { return peek(k).kind == Tok::kPunct && peek(k).text == punct; }
  bool at_word(const char* w, size_t k = 0) const { return peek(k).kind == Tok::kIdent && peek(k).text == w; }
  bool accept(const char* punct) {
    if (!at(punct)) return false;
    next();
    return true;
  }
  bool accept_word(const char* w) {
    if (!at_word(w)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd: return "end of input";
      case Tok::kString: return "string literal";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] void fail(const Token& at, const std::string& msg) const {
    throw_error<SyntaxError>(*file_, ":", at.line, ":", at.col, ": ", msg);
  }
  void expect(const char* punct) {
    if (!accept(punct)) fail(peek(), std::string("expected '") + punct + "', got " + describe(peek()));
  }
  void expect_word(const char* w) {
    if (!accept_word(w)) fail(peek(), std::string("expected '") + w + "', got " + describe(peek()));
  }
  void expect_end() {
    if (peek().kind != Tok::kEnd) fail(peek(), "unexpected " + describe(peek()) + " after the end of the input");
  }
  std::string ident(const char* what) {
    if (peek().kind != Tok::kIdent) fail(peek(), std::string("expected ") + what + ", got " + describe(peek()));
    return next().text;
  }
  Span span(const Token& t) const { return Span{file_, t.line, t.col}; }

  // Runs a constructor; its TypeError/ValueError becomes a SyntaxError at `at`.
  template <typename F>
  auto guarded(const Token& at, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const SyntaxError&) {
      throw;
    } catch (const Error& e) {
      fail(at, e.what());
    }
  }

  // ---- scopes: a name maps to a stack of definitions; marks undo definitions on scope exit ----
  void define(const std::string& name, const Var& v) {
    vars_[name].push_back(v);
    trail_.push_back({name, false});
  }
  void define(const std::string& name, const Buffer& b) {
    buffers_[name].push_back(b);
    trail_.push_back({name, true});
  }
  size_t mark() const { return trail_.size(); }
  void release(size_t m) {
    while (trail_.size() > m) {
      auto& [name, is_buffer] = trail_.back();
      if (is_buffer) buffers_[name].pop_back();
      else vars_[name].pop_back();
      trail_.pop_back();
    }
  }
  const Var* find_var(const std::string& n) const {
    auto it = vars_.find(n);
    return it == vars_.end() || it->second.empty() ? nullptr : &it->second.back();
  }
  const Buffer* find_buffer(const std::string& n) const {
    auto it = buffers_.find(n);
    return it == buffers_.end() || it->second.empty() ? nullptr : &it->second.back();
  }

  // ---- declarations and attributes (parser.cc) ----
  Buffer buffer_ref();
  DataType dtype();
  Var var_decl(DataType dflt = DataType::Int32());
  Buffer buffer_decl_rest(const std::string& name, const Token& at);
  bool at_buffer_decl() const;
  Param param();
  void free_decls();
  bool at_attr_map(bool body_follows = true) const;
  AttrMap attr_map();
  int64_t int_literal(bool negative, const Token& t);
  Attr attr_value();

  // ---- statements (parser_stmt.cc) ----
  Stmt block();
  Stmt stmts(const char* end);
  Stmt binding(const Token& t, const char* end);
  static Expr adopt_literal(const Expr& e, DataType t);
  Stmt stmt();
  Stmt for_stmt();
  Stmt if_stmt();
  Stmt kernel_stmt();
  std::vector<Var> var_decls();
  Stmt tile_op(const std::string& op, const Token& t);
  bool at_region() const;
  TileArg tile_arg();

  // ---- expressions (parser_expr.cc) ----
  std::vector<Expr> exprs(const char* end);
  static int binary_op(const Token& t, BinOp* op);
  Expr expr(int min_prec = 1);
  Expr binary(BinOp op, const Expr& a, const Expr& b, const Token& t);
  Expr unary();
  Expr number(bool negative);
  bool at_typed_call() const;
  std::vector<Expr> call_args();
  Expr call(const std::string& op, const Token& t);
  int lanes_literal();
  Expr primary();

  std::shared_ptr<const std::string> file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::unordered_map<std::string, std::vector<Var>> vars_;
  std::unordered_map<std::string, std::vector<Buffer>> buffers_;
  std::vector<std::pair<std::string, bool>> trail_;
  int depth_ = 0;
};

}  // namespace tl::ir_text
