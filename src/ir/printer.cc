#include "ir/printer.h"

#include <cmath>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "ir/error.h"

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
    case DataType::kFloat8E4M3: return "e4m3";
    case DataType::kFloat8E5M2: return "e5m2";
    default: return "f32";
  }
}

std::string escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
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

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  // Shortest form that still reads back exactly.
  for (int p = 1; p < 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) {
      s = buf;
      break;
    }
  }
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

class Printer {
 public:
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
        if (n->dtype.is_bool()) os << (n->value ? "true" : "false");
        else os << n->value << int_suffix(n->dtype);
        return;
      }
      case ExprKind::kFloatImm: {
        auto* n = e.as<FloatImmNode>();
        os << format_double(n->value) << float_suffix(n->dtype);
        return;
      }
      case ExprKind::kStringImm: os << escape(e.as<StringImmNode>()->value); return;
      case ExprKind::kVar: os << var_name(e.as<VarNode>()); return;
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
        print(os, n->a, 50);
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
        os << buffer_name(n->buffer) << "[";
        for (size_t i = 0; i < n->indices.size(); ++i) {
          if (i) os << ", ";
          print(os, n->indices[i], 0);
        }
        os << "]";
        return;
      }
      case ExprKind::kCall: {
        auto* n = e.as<CallNode>();
        os << n->op;
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

  std::string var_name(const VarNode* v) { return unique(vars_, v, v->name); }
  std::string buffer_name(const Buffer& b) { return unique(buffers_, b.get(), b.name()); }

  std::string var_decl(const Var& v) { return var_name(v.get()) + ": " + v.dtype().str(); }

  std::string buffer_decl(const Buffer& b) {
    std::ostringstream os;
    os << buffer_name(b) << ": " << scope_name(b.scope()) << " " << b.dtype().str() << "[";
    for (size_t i = 0; i < b.shape().size(); ++i) {
      if (i) os << ", ";
      print(os, b.shape()[i], 0);
    }
    os << "]";
    if (!b->strides.empty()) {
      os << " strides[";
      for (size_t i = 0; i < b->strides.size(); ++i) {
        if (i) os << ", ";
        print(os, b->strides[i], 0);
      }
      os << "]";
    }
    return os.str();
  }

  std::string region(const BufferRegion& r) {
    std::ostringstream os;
    os << buffer_name(r.buffer) << "[";
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
      case Attr::kBuffer: os << "buf:" << buffer_name(a.as_buffer()); break;
      case Attr::kIntList: {
        os << "[";
        auto& l = a.as_int_list();
        for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
        os << "]";
        break;
      }
      case Attr::kExprList: {
        os << "e:[";
        auto& l = a.as_expr_list();
        for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << expr(l[i]);
        os << "]";
        break;
      }
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
      s += k + " = " + attr(v);
    }
    return s + "}";
  }

  // Prints the statements of a block. An Allocate/Let that is the last statement of its block
  // prints flat ("alloc X: ..." followed by its body at the same level); otherwise braced.
  void block(std::ostream& os, const Stmt& s, int indent) {
    if (!s.defined()) return;
    if (auto* seq = s.as<SeqStmtNode>()) {
      for (size_t i = 0; i < seq->seq.size(); ++i) stmt(os, seq->seq[i], indent, i + 1 == seq->seq.size());
      return;
    }
    stmt(os, s, indent, true);
  }

  void stmt(std::ostream& os, const Stmt& s, int indent, bool last_in_block) {
    std::string pad(indent * 2, ' ');
    switch (s.kind()) {
      case StmtKind::kSeq: {
        // A nested sequence can only appear after a mutation that bypassed make_seq.
        os << pad << "{\n";
        block(os, s, indent + 1);
        os << pad << "}\n";
        return;
      }
      case StmtKind::kEvaluate:
        os << pad << "evaluate " << expr(s.as<EvaluateNode>()->value) << "\n";
        return;
      case StmtKind::kLet: {
        auto* n = s.as<LetStmtNode>();
        os << pad << "let " << var_decl(n->var) << " = " << expr(n->value);
        flat_or_braced(os, n->body, indent, last_in_block);
        return;
      }
      case StmtKind::kStore: {
        auto* n = s.as<BufferStoreNode>();
        os << pad << buffer_name(n->buffer) << "[";
        for (size_t i = 0; i < n->indices.size(); ++i) os << (i ? ", " : "") << expr(n->indices[i]);
        os << "] = " << expr(n->value) << "\n";
        return;
      }
      case StmtKind::kFor: {
        auto* n = s.as<ForNode>();
        os << pad << "for " << var_decl(n->var) << " in " << for_kind_name(n->for_kind) << "("
           << expr(n->min) << ", " << expr(n->extent) << ")" << attrs(n->annotations) << " {\n";
        block(os, n->body, indent + 1);
        os << pad << "}\n";
        return;
      }
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        os << pad << "if (" << expr(n->cond) << ") {\n";
        block(os, n->then_case, indent + 1);
        if (n->else_case.defined()) {
          os << pad << "} else {\n";
          block(os, n->else_case, indent + 1);
        }
        os << pad << "}\n";
        return;
      }
      case StmtKind::kAllocate: {
        auto* n = s.as<AllocateNode>();
        os << pad << "alloc " << buffer_decl(n->buffer);
        flat_or_braced(os, n->body, indent, last_in_block);
        return;
      }
      case StmtKind::kAttr: {
        auto* n = s.as<AttrStmtNode>();
        os << pad << "attr " << escape(n->key) << " = " << attr(n->value) << " {\n";
        block(os, n->body, indent + 1);
        os << pad << "}\n";
        return;
      }
      case StmtKind::kKernel: {
        auto* n = s.as<KernelLaunchNode>();
        os << pad << "kernel(grid=[";
        for (size_t i = 0; i < n->grid.size(); ++i) os << (i ? ", " : "") << expr(n->grid[i]);
        os << "], blocks=[";
        for (size_t i = 0; i < n->block_vars.size(); ++i) os << (i ? ", " : "") << var_decl(n->block_vars[i]);
        os << "], threads=[";
        for (size_t i = 0; i < n->threads.size(); ++i) os << (i ? ", " : "") << expr(n->threads[i]);
        os << "], thread_vars=[";
        for (size_t i = 0; i < n->thread_vars.size(); ++i) os << (i ? ", " : "") << var_decl(n->thread_vars[i]);
        os << "])" << attrs(n->attrs) << " {\n";
        block(os, n->body, indent + 1);
        os << pad << "}\n";
        return;
      }
      case StmtKind::kTileOp: {
        auto* n = s.as<TileOpNode>();
        os << pad << n->op << "(";
        for (size_t i = 0; i < n->args.size(); ++i) {
          if (i) os << ", ";
          auto& a = n->args[i];
          os << (a.is_region() ? region(a.region) : expr(a.expr));
        }
        os << ")" << attrs(n->attrs) << "\n";
        return;
      }
      case StmtKind::kLoopControl:
        os << pad << (s.as<LoopControlNode>()->is_break ? "break" : "continue") << "\n";
        return;
    }
  }

  void flat_or_braced(std::ostream& os, const Stmt& body, int indent, bool last_in_block) {
    std::string pad(indent * 2, ' ');
    if (last_in_block) {
      os << "\n";
      block(os, body, indent);
    } else {
      os << " {\n";
      block(os, body, indent + 1);
      os << pad << "}\n";
    }
  }

  std::string func(const PrimFunc& f) {
    std::ostringstream os;
    os << "func @" << f.name();
    auto dyn = f.dynamic_vars();
    if (!dyn.empty()) {
      os << " dyn[";
      for (size_t i = 0; i < dyn.size(); ++i) os << (i ? ", " : "") << var_decl(dyn[i]);
      os << "]";
    }
    os << "(";
    for (size_t i = 0; i < f.params().size(); ++i) {
      if (i) os << ", ";
      auto& p = f.params()[i];
      if (p.is_buffer()) {
        // The parameter name is the buffer's name; reserve it first so it prints unchanged.
        os << buffer_decl(p.buffer);
      } else {
        os << var_decl(p.var);
      }
    }
    os << ")" << attrs(f.attrs()) << " {\n";
    block(os, f.body(), 1);
    os << "}\n";
    return os.str();
  }

 private:
  template <typename K>
  std::string unique(std::map<K, std::string>& table, K key, const std::string& base) {
    auto it = table.find(key);
    if (it != table.end()) return it->second;
    std::string name = sanitize(base);
    std::string cand = name;
    for (int i = 1; used_.count(cand); ++i) cand = name + "_" + std::to_string(i);
    used_.insert(cand);
    table.emplace(key, cand);
    return cand;
  }
  static std::string sanitize(const std::string& s) {
    std::string out;
    for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
    static const std::set<std::string> keywords = {"for",   "in",    "if",     "else",     "let",  "alloc",
                                                   "attr",  "kernel", "evaluate", "break", "continue",
                                                   "true",  "false", "func",   "select",   "cast", "ramp",
                                                   "broadcast", "none", "inf", "nan"};
    if (keywords.count(out)) out += "_";
    return out;
  }

  std::map<const VarNode*, std::string> vars_;
  std::map<const BufferNode*, std::string> buffers_;
  std::set<std::string> used_;
};

}  // namespace

std::string print_expr(const Expr& e) { return Printer().expr(e); }
std::string print_stmt(const Stmt& s) {
  Printer p;
  std::ostringstream os;
  p.block(os, s, 0);
  return os.str();
}
std::string print_func(const PrimFunc& f) { return Printer().func(f); }
std::string print_attr(const Attr& a) { return Printer().attr(a); }

}  // namespace tl
