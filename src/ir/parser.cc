#include "ir/parser.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <unordered_map>

#include "ir/error.h"
#include "ir/ir_lexer.h"

namespace tl {

namespace {

using namespace ir_text;

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
 public:
  Parser(const std::string& text, const std::string& filename)
      : file_(std::make_shared<const std::string>(filename)), toks_(tokenize(text, filename)) {}

  void predefine(const std::map<std::string, Var>& vars, const std::map<std::string, Buffer>& buffers) {
    for (auto& [n, v] : vars) define(n, v);
    for (auto& [n, b] : buffers) define(n, b);
  }

  PrimFunc func() {
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

  Stmt stmt_list() {
    free_decls();
    Stmt s = stmts(nullptr);
    expect_end();
    return s;
  }

  Expr expr_only() {
    Expr e = expr();
    expect_end();
    return e;
  }

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
  Buffer buffer_ref() {
    const Token& t = peek();
    std::string n = ident("a buffer name");
    const Buffer* b = find_buffer(n);
    if (!b) fail(t, "undefined buffer '" + n + "' (declare it as a parameter, with alloc, or in free[...])");
    return *b;
  }

  // ---- declarations ----
  DataType dtype() {
    const Token& t = peek();
    std::string n = ident("a dtype");
    DataType dt;
    if (!try_parse_dtype(n, &dt)) fail(t, "unknown dtype '" + n + "'");
    return dt;
  }

  // name [: dtype]  (int32 when omitted). The var is created, not yet in scope.
  Var var_decl(DataType dflt = DataType::Int32()) {
    std::string n = ident("a variable name");
    DataType dt = accept(":") ? dtype() : dflt;
    return Var(n, dt);
  }

  // name ':' scope dtype '[' shape ']' ['strides' '[' ... ']']  (after the name and colon)
  Buffer buffer_decl_rest(const std::string& name, const Token& at) {
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

  bool at_buffer_decl() const { return peek(2).kind == Tok::kIdent && is_scope_name(peek(2).text); }

  Param param() {
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

  void free_decls() {
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
  bool at_attr_map(bool body_follows = true) const {
    if (!(at("{") && (peek(1).kind == Tok::kIdent || peek(1).kind == Tok::kString) && at("=", 2))) return false;
    if (!body_follows) return true;
    int depth = 0;
    for (size_t k = 0; peek(k).kind != Tok::kEnd; ++k) {
      if (at("{", k)) ++depth;
      else if (at("}", k) && --depth == 0) return at("{", k + 1);
    }
    return false;
  }

  AttrMap attr_map() {
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

  int64_t int_literal(bool negative, const Token& t) {
    Expr e = number(negative);
    if (!e.as<IntImmNode>()) fail(t, "expected an integer");
    return e.as<IntImmNode>()->value;
  }

  Attr attr_value() {
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

  // ---- statements ----
  Stmt block() {
    expect("{");
    Stmt s = stmts("}");
    expect("}");
    return s;
  }

  // Statements up to `end` (nullptr: end of input). A let/alloc without braces takes the rest.
  Stmt stmts(const char* end) {
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

  Stmt binding(const Token& t, const char* end) {
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
  static Expr adopt_literal(const Expr& e, DataType t) {
    if (e.dtype() == t || t.lanes != 1) return e;
    if (auto* i = e.as<IntImmNode>(); i && (t.is_integer() || t.is_bool() || t.is_float()))
      return make_int(i->value, t);  // exact for int64; bool and float targets convert
    if (auto* f = e.as<FloatImmNode>(); f && t.is_float()) return make_float(f->value, t);
    return e;
  }

  Stmt stmt() {
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

  Stmt for_stmt() {
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

  Stmt if_stmt() {
    Token t = next();
    expect("(");
    Expr cond = expr();
    expect(")");
    Stmt then_case = block();
    Stmt else_case;
    if (accept_word("else")) else_case = at_word("if") ? if_stmt() : block();
    return guarded(t, [&] { return make_if(cond, then_case, else_case, span(t)); });
  }

  Stmt kernel_stmt() {
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

  std::vector<Var> var_decls() {  // after '[', through ']'
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
  Stmt tile_op(const std::string& op, const Token& t) {
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
  bool at_region() const {
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

  TileArg tile_arg() {
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

  // ---- expressions ----
  std::vector<Expr> exprs(const char* end) {
    std::vector<Expr> out;
    if (at(end)) return out;
    do {
      out.push_back(expr());
    } while (accept(","));
    return out;
  }

  static int binary_op(const Token& t, BinOp* op) {
    if (t.kind != Tok::kPunct) return 0;
    static const std::unordered_map<std::string, std::pair<BinOp, int>> table = {
        {"||", {BinOp::kOr, 1}},      {"&&", {BinOp::kAnd, 2}},   {"|", {BinOp::kBitOr, 3}},
        {"^", {BinOp::kBitXor, 4}},   {"&", {BinOp::kBitAnd, 5}}, {"==", {BinOp::kEQ, 6}},
        {"!=", {BinOp::kNE, 6}},      {"<", {BinOp::kLT, 7}},     {"<=", {BinOp::kLE, 7}},
        {">", {BinOp::kGT, 7}},       {">=", {BinOp::kGE, 7}},    {"<<", {BinOp::kShl, 8}},
        {">>", {BinOp::kShr, 8}},     {"+", {BinOp::kAdd, 9}},    {"-", {BinOp::kSub, 9}},
        {"*", {BinOp::kMul, 10}},     {"/", {BinOp::kDiv, 10}},   {"%", {BinOp::kMod, 10}}};
    auto it = table.find(t.text);
    if (it == table.end()) return 0;
    *op = it->second.first;
    return it->second.second;
  }

  Expr expr(int min_prec = 1) {
    DepthGuard guard(this);
    Expr lhs = unary();
    // Each operator of a left-associative chain deepens the tree by one level.
    std::vector<DepthGuard> chain;
    for (;;) {
      BinOp op;
      Token t = peek();
      int prec = binary_op(t, &op);
      if (prec == 0 || prec < min_prec) return lhs;
      chain.emplace_back(this);
      next();
      Expr rhs = expr(prec + 1);
      lhs = binary(op, lhs, rhs, t);
    }
  }

  // Rebuilds a binary node as written when its operands agree in type; otherwise (hand-written
  // text) the constructor promotes, converts or rejects.
  Expr binary(BinOp op, const Expr& a, const Expr& b, const Token& t) {
    DataType ta = a.dtype();
    bool int_only = op == BinOp::kFloorDiv || op == BinOp::kFloorMod || op == BinOp::kBitAnd ||
                    op == BinOp::kBitOr || op == BinOp::kBitXor || op == BinOp::kShl || op == BinOp::kShr;
    bool direct = ta == b.dtype() && !ta.is_void() && !ta.is_handle() && !(int_only && ta.is_float()) &&
                  !(binop_is_logical(op) && !ta.is_bool());
    if (!direct) return guarded(t, [&] { return make_binary(op, a, b); });
    DataType result = (binop_is_compare(op) || binop_is_logical(op)) ? DataType::Bool().with_lanes(ta.lanes) : ta;
    return Expr(std::make_shared<BinaryNode>(result, op, a, b));
  }

  Expr unary() {
    DepthGuard guard(this);
    Token t = peek();
    if (at("-")) {
      const Token& n = peek(1);
      double v;
      DataType dt;
      if (n.kind == Tok::kNumber || (n.kind == Tok::kIdent && special_float(n.text, &v, &dt))) {
        next();
        return number(true);
      }
    }
    UnOp op;
    if (accept("-")) op = UnOp::kNeg;
    else if (accept("!")) op = UnOp::kNot;
    else if (accept("~")) op = UnOp::kBitNot;
    else return primary();
    Expr a = unary();
    DataType ta = a.dtype();
    bool direct = (op == UnOp::kNeg && !ta.is_bool() && !ta.is_handle() && !ta.is_void()) ||
                  (op == UnOp::kNot && ta.is_bool()) || (op == UnOp::kBitNot && ta.is_integer());
    if (!direct) return guarded(t, [&] { return make_unary(op, a); });
    return Expr(std::make_shared<UnaryNode>(ta, op, a));
  }

  // A numeric literal (the current token), negated when a '-' preceded it.
  Expr number(bool negative) {
    Token t = next();
    double fv;
    DataType dt;
    if (t.kind == Tok::kIdent && special_float(t.text, &fv, &dt)) return make_float(negative ? -fv : fv, dt);
    if (t.kind != Tok::kNumber) fail(t, "expected a number, got " + describe(t));
    size_t i = numeric_prefix(t.text);
    std::string digits = t.text.substr(0, i), suffix = t.text.substr(i);
    bool is_float = digits.find_first_of(".eE") != std::string::npos;
    if (!is_float && int_suffix_type(suffix, &dt)) {
      errno = 0;
      unsigned long long mag = std::strtoull(digits.c_str(), nullptr, 10);
      bool fits = errno == 0 && (negative ? mag <= (1ULL << 63)
                                          : (mag <= static_cast<unsigned long long>(INT64_MAX) ||
                                             (dt.is_uint() && dt.bits == 64)));
      if (!fits) fail(t, "integer literal " + std::string(negative ? "-" : "") + t.text + " is out of range");
      int64_t v = negative ? static_cast<int64_t>(0ULL - mag) : static_cast<int64_t>(mag);
      return make_int(v, dt);
    }
    if (suffix.empty()) dt = DataType::Float32();
    else if (!float_suffix_type(suffix, &dt)) fail(t, "unknown literal suffix '" + suffix + "' in " + t.text);
    double v = std::strtod(digits.c_str(), nullptr);
    return make_float(negative ? -v : v, dt);
  }

  // ident '<' dtype '>' '(' : a call with an explicit result type.
  bool at_typed_call() const {
    DataType dt;
    return at("<", 1) && peek(2).kind == Tok::kIdent && try_parse_dtype(peek(2).text, &dt) && at(">", 3) &&
           at("(", 4);
  }

  std::vector<Expr> call_args() {
    expect("(");
    std::vector<Expr> args = exprs(")");
    expect(")");
    return args;
  }

  Expr call(const std::string& op, const Token& t) {
    std::optional<DataType> dt;
    if (accept("<")) {
      dt = dtype();
      expect(">");
    }
    std::vector<Expr> args = call_args();
    DataType result = dt ? *dt : args.empty() ? DataType::Void() : args[0].dtype();
    return guarded(t, [&] { return make_call(result, op, std::move(args)); });
  }

  int lanes_literal() {
    const Token& t = peek();
    int64_t v = int_literal(false, t);
    if (v < 1 || v > 65535) fail(t, "lane count must be in [1, 65535]");
    return static_cast<int>(v);
  }

  Expr primary() {
    Token t = peek();
    if (accept("(")) {
      Expr e = expr();
      expect(")");
      return e;
    }
    if (t.kind == Tok::kNumber) return number(false);
    if (t.kind == Tok::kString) return make_string(next().text);
    if (t.kind != Tok::kIdent) fail(t, "expected an expression, got " + describe(t));
    double fv;
    DataType fdt;
    const std::string& w = t.text;
    if (special_float(w, &fv, &fdt)) return number(false);
    if (w == "true" || w == "false") {
      next();
      return make_bool(w == "true");
    }
    if (at("(", 1) || (at_typed_call() && !find_var(w))) {
      next();
      if (w == "select") {
        auto a = call_args();
        if (a.size() != 3) fail(t, "select takes 3 arguments (cond, true_value, false_value)");
        if (a[0].dtype().is_bool() && a[1].dtype() == a[2].dtype())
          return Expr(std::make_shared<SelectNode>(a[1].dtype(), a[0], a[1], a[2]));
        return guarded(t, [&] { return make_select(a[0], a[1], a[2]); });
      }
      if (w == "cast" || w == "const") {
        expect("<");
        DataType dt = dtype();
        expect(">");
        expect("(");
        if (w == "const") {
          bool neg = accept("-");
          Expr v = number(neg);
          expect(")");
          if (auto* i = v.as<IntImmNode>(); i && (dt.is_integer() || dt.is_bool()))
            return Expr(std::make_shared<IntImmNode>(dt, i->value));
          if (!dt.is_float()) fail(t, "const<" + dt.str() + "> needs an integer value");
          double d = v.as<IntImmNode>() ? static_cast<double>(v.as<IntImmNode>()->value) : v.as<FloatImmNode>()->value;
          return Expr(std::make_shared<FloatImmNode>(dt, d));
        }
        Expr v = expr();
        expect(")");
        if (v.dtype().lanes != dt.lanes) return guarded(t, [&] { return make_cast(dt, v); });
        return Expr(std::make_shared<CastNode>(dt, v));
      }
      if (w == "ramp") {
        expect("(");
        Expr base = expr();
        expect(",");
        Expr stride = expr();
        expect(",");
        int lanes = lanes_literal();
        expect(")");
        if (base.dtype() != stride.dtype() || base.dtype().lanes != 1)
          return guarded(t, [&] { return make_ramp(base, stride, lanes); });
        return Expr(std::make_shared<RampNode>(base, stride, lanes));
      }
      if (w == "broadcast") {
        expect("(");
        Expr v = expr();
        expect(",");
        int lanes = lanes_literal();
        expect(")");
        if (v.dtype().lanes != 1) fail(t, "broadcast of a vector value");
        return Expr(std::make_shared<BroadcastNode>(v, lanes));
      }
      static const std::unordered_map<std::string, BinOp> fn_ops = {{"min", BinOp::kMin},
                                                                     {"max", BinOp::kMax},
                                                                     {"floordiv", BinOp::kFloorDiv},
                                                                     {"floormod", BinOp::kFloorMod}};
      if (auto it = fn_ops.find(w); it != fn_ops.end() && at("(")) {
        auto a = call_args();
        if (a.size() != 2) fail(t, w + " takes 2 arguments");
        return binary(it->second, a[0], a[1], t);
      }
      return call(w, t);
    }
    if (w == "call" && peek(1).kind == Tok::kString) {
      next();
      std::string op = next().text;
      return call(op, t);
    }
    if (at("[", 1)) {
      Buffer b = buffer_ref();
      expect("[");
      std::vector<Expr> idx = exprs("]");
      expect("]");
      return guarded(t, [&] { return make_load(b, std::move(idx)); });
    }
    next();
    const Var* v = find_var(w);
    if (!v) fail(t, "undefined variable '" + w + "' (declare it in dyn[...], free[...], or a for/let/kernel)");
    return *v;
  }

  std::shared_ptr<const std::string> file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  std::unordered_map<std::string, std::vector<Var>> vars_;
  std::unordered_map<std::string, std::vector<Buffer>> buffers_;
  std::vector<std::pair<std::string, bool>> trail_;
  int depth_ = 0;
};

}  // namespace

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
