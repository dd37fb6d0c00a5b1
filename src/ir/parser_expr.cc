// Expressions of the textual IR (the Parser of parser_impl.h).
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <utility>

#include "ir/error.h"
#include "ir/parser_impl.h"

namespace tl::ir_text {

std::vector<Expr> Parser::exprs(const char* end) {
  std::vector<Expr> out;
  if (at(end)) return out;
  do {
    out.push_back(expr());
  } while (accept(","));
  return out;
}

int Parser::binary_op(const Token& t, BinOp* op) {
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

Expr Parser::expr(int min_prec) {
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
Expr Parser::binary(BinOp op, const Expr& a, const Expr& b, const Token& t) {
  DataType ta = a.dtype();
  bool int_only = op == BinOp::kFloorDiv || op == BinOp::kFloorMod || op == BinOp::kBitAnd ||
                  op == BinOp::kBitOr || op == BinOp::kBitXor || op == BinOp::kShl || op == BinOp::kShr;
  bool direct = ta == b.dtype() && !ta.is_void() && !ta.is_handle() && !(int_only && ta.is_float()) &&
                !(binop_is_logical(op) && !ta.is_bool());
  if (!direct) return guarded(t, [&] { return make_binary(op, a, b); });
  DataType result = (binop_is_compare(op) || binop_is_logical(op)) ? DataType::Bool().with_lanes(ta.lanes) : ta;
  return Expr(std::make_shared<BinaryNode>(result, op, a, b));
}

Expr Parser::unary() {
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
Expr Parser::number(bool negative) {
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
bool Parser::at_typed_call() const {
  DataType dt;
  return at("<", 1) && peek(2).kind == Tok::kIdent && try_parse_dtype(peek(2).text, &dt) && at(">", 3) &&
         at("(", 4);
}

std::vector<Expr> Parser::call_args() {
  expect("(");
  std::vector<Expr> args = exprs(")");
  expect(")");
  return args;
}

Expr Parser::call(const std::string& op, const Token& t) {
  std::optional<DataType> dt;
  if (accept("<")) {
    dt = dtype();
    expect(">");
  }
  std::vector<Expr> args = call_args();
  DataType result = dt ? *dt : args.empty() ? DataType::Void() : args[0].dtype();
  return guarded(t, [&] { return make_call(result, op, std::move(args)); });
}

int Parser::lanes_literal() {
  const Token& t = peek();
  int64_t v = int_literal(false, t);
  if (v < 1 || v > 65535) fail(t, "lane count must be in [1, 65535]");
  return static_cast<int>(v);
}

Expr Parser::primary() {
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

}  // namespace tl::ir_text
