#include "ir/printer.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/scope_walk.h"

namespace tl {

namespace {

// Binding strength of infix operators; a child binding less tightly than its parent is wrapped.
int precedence(BinOp op) {
  switch (op) {
    case BinOp::kMul:
    case BinOp::kDiv:
    case BinOp::kMod: return 10;
    case BinOp::kAdd:
    case BinOp::kSub: return 9;
    case BinOp::kShl:
    case BinOp::kShr: return 8;
    case BinOp::kLT:
    case BinOp::kLE:
    case BinOp::kGT:
    case BinOp::kGE: return 7;
    case BinOp::kEQ:
    case BinOp::kNE: return 6;
    case BinOp::kBitAnd: return 5;
    case BinOp::kBitXor: return 4;
    case BinOp::kBitOr: return 3;
    case BinOp::kAnd: return 2;
    case BinOp::kOr: return 1;
    default: return 100;  // printed as a call: min(a, b), floordiv(a, b)
  }
}

const char* infix(BinOp op) {
  switch (op) {
    case BinOp::kAdd: return "+";
    case BinOp::kSub: return "-";
    case BinOp::kMul: return "*";
    case BinOp::kDiv: return "/";
    case BinOp::kMod: return "%";
    case BinOp::kEQ: return "==";
    case BinOp::kNE: return "!=";
    case BinOp::kLT: return "<";
    case BinOp::kLE: return "<=";
    case BinOp::kGT: return ">";
    case BinOp::kGE: return ">=";
    case BinOp::kAnd: return "&&";
    case BinOp::kOr: return "||";
    case BinOp::kBitAnd: return "&";
    case BinOp::kBitOr: return "|";
    case BinOp::kBitXor: return "^";
    case BinOp::kShl: return "<<";
    case BinOp::kShr: return ">>";
    default: return nullptr;
  }
}

// Literal suffixes; int32 and (in hand-written text) float32 need none.
std::string int_suffix(DataType t) {
  if (t == DataType::Int32()) return "";
  if (t.is_int()) return "i" + std::to_string(t.bits);
  if (t.is_uint()) return "u" + std::to_string(t.bits);
  return "";
}

std::string float_suffix(DataType t) {
  switch (t.code) {
    case DataType::kFloat: return "f" + std::to_string(t.bits);
    case DataType::kBFloat: return "bf16";
    case DataType::kFloat8E4M3: return "f8e4m3";
    case DataType::kFloat8E5M2: return "f8e5m2";
    case DataType::kFloat8E8M0: return "f8e8m0";
    case DataType::kFloat4E2M1: return "f4e2m1";
    default: return "f32";
  }
}

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the byte does not start one.
size_t utf8_sequence(const std::string& s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  unsigned char d = byte(i + 1);  // no overlong forms, surrogates or code points past U+10FFFF
  if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d >= 0xA0) || (c == 0xF0 && d < 0x90) || (c == 0xF4 && d >= 0x90))
    return 0;
  return n;
}

// U+0085, U+2028, U+2029: line breaks to Python's splitlines() and other readers of the text.
bool is_unicode_line_break(const std::string& s, size_t i, size_t n) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  return (n == 2 && byte(0) == 0xC2 && byte(1) == 0x85) ||
         (n == 3 && byte(0) == 0xE2 && byte(1) == 0x80 && (byte(2) == 0xA8 || byte(2) == 0xA9));
}

// A double-quoted literal. Valid UTF-8 stays readable; control characters, Unicode line breaks and
// bytes that are not UTF-8 are escaped, so the text is always valid UTF-8 (it crosses into Python)
// and a literal never spans lines.
std::string escape(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      if (size_t n = utf8_sequence(s, i); n && !is_unicode_line_break(s, i, n)) {
        out += s.substr(i, n);
        i += n - 1;
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
        out += buf;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// Shortest decimal form that reads back to the same double; "inf", "-inf", "nan" for the rest.
std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // Shortest form that reads back exactly; whole numbers below 1e15 print positionally ("10.0",
  // not "1e+01").
  if (std::fabs(v) < 1e15 && v == std::trunc(v)) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
  }
  for (int p = 1; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string float_literal(double v, DataType t) {
  std::string s = format_double(v);
  bool special = std::isnan(v) || std::isinf(v);
  return special ? s + "_" + float_suffix(t) : s + float_suffix(t);
}

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A name that lexes as one identifier token (dots allowed inside, as in "tl.printf").
bool is_dotted_ident(const std::string& s) {
  if (s.empty() || !is_ident_start(s[0]) || s.back() == '.' || s.find("..") != std::string::npos) return false;
  for (char c : s)
    if (!is_ident_char(c) && c != '.') return false;
  return true;
}

const std::set<std::string>& reserved_words() {
  static const std::set<std::string> words = {
      // statements and headers
      "func", "dyn", "free", "strides", "evaluate", "let", "alloc", "for", "in", "if", "else", "attr",
      "kernel", "tileop", "break", "continue",
      // expressions
      "true", "false", "none", "inf", "nan", "select", "cast", "ramp", "broadcast", "const", "call", "min",
      "max", "floordiv", "floormod"};
  return words;
}

// `inf_f32`, `nan_bf16`: spellings of non-finite float literals.
bool is_special_float_word(const std::string& s) {
  for (const char* base : {"inf_", "nan_"}) {
    if (s.rfind(base, 0) == 0) {
      std::string sfx = s.substr(4);
      for (const char* f : {"f16", "f32", "f64", "bf16", "f8e4m3", "f8e5m2", "f8e8m0", "f4e2m1"})
        if (sfx == f) return true;
    }
  }
  return false;
}

bool is_reserved(const std::string& s) {
  DataType t;
  return reserved_words().count(s) || is_special_float_word(s) || try_parse_dtype(s, &t);
}

// Names of variables and buffers, scoped like the text: a definition's name is taken while its
// scope is open and free again after it, so sibling loops both print `i`, while nested scopes
// and free symbols get distinct names (`i`, `i_1`). Canonical mode gives every definition a
// fresh v<N>/b<N> instead. A symbol used outside any definition keeps its name for good.
class Namer {
 public:
  explicit Namer(bool canonical) : canonical_(canonical) {}

  std::string var(const VarNode* v) { return use(v, v->name, false); }
  std::string buffer(const BufferNode* b) { return use(b, b->name, true); }
  std::string define_var(const Var& v) { return define(v.get(), v.name(), false); }
  std::string define_buffer(const Buffer& b) { return define(b.get(), b.name(), true); }

  size_t mark() const { return saved_.size(); }
  void release(size_t mark) {
    while (saved_.size() > mark) {
      auto& [key, old] = saved_.back();
      if (!canonical_) taken_.erase(names_[key]);
      if (old) names_[key] = *old;
      else names_.erase(key);
      saved_.pop_back();
    }
  }

 private:
  std::string use(const void* key, const std::string& base, bool is_buffer) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    return names_[key] = pick(base, is_buffer);
  }
  std::string define(const void* key, const std::string& base, bool is_buffer) {
    auto it = names_.find(key);
    // Normal mode: a symbol already named (a parameter that is also a dynamic dim, a variable
    // rebound inside its own scope) keeps its name.
    if (!canonical_ && it != names_.end()) return it->second;
    saved_.push_back({key, it == names_.end() ? std::nullopt : std::optional<std::string>(it->second)});
    return names_[key] = pick(base, is_buffer);
  }
  std::string pick(const std::string& base, bool is_buffer) {
    if (canonical_) return (is_buffer ? "b" : "v") + std::to_string(is_buffer ? next_buffer_++ : next_var_++);
    std::string name = sanitize(base);
    std::string cand = name;
    for (int i = 1; taken_.count(cand); ++i) cand = name + "_" + std::to_string(i);
    taken_.insert(cand);
    return cand;
  }
  static std::string sanitize(const std::string& s) {
    std::string out;
    for (char c : s) out += is_ident_char(c) ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
    if (is_reserved(out)) out += "_";
    return out;
  }

  bool canonical_;
  std::unordered_map<const void*, std::string> names_;
  std::vector<std::pair<const void*, std::optional<std::string>>> saved_;
  std::unordered_set<std::string> taken_;  // names of open definitions and of free symbols
  int next_var_ = 0, next_buffer_ = 0;
};

// Variables and buffers used where no enclosing scope defines them, in first-use order.
class FreeSymbols : public ScopeWalker {
 public:
  std::vector<Var> vars;
  std::vector<Buffer> buffers;

 protected:
  void on_free_var(const Var& v) override {
    if (seen_.insert(v.get()).second) vars.push_back(v);
  }
  void on_free_buffer(const Buffer& b) override {
    if (!seen_.insert(b.get()).second) return;
    for (auto& e : b.shape()) walk_expr(e);
    for (auto& e : b->strides) walk_expr(e);
    buffers.push_back(b);
  }

 private:
  std::unordered_set<const void*> seen_;
};

class Printer {
 public:
  explicit Printer(const PrintOptions& options)
      : canonical_(options.canonical_names), names_(options.canonical_names) {}

  std::string expr(const Expr& e) {
    std::ostringstream os;
    print(os, e, 0);
    return os.str();
  }

  void print(std::ostream& os, const Expr& e, int parent_prec) {
    if (!e.defined()) {
      os << "<undef>";
      return;
    }
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        auto* n = e.as<IntImmNode>();
        if (n->dtype.lanes != 1) os << "const<" << n->dtype.str() << ">(" << n->value << ")";
        else if (n->dtype.is_bool()) os << (n->value ? "true" : "false");
        else os << n->value << int_suffix(n->dtype);
        return;
      }
      case ExprKind::kFloatImm: {
        auto* n = e.as<FloatImmNode>();
        if (n->dtype.lanes != 1) os << "const<" << n->dtype.str() << ">(" << format_double(n->value) << ")";
        else os << float_literal(n->value, n->dtype);
        return;
      }
      case ExprKind::kStringImm: os << escape(e.as<StringImmNode>()->value); return;
      case ExprKind::kVar: os << names_.var(e.as<VarNode>()); return;
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        const char* op = infix(n->op);
        if (!op) {
          os << binop_name(n->op) << "(";
          print(os, n->a, 0);
          os << ", ";
          print(os, n->b, 0);
          os << ")";
          return;
        }
        int p = precedence(n->op);
        bool paren = p < parent_prec;
        if (paren) os << "(";
        print(os, n->a, p);
        os << " " << op << " ";
        print(os, n->b, p + 1);  // left-associative: an equal-precedence right child needs parens
        if (paren) os << ")";
        return;
      }
      case ExprKind::kUnary: {
        auto* n = e.as<UnaryNode>();
        os << (n->op == UnOp::kNeg ? "-" : n->op == UnOp::kNot ? "!" : "~");
        // `-5` reads back as the literal -5, so a negation node around a literal keeps parens.
        bool literal = n->a.as<IntImmNode>() || n->a.as<FloatImmNode>();
        if (literal) os << "(";
        print(os, n->a, literal ? 0 : 50);
        if (literal) os << ")";
        return;
      }
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        os << "select(";
        print(os, n->cond, 0);
        os << ", ";
        print(os, n->true_value, 0);
        os << ", ";
        print(os, n->false_value, 0);
        os << ")";
        return;
      }
      case ExprKind::kCast: {
        auto* n = e.as<CastNode>();
        os << "cast<" << n->dtype.str() << ">(";
        print(os, n->value, 0);
        os << ")";
        return;
      }
      case ExprKind::kBufferLoad: {
        auto* n = e.as<BufferLoadNode>();
        os << names_.buffer(n->buffer.get()) << "[";
        for (size_t i = 0; i < n->indices.size(); ++i) {
          if (i) os << ", ";
          print(os, n->indices[i], 0);
        }
        os << "]";
        return;
      }
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        bool plain = is_dotted_ident(n->op) && !is_reserved(n->op);
        if (plain) os << n->op;
        else os << "call " << escape(n->op);
        DataType implied = n->args.empty() ? DataType::Void() : n->args[0].dtype();
        if (n->dtype != implied) os << "<" << n->dtype.str() << ">";
        os << "(";
        for (size_t i = 0; i < n->args.size(); ++i) {
          if (i) os << ", ";
          print(os, n->args[i], 0);
        }
        os << ")";
        return;
      }
      case ExprKind::kRamp: {
        auto* n = e.as<RampNode>();
        os << "ramp(";
        print(os, n->base, 0);
        os << ", ";
        print(os, n->stride, 0);
        os << ", " << n->lanes << ")";
        return;
      }
      case ExprKind::kBroadcast: {
        auto* n = e.as<BroadcastNode>();
        os << "broadcast(";
        print(os, n->value, 0);
        os << ", " << n->lanes << ")";
        return;
      }
    }
  }

  std::string expr_list(const std::vector<Expr>& l) {
    std::string s;
    for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + expr(l[i]);
    return s;
  }

  std::string var_decl(const Var& v) { return names_.define_var(v) + ": " + v.dtype().str(); }

  // "name: scope dtype[shape] strides[...]"; the shape is printed before the name is defined.
  std::string buffer_decl(const Buffer& b) {
    std::string shape = expr_list(b.shape());
    std::string strides = b->strides.empty() ? "" : " strides[" + expr_list(b->strides) + "]";
    std::string name = names_.define_buffer(b);
    return name + ": " + scope_name(b.scope()) + " " + b.dtype().str() + "[" + shape + "]" + strides;
  }

  std::string region(const BufferRegion& r) {
    std::ostringstream os;
    os << names_.buffer(r.buffer.get()) << "[";
    if (r.region.empty()) os << ":";  // rank 0; `A[]` would read as a load
    for (size_t i = 0; i < r.region.size(); ++i) {
      if (i) os << ", ";
      print(os, r.region[i].min, 0);
      os << " :+ ";
      print(os, r.region[i].extent, 0);
    }
    os << "]";
    return os.str();
  }

  std::string attr(const Attr& a) {
    std::ostringstream os;
    switch (a.kind()) {
      case Attr::kNone: os << "none"; break;
      case Attr::kBool: os << (a.as_bool() ? "true" : "false"); break;
      case Attr::kInt: os << a.as_int(); break;
      case Attr::kFloat: os << format_double(a.as_float()); break;
      case Attr::kStr: os << escape(a.as_str()); break;
      case Attr::kExpr: os << "e:(" << expr(a.as_expr()) << ")"; break;
      case Attr::kBuffer: os << "buf:" << names_.buffer(a.as_buffer().get()); break;
      case Attr::kIntList: {
        os << "[";
        auto& l = a.as_int_list();
        for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
        os << "]";
        break;
      }
      case Attr::kExprList: os << "e:[" << expr_list(a.as_expr_list()) << "]"; break;
      case Attr::kStrList: {
        os << "s:[";
        auto& l = a.as_str_list();
        for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << escape(l[i]);
        os << "]";
        break;
      }
    }
    return os.str();
  }

  std::string attrs(const AttrMap& m) {
    if (m.empty()) return "";
    std::string s = " {";
    bool first = true;
    for (auto& [k, v] : m) {
      if (!first) s += ", ";
      first = false;
      s += (is_dotted_ident(k) ? k : escape(k)) + " = " + attr(v);
    }
    return s + "}";
  }

  // Prints the statements of a block, nested sequences flattened. A Let/Allocate that is the
  // last statement of its block prints flat (its body follows at the same level); otherwise its
  // body is braced.
  void block(std::ostream& os, const Stmt& s, int indent) {
    std::vector<const Stmt*> items;
    flatten(s, &items);
    for (size_t i = 0; i < items.size(); ++i) stmt(os, *items[i], indent, i + 1 == items.size());
  }

  static void flatten(const Stmt& s, std::vector<const Stmt*>* out) {
    if (!s.defined()) return;
    if (auto* seq = s.as<SeqStmtNode>()) {
      for (auto& c : seq->seq) flatten(c, out);
      return;
    }
    out->push_back(&s);
  }

  void braced(std::ostream& os, const Stmt& body, int indent) {
    os << " {\n";
    block(os, body, indent + 1);
    os << std::string(indent * 2, ' ') << "}\n";
  }

  void flat_or_braced(std::ostream& os, const Stmt& body, int indent, bool last_in_block) {
    if (last_in_block) {
      os << "\n";
      block(os, body, indent);
    } else {
      braced(os, body, indent);
    }
  }

  void stmt(std::ostream& os, const Stmt& s, int indent, bool last_in_block) {
    std::string pad(indent * 2, ' ');
    size_t mark = names_.mark();
    switch (s.kind()) {
      case StmtKind::kSeq: block(os, s, indent); break;  // unreachable after flatten
      case StmtKind::kEvaluate: os << pad << "evaluate " << expr(s.as<EvaluateNode>()->value) << "\n"; break;
      case StmtKind::kLet: {
        auto* n = s.as<LetStmtNode>();
        std::string value = expr(n->value);
        os << pad << "let " << var_decl(n->var) << " = " << value;
        flat_or_braced(os, n->body, indent, last_in_block);
        break;
      }
      case StmtKind::kStore: {
        auto* n = s.as<BufferStoreNode>();
        os << pad << names_.buffer(n->buffer.get()) << "[" << expr_list(n->indices) << "] = " << expr(n->value)
           << "\n";
        break;
      }
      case StmtKind::kFor: {
        auto* n = s.as<ForNode>();
        std::string min = expr(n->min), extent = expr(n->extent);
        os << pad << "for " << var_decl(n->var) << " in " << for_kind_name(n->for_kind) << "(" << min << ", "
           << extent << ")" << attrs(n->annotations);
        braced(os, n->body, indent);
        break;
      }
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        os << pad << "if (" << expr(n->cond) << ") {\n";
        block(os, n->then_case, indent + 1);
        if (n->else_case.defined() && !is_nop(n->else_case)) {
          os << pad << "} else {\n";
          block(os, n->else_case, indent + 1);
        }
        os << pad << "}\n";
        break;
      }
      case StmtKind::kAllocate: {
        auto* n = s.as<AllocateNode>();
        os << pad << "alloc " << buffer_decl(n->buffer);
        flat_or_braced(os, n->body, indent, last_in_block);
        break;
      }
      case StmtKind::kAttr: {
        auto* n = s.as<AttrStmtNode>();
        os << pad << "attr " << escape(n->key) << " = " << attr(n->value);
        braced(os, n->body, indent);
        break;
      }
      case StmtKind::kKernel: {
        auto* n = s.as<KernelLaunchNode>();
        std::string grid = expr_list(n->grid), threads = expr_list(n->threads);
        std::string blocks, thread_vars;
        for (size_t i = 0; i < n->block_vars.size(); ++i) blocks += (i ? ", " : "") + var_decl(n->block_vars[i]);
        for (size_t i = 0; i < n->thread_vars.size(); ++i)
          thread_vars += (i ? ", " : "") + var_decl(n->thread_vars[i]);
        os << pad << "kernel(grid=[" << grid << "], blocks=[" << blocks << "], threads=[" << threads
           << "], thread_vars=[" << thread_vars << "])" << attrs(n->attrs);
        braced(os, n->body, indent);
        break;
      }
      case StmtKind::kTileOp: {
        auto* n = s.as<TileOpNode>();
        bool plain = is_dotted_ident(n->op) && !is_reserved(n->op);
        os << pad << (plain ? n->op : "tileop " + escape(n->op)) << "(";
        for (size_t i = 0; i < n->args.size(); ++i) {
          if (i) os << ", ";
          auto& a = n->args[i];
          os << (a.is_region() ? region(a.region) : expr(a.expr));
        }
        os << ")" << attrs(n->attrs) << "\n";
        break;
      }
      case StmtKind::kLoopControl:
        os << pad << (s.as<LoopControlNode>()->is_break ? "break" : "continue") << "\n";
        break;
    }
    names_.release(mark);
  }

  // "free[i: int32, S: shared float32[4]]", or "" when nothing is free.
  std::string free_decls(const FreeSymbols& fs) {
    if (fs.vars.empty() && fs.buffers.empty()) return "";
    std::string s = "free[";
    bool first = true;
    for (auto& v : fs.vars) {
      s += (first ? "" : ", ") + var_decl(v);
      first = false;
    }
    for (auto& b : fs.buffers) {
      s += (first ? "" : ", ") + buffer_decl(b);
      first = false;
    }
    return s + "]";
  }

  std::string stmt_text(const Stmt& s, bool declare_free) {
    std::ostringstream os;
    if (declare_free) {
      FreeSymbols fs;
      fs.walk_stmt(s);
      std::string decls = free_decls(fs);
      if (!decls.empty()) os << decls << "\n";
    }
    block(os, s, 0);
    return os.str();
  }

  std::string func(const PrimFunc& f) {
    std::ostringstream os;
    os << "func @" << (is_dotted_ident(f.name()) ? f.name() : escape(f.name()));
    // Parameters claim their own names before the dynamic dims do.
    for (auto& p : canonical_ ? std::vector<Param>{} : f.params()) {
      if (p.is_buffer()) names_.define_buffer(p.buffer);
      else names_.define_var(p.var);
    }
    auto dyn = f.dynamic_vars();
    if (!dyn.empty()) {
      os << " dyn[";
      for (size_t i = 0; i < dyn.size(); ++i) os << (i ? ", " : "") << var_decl(dyn[i]);
      os << "]";
    }
    std::unordered_set<const VarNode*> dyn_set;
    for (auto& v : dyn) dyn_set.insert(v.get());
    os << "(";
    for (size_t i = 0; i < f.params().size(); ++i) {
      if (i) os << ", ";
      auto& p = f.params()[i];
      if (p.is_buffer()) os << buffer_decl(p.buffer);
      // A scalar parameter that is also a dynamic dim keeps the name it got in dyn[...].
      else if (dyn_set.count(p.var.get())) os << names_.var(p.var.get()) << ": " << p.var.dtype().str();
      else os << var_decl(p.var);
    }
    os << ")";
    FreeSymbols fs;
    fs.walk_func(f);
    std::string decls = free_decls(fs);
    if (!decls.empty()) os << " " << decls;
    os << attrs(f.attrs()) << " {\n";
    block(os, f.body(), 1);
    os << "}\n";
    return os.str();
  }

 private:
  bool canonical_;
  Namer names_;
};

}  // namespace

std::string print_expr(const Expr& e) { return Printer(PrintOptions{}).expr(e); }
std::string print_stmt(const Stmt& s, const PrintOptions& options) {
  return Printer(options).stmt_text(s, options.declare_free);
}
std::string print_func(const PrimFunc& f, const PrintOptions& options) { return Printer(options).func(f); }
std::string print_attr(const Attr& a) { return Printer(PrintOptions{}).attr(a); }
std::string canonical_text(const PrimFunc& f) {
  PrintOptions o;
  o.canonical_names = true;
  return print_func(f, o);
}

}  // namespace tl
