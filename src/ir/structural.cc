#include "ir/structural.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "ir/printer.h"

namespace tl {

namespace {

// Statements of a (possibly nested, possibly undefined) sequence, in order.
void flatten(const Stmt& s, std::vector<const Stmt*>* out) {
  if (!s.defined()) return;
  if (auto* seq = s.as<SeqStmtNode>()) {
    for (auto& c : seq->seq) flatten(c, out);
    return;
  }
  out->push_back(&s);
}
bool is_sequence(const Stmt& s) { return !s.defined() || s.kind() == StmtKind::kSeq; }

bool same_float(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// First lines of a statement's text, for diagnostics.
std::string brief(const Stmt& s, int max_lines = 12) {
  std::string text = print_stmt(s);
  std::istringstream in(text);
  std::string line, out;
  int n = 0;
  while (std::getline(in, line)) {
    if (n++ == max_lines) {
      out += "      ...\n";
      break;
    }
    out += "      " + line + "\n";
  }
  return out.empty() ? "      <empty>\n" : out;
}

// Pairs of corresponding variables/buffers, with scoped (restorable) bindings.
class SymbolMap {
 public:
  const void* fwd(const void* a) const { return find(fwd_, a); }
  const void* bwd(const void* b) const { return find(bwd_, b); }
  void bind(const void* a, const void* b) {
    saved_.push_back({a, find(fwd_, a), b, find(bwd_, b)});
    fwd_[a] = b;
    bwd_[b] = a;
  }
  // A pairing that lasts for the rest of the walk (free symbols).
  void pair(const void* a, const void* b) {
    fwd_[a] = b;
    bwd_[b] = a;
  }
  size_t mark() const { return saved_.size(); }
  void release(size_t m) {
    while (saved_.size() > m) {
      auto& s = saved_.back();
      restore(fwd_, s.a, s.old_b);
      restore(bwd_, s.b, s.old_a);
      saved_.pop_back();
    }
  }

 private:
  using Map = std::unordered_map<const void*, const void*>;
  static const void* find(const Map& m, const void* k) {
    auto it = m.find(k);
    return it == m.end() ? nullptr : it->second;
  }
  static void restore(Map& m, const void* k, const void* old) {
    if (old) m[k] = old;
    else m.erase(k);
  }
  struct Saved {
    const void *a, *old_b, *b, *old_a;
  };
  Map fwd_, bwd_;
  std::vector<Saved> saved_;
};

class Comparer {
 public:
  explicit Comparer(bool map_free) : map_free_(map_free) {}

  bool func(const PrimFunc& a, const PrimFunc& b) {
    if (a.params().size() != b.params().size())
      return fail("parameter counts differ (" + std::to_string(a.params().size()) + " vs " +
                  std::to_string(b.params().size()) + ")");
    for (size_t i = 0; i < a.params().size(); ++i) {
      auto &pa = a.params()[i], &pb = b.params()[i];
      if (pa.is_buffer() != pb.is_buffer()) return fail("one parameter is a tensor, the other a scalar") || at_index("params", i);
      bool ok;
      if (pa.is_buffer()) {
        ok = define_buffer(pa.buffer, pb.buffer);
      } else if (vars_.fwd(pa.var.get()) || vars_.bwd(pb.var.get())) {
        ok = var(pa.var.get(), pb.var.get());  // also a dynamic dim, paired in a shape already
      } else {
        ok = define_var(pa.var, pb.var);
      }
      if (!ok) return at_index("params", i);
    }
    if (!attrs(a.attrs(), b.attrs())) return at("attrs");
    if (!stmt(a.body(), b.body())) return at("body");
    return true;
  }

  bool expr(const Expr& a, const Expr& b) {
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return fail_expr("one expression is missing", a, b);
    }
    if (a.kind() != b.kind()) return fail_expr("expression kinds differ", a, b);
    if (a.dtype() != b.dtype()) return fail_expr("dtypes differ (" + a.dtype().str() + " vs " + b.dtype().str() + ")", a, b);
    switch (a.kind()) {
      case ExprKind::kIntImm:
        if (a.as<IntImmNode>()->value != b.as<IntImmNode>()->value) return fail_expr("integer constants differ", a, b);
        return true;
      case ExprKind::kFloatImm:
        if (!same_float(a.as<FloatImmNode>()->value, b.as<FloatImmNode>()->value))
          return fail_expr("float constants differ", a, b);
        return true;
      case ExprKind::kStringImm:
        if (a.as<StringImmNode>()->value != b.as<StringImmNode>()->value) return fail_expr("strings differ", a, b);
        return true;
      case ExprKind::kVar: return var(a.as<VarNode>(), b.as<VarNode>());
      case ExprKind::kBinary: {
        auto *x = a.as<BinaryNode>(), *y = b.as<BinaryNode>();
        if (x->op != y->op) return fail_expr("operators differ", a, b);
        if (!expr(x->a, y->a)) return at("a");
        if (!expr(x->b, y->b)) return at("b");
        return true;
      }
      case ExprKind::kUnary: {
        auto *x = a.as<UnaryNode>(), *y = b.as<UnaryNode>();
        if (x->op != y->op) return fail_expr("operators differ", a, b);
        return expr(x->a, y->a) || at("a");
      }
      case ExprKind::kSelect: {
        auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
        if (!expr(x->cond, y->cond)) return at("cond");
        if (!expr(x->true_value, y->true_value)) return at("true_value");
        return expr(x->false_value, y->false_value) || at("false_value");
      }
      case ExprKind::kCast: return expr(a.as<CastNode>()->value, b.as<CastNode>()->value) || at("value");
      case ExprKind::kBufferLoad: {
        auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
        if (!buffer(x->buffer, y->buffer)) return at("buffer");
        return exprs(x->indices, y->indices, "indices");
      }
      case ExprKind::kCall: {
        auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
        if (x->op != y->op) return fail_expr("callees differ", a, b);
        return exprs(x->args, y->args, "args");
      }
      case ExprKind::kRamp: {
        auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
        if (!expr(x->base, y->base)) return at("base");
        return expr(x->stride, y->stride) || at("stride");
      }
      case ExprKind::kBroadcast:
        return expr(a.as<BroadcastNode>()->value, b.as<BroadcastNode>()->value) || at("value");
    }
    return true;
  }

  bool stmt(const Stmt& a, const Stmt& b) {
    if (is_sequence(a) || is_sequence(b)) {
      std::vector<const Stmt*> xs, ys;
      flatten(a, &xs);
      flatten(b, &ys);
      // A one-statement sequence is that statement: no index in the path.
      if (xs.size() == 1 && ys.size() == 1) return stmt(*xs[0], *ys[0]);
      size_t n = std::min(xs.size(), ys.size());
      for (size_t i = 0; i < n; ++i)
        if (!stmt(*xs[i], *ys[i])) return at_index("", i);
      if (xs.size() != ys.size()) {
        const Stmt& extra = xs.size() > n ? *xs[n] : *ys[n];
        return fail("statement counts differ (" + std::to_string(xs.size()) + " vs " + std::to_string(ys.size()) +
                    "); first extra statement, on the " + (xs.size() > n ? "lhs" : "rhs") + ":\n" + brief(extra));
      }
      return true;
    }
    bool ok = stmt_node(a, b);
    if (!ok && !context_done_) {
      // The innermost statement around the mismatch, printed once.
      detail_ += "  in statement\n    lhs:\n" + brief(a, 6) + "    rhs:\n" + brief(b, 6);
      context_done_ = true;
    }
    return ok;
  }

  std::string report() const {
    std::string path;
    for (auto it = path_.rbegin(); it != path_.rend(); ++it) {
      if (!path.empty() && (*it)[0] != '[') path += ".";
      path += *it;
    }
    return "mismatch at " + (path.empty() ? std::string("<root>") : path) + ": " + detail_;
  }

 private:
  bool fail(const std::string& why) {
    if (!failed_) detail_ = why + "\n";
    failed_ = true;
    return false;
  }
  bool fail_expr(const std::string& why, const Expr& a, const Expr& b) {
    return fail(why + "\n    lhs: " + print_expr(a) + "\n    rhs: " + print_expr(b));
  }
  bool at(const char* seg) {
    if (*seg) path_.push_back(seg);
    return false;
  }
  bool at_index(const char* seg, size_t i) {
    path_.push_back("[" + std::to_string(i) + "]");
    if (*seg) path_.push_back(seg);
    return false;
  }

  bool exprs(const std::vector<Expr>& a, const std::vector<Expr>& b, const char* seg) {
    if (a.size() != b.size())
      return fail(std::string(seg) + " counts differ (" + std::to_string(a.size()) + " vs " + std::to_string(b.size()) +
                  ")") || at(seg);
    for (size_t i = 0; i < a.size(); ++i)
      if (!expr(a[i], b[i])) return at_index(seg, i);
    return true;
  }

  bool var(const VarNode* a, const VarNode* b) {
    if (a->dtype != b->dtype)
      return fail("variable dtypes differ: " + a->name + ": " + a->dtype.str() + " vs " + b->name + ": " + b->dtype.str());
    const void *fa = vars_.fwd(a), *fb = vars_.bwd(b);
    if (fa || fb) {
      if (fa == b && fb == a) return true;
      return fail("variables correspond to different definitions: lhs '" + a->name + "' vs rhs '" + b->name + "'");
    }
    if (!map_free_) {
      if (a == b) return true;
      return fail("different free variables: lhs '" + a->name + "' vs rhs '" + b->name + "'");
    }
    vars_.pair(a, b);
    return true;
  }

  bool define_var(const Var& a, const Var& b) {
    if (a.dtype() != b.dtype())
      return fail("defined variables have different dtypes: " + a.name() + ": " + a.dtype().str() + " vs " + b.name() +
                  ": " + b.dtype().str());
    vars_.bind(a.get(), b.get());
    return true;
  }

  bool buffer_decl(const Buffer& a, const Buffer& b) {
    std::string an = "'" + a.name() + "'", bn = "'" + b.name() + "'";
    if (a.dtype() != b.dtype()) return fail("buffer dtypes differ: " + an + " " + a.dtype().str() + " vs " + bn + " " + b.dtype().str());
    if (a.scope() != b.scope())
      return fail(std::string("buffer scopes differ: ") + an + " " + scope_name(a.scope()) + " vs " + bn + " " +
                  scope_name(b.scope()));
    return exprs(a.shape(), b.shape(), "shape") && exprs(a->strides, b->strides, "strides");
  }

  bool define_buffer(const Buffer& a, const Buffer& b) {
    if (!buffer_decl(a, b)) return false;
    buffers_.bind(a.get(), b.get());
    return true;
  }

  bool buffer(const Buffer& a, const Buffer& b) {
    const void *fa = buffers_.fwd(a.get()), *fb = buffers_.bwd(b.get());
    if (fa || fb) {
      if (fa == b.get() && fb == a.get()) return true;
      return fail("buffers correspond to different definitions: lhs '" + a.name() + "' vs rhs '" + b.name() + "'");
    }
    if (!map_free_) {
      if (a.same_as(b)) return true;
      return fail("different free buffers: lhs '" + a.name() + "' vs rhs '" + b.name() + "'");
    }
    if (!buffer_decl(a, b)) return false;
    buffers_.pair(a.get(), b.get());
    return true;
  }

  bool attr(const Attr& a, const Attr& b) {
    if (a.kind() != b.kind()) return fail("attribute kinds differ: " + print_attr(a) + " vs " + print_attr(b));
    bool ok = true;
    switch (a.kind()) {
      case Attr::kNone: break;
      case Attr::kBool:
      case Attr::kInt: ok = a.as_int() == b.as_int(); break;
      case Attr::kFloat: ok = same_float(a.as_float(), b.as_float()); break;
      case Attr::kStr: ok = a.as_str() == b.as_str(); break;
      case Attr::kExpr: return expr(a.as_expr(), b.as_expr());
      case Attr::kBuffer: return buffer(a.as_buffer(), b.as_buffer());
      case Attr::kIntList: ok = a.as_int_list() == b.as_int_list(); break;
      case Attr::kExprList: return exprs(a.as_expr_list(), b.as_expr_list(), "");
      case Attr::kStrList: ok = a.as_str_list() == b.as_str_list(); break;
    }
    return ok || fail("attribute values differ: " + print_attr(a) + " vs " + print_attr(b));
  }

  bool attrs(const AttrMap& a, const AttrMap& b) {
    auto keys = [](const AttrMap& m) {
      std::string s;
      for (auto& [k, v] : m) s += (s.empty() ? "" : ", ") + k;
      return "{" + s + "}";
    };
    if (a.size() != b.size()) return fail("attribute keys differ: " + keys(a) + " vs " + keys(b));
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      if (ia->first != ib->first) return fail("attribute keys differ: " + keys(a) + " vs " + keys(b));
      if (!attr(ia->second, ib->second)) {
        path_.push_back(ia->first);
        return false;
      }
    }
    return true;
  }

  bool region(const BufferRegion& a, const BufferRegion& b) {
    if (!buffer(a.buffer, b.buffer)) return at("buffer");
    if (a.region.size() != b.region.size()) return fail("region ranks differ");
    for (size_t i = 0; i < a.region.size(); ++i) {
      if (!expr(a.region[i].min, b.region[i].min)) return at("min") || at_index("region", i);
      if (!expr(a.region[i].extent, b.region[i].extent)) return at("extent") || at_index("region", i);
    }
    return true;
  }

  bool stmt_node(const Stmt& a, const Stmt& b) {
    if (a.kind() != b.kind()) return fail("statement kinds differ");
    switch (a.kind()) {
      case StmtKind::kSeq: return true;  // handled by stmt()
      case StmtKind::kEvaluate:
        return expr(a.as<EvaluateNode>()->value, b.as<EvaluateNode>()->value) || at("evaluate");
      case StmtKind::kLet: {
        auto *x = a.as<LetStmtNode>(), *y = b.as<LetStmtNode>();
        if (!expr(x->value, y->value)) return at("value") || at("let");
        size_t m = vars_.mark();
        bool ok = define_var(x->var, y->var) && (stmt(x->body, y->body) || at("body"));
        vars_.release(m);
        return ok || at("let");
      }
      case StmtKind::kStore: {
        auto *x = a.as<BufferStoreNode>(), *y = b.as<BufferStoreNode>();
        if (!buffer(x->buffer, y->buffer)) return at("buffer") || at("store");
        if (!exprs(x->indices, y->indices, "indices")) return at("store");
        return expr(x->value, y->value) || at("value") || at("store");
      }
      case StmtKind::kFor: {
        auto *x = a.as<ForNode>(), *y = b.as<ForNode>();
        if (x->for_kind != y->for_kind)
          return fail(std::string("loop kinds differ: ") + for_kind_name(x->for_kind) + " vs " + for_kind_name(y->for_kind));
        if (!expr(x->min, y->min)) return at("min") || at("for");
        if (!expr(x->extent, y->extent)) return at("extent") || at("for");
        size_t m = vars_.mark();
        bool ok = define_var(x->var, y->var) && (attrs(x->annotations, y->annotations) || at("annotations")) &&
                  (stmt(x->body, y->body) || at("body"));
        vars_.release(m);
        return ok || at("for");
      }
      case StmtKind::kIf: {
        auto *x = a.as<IfThenElseNode>(), *y = b.as<IfThenElseNode>();
        if (!expr(x->cond, y->cond)) return at("cond") || at("if");
        if (!stmt(x->then_case, y->then_case)) return at("then") || at("if");
        return stmt(x->else_case, y->else_case) || at("else") || at("if");
      }
      case StmtKind::kAllocate: {
        auto *x = a.as<AllocateNode>(), *y = b.as<AllocateNode>();
        size_t m = buffers_.mark();
        bool ok = define_buffer(x->buffer, y->buffer) && (stmt(x->body, y->body) || at("body"));
        buffers_.release(m);
        return ok || at("alloc");
      }
      case StmtKind::kAttr: {
        auto *x = a.as<AttrStmtNode>(), *y = b.as<AttrStmtNode>();
        if (x->key != y->key) return fail("attr keys differ: \"" + x->key + "\" vs \"" + y->key + "\"");
        if (!attr(x->value, y->value)) return at("value") || at("attr");
        return stmt(x->body, y->body) || at("body") || at("attr");
      }
      case StmtKind::kKernel: {
        auto *x = a.as<KernelLaunchNode>(), *y = b.as<KernelLaunchNode>();
        if (!exprs(x->grid, y->grid, "grid")) return at("kernel");
        if (!exprs(x->threads, y->threads, "threads")) return at("kernel");
        if (x->block_vars.size() != y->block_vars.size() || x->thread_vars.size() != y->thread_vars.size())
          return fail("kernel index variable counts differ") || at("kernel");
        size_t m = vars_.mark();
        bool ok = true;
        for (size_t i = 0; ok && i < x->block_vars.size(); ++i) ok = define_var(x->block_vars[i], y->block_vars[i]);
        for (size_t i = 0; ok && i < x->thread_vars.size(); ++i) ok = define_var(x->thread_vars[i], y->thread_vars[i]);
        ok = ok && (attrs(x->attrs, y->attrs) || at("attrs")) && (stmt(x->body, y->body) || at("body"));
        vars_.release(m);
        return ok || at("kernel");
      }
      case StmtKind::kTileOp: {
        auto *x = a.as<TileOpNode>(), *y = b.as<TileOpNode>();
        std::string seg = "tile_op(" + x->op + ")";
        if (x->op != y->op) return fail("tile ops differ: " + x->op + " vs " + y->op);
        if (x->args.size() != y->args.size()) return fail("tile op argument counts differ") || at(x->op.c_str());
        for (size_t i = 0; i < x->args.size(); ++i) {
          auto &p = x->args[i], &q = y->args[i];
          if (p.is_region() != q.is_region()) return fail("one argument is a region, the other an expression") || at_index("args", i);
          bool ok = p.is_region() ? region(p.region, q.region) : expr(p.expr, q.expr);
          if (!ok) {
            at_index("args", i);
            path_.push_back(seg);
            return false;
          }
        }
        if (!attrs(x->attrs, y->attrs)) {
          path_.push_back("attrs");
          path_.push_back(seg);
          return false;
        }
        return true;
      }
      case StmtKind::kLoopControl:
        if (a.as<LoopControlNode>()->is_break != b.as<LoopControlNode>()->is_break) return fail("break vs continue");
        return true;
    }
    return true;
  }

  bool map_free_;
  SymbolMap vars_, buffers_;
  bool failed_ = false, context_done_ = false;
  std::string detail_;
  std::vector<std::string> path_;  // innermost first
};

// ---------------------------------------------------------------------------------------------

class Hasher {
 public:
  uint64_t value() const { return h_; }

  void func(const PrimFunc& f) {
    mix(f.params().size());
    for (auto& p : f.params()) {
      mix(p.is_buffer());
      if (p.is_buffer()) define_buffer(p.buffer);
      else if (vars_.count(p.var.get())) var(p.var.get());
      else define_var(p.var);
    }
    attrs(f.attrs());
    stmt(f.body());
  }

  void expr(const Expr& e) {
    if (!e.defined()) return mix(0xE0);
    mix(static_cast<uint64_t>(e.kind()) + 1);
    dtype(e.dtype());
    switch (e.kind()) {
      case ExprKind::kIntImm: return mix(static_cast<uint64_t>(e.as<IntImmNode>()->value));
      case ExprKind::kFloatImm: return real(e.as<FloatImmNode>()->value);
      case ExprKind::kStringImm: return str(e.as<StringImmNode>()->value);
      case ExprKind::kVar: return var(e.as<VarNode>());
      case ExprKind::kBinary: {
        auto* n = e.as<BinaryNode>();
        mix(static_cast<uint64_t>(n->op));
        expr(n->a);
        return expr(n->b);
      }
      case ExprKind::kUnary:
        mix(static_cast<uint64_t>(e.as<UnaryNode>()->op));
        return expr(e.as<UnaryNode>()->a);
      case ExprKind::kSelect: {
        auto* n = e.as<SelectNode>();
        expr(n->cond);
        expr(n->true_value);
        return expr(n->false_value);
      }
      case ExprKind::kCast: return expr(e.as<CastNode>()->value);
      case ExprKind::kBufferLoad:
        buffer(e.as<BufferLoadNode>()->buffer);
        return exprs(e.as<BufferLoadNode>()->indices);
      case ExprKind::kCall:
        str(e.as<CallNode>()->op);
        return exprs(e.as<CallNode>()->args);
      case ExprKind::kRamp:
        expr(e.as<RampNode>()->base);
        return expr(e.as<RampNode>()->stride);
      case ExprKind::kBroadcast: return expr(e.as<BroadcastNode>()->value);
    }
  }

  void stmt(const Stmt& s) {
    if (is_sequence(s)) {
      std::vector<const Stmt*> items;
      flatten(s, &items);
      if (items.size() == 1) return stmt(*items[0]);
      mix(0x5E0 + items.size());
      for (auto* c : items) stmt(*c);
      return;
    }
    mix(static_cast<uint64_t>(s.kind()) + 0x100);
    switch (s.kind()) {
      case StmtKind::kSeq: return;
      case StmtKind::kEvaluate: return expr(s.as<EvaluateNode>()->value);
      case StmtKind::kLet: {
        auto* n = s.as<LetStmtNode>();
        expr(n->value);
        auto saved = define_var(n->var);
        stmt(n->body);
        return restore(saved);
      }
      case StmtKind::kStore: {
        auto* n = s.as<BufferStoreNode>();
        buffer(n->buffer);
        exprs(n->indices);
        return expr(n->value);
      }
      case StmtKind::kFor: {
        auto* n = s.as<ForNode>();
        mix(static_cast<uint64_t>(n->for_kind));
        expr(n->min);
        expr(n->extent);
        auto saved = define_var(n->var);
        attrs(n->annotations);
        stmt(n->body);
        return restore(saved);
      }
      case StmtKind::kIf: {
        auto* n = s.as<IfThenElseNode>();
        expr(n->cond);
        stmt(n->then_case);
        return stmt(n->else_case);
      }
      case StmtKind::kAllocate: {
        auto* n = s.as<AllocateNode>();
        auto saved = define_buffer(n->buffer);
        stmt(n->body);
        return restore(saved);
      }
      case StmtKind::kAttr: {
        auto* n = s.as<AttrStmtNode>();
        str(n->key);
        attr(n->value);
        return stmt(n->body);
      }
      case StmtKind::kKernel: {
        auto* n = s.as<KernelLaunchNode>();
        exprs(n->grid);
        exprs(n->threads);
        std::vector<Saved> saved;
        for (auto& v : n->block_vars) saved.push_back(define_var(v));
        for (auto& v : n->thread_vars) saved.push_back(define_var(v));
        attrs(n->attrs);
        stmt(n->body);
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) restore(*it);
        return;
      }
      case StmtKind::kTileOp: {
        auto* n = s.as<TileOpNode>();
        str(n->op);
        mix(n->args.size());
        for (auto& a : n->args) {
          mix(a.is_region());
          if (a.is_region()) {
            buffer(a.region.buffer);
            mix(a.region.region.size());
            for (auto& r : a.region.region) {
              expr(r.min);
              expr(r.extent);
            }
          } else {
            expr(a.expr);
          }
        }
        return attrs(n->attrs);
      }
      case StmtKind::kLoopControl: return mix(s.as<LoopControlNode>()->is_break);
    }
  }

 private:
  struct Saved {
    std::unordered_map<const void*, uint64_t>* map;
    const void* key;
    bool had;
    uint64_t old;
  };
  void mix(uint64_t v) {
    // splitmix64-style finalizer folded into the running state.
    v += 0x9e3779b97f4a7c15ULL + h_;
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
    h_ = v ^ (v >> 31);
  }
  void str(const std::string& s) {
    uint64_t f = 0xcbf29ce484222325ULL;  // FNV-1a: stable across runs and platforms
    for (unsigned char c : s) f = (f ^ c) * 0x100000001b3ULL;
    mix(f);
  }
  void real(double v) {
    if (std::isnan(v)) return mix(0x7ff8000000000000ULL);
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    mix(bits);
  }
  void dtype(DataType t) { mix((uint64_t(t.code) << 32) | (uint64_t(t.bits) << 16) | t.lanes); }
  void exprs(const std::vector<Expr>& l) {
    mix(l.size());
    for (auto& e : l) expr(e);
  }

  Saved bind(std::unordered_map<const void*, uint64_t>& m, const void* key) {
    auto it = m.find(key);
    Saved s{&m, key, it != m.end(), it != m.end() ? it->second : 0};
    m[key] = next_++;
    return s;
  }
  void restore(const Saved& s) {
    if (s.had) (*s.map)[s.key] = s.old;
    else s.map->erase(s.key);
  }
  Saved define_var(const Var& v) {
    dtype(v.dtype());
    return bind(vars_, v.get());
  }
  void var(const VarNode* v) {
    auto it = vars_.find(v);
    if (it == vars_.end()) {  // free: numbered at first use
      dtype(v->dtype);
      it = vars_.emplace(v, next_++).first;
    }
    mix(0xA000 + it->second);
  }
  void buffer_decl(const Buffer& b) {
    dtype(b.dtype());
    mix(static_cast<uint64_t>(b.scope()));
    exprs(b.shape());
    exprs(b->strides);
  }
  Saved define_buffer(const Buffer& b) {
    buffer_decl(b);
    return bind(buffers_, b.get());
  }
  void buffer(const Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end()) {
      buffer_decl(b);
      it = buffers_.emplace(b.get(), next_++).first;
    }
    mix(0xB000 + it->second);
  }
  void attr(const Attr& a) {
    mix(a.kind());
    switch (a.kind()) {
      case Attr::kNone: return;
      case Attr::kBool:
      case Attr::kInt: return mix(static_cast<uint64_t>(a.as_int()));
      case Attr::kFloat: return real(a.as_float());
      case Attr::kStr: return str(a.as_str());
      case Attr::kExpr: return expr(a.as_expr());
      case Attr::kBuffer: return buffer(a.as_buffer());
      case Attr::kIntList:
        mix(a.as_int_list().size());
        for (auto v : a.as_int_list()) mix(static_cast<uint64_t>(v));
        return;
      case Attr::kExprList: return exprs(a.as_expr_list());
      case Attr::kStrList:
        mix(a.as_str_list().size());
        for (auto& s : a.as_str_list()) str(s);
        return;
    }
  }
  void attrs(const AttrMap& m) {
    mix(m.size());
    for (auto& [k, v] : m) {
      str(k);
      attr(v);
    }
  }

  uint64_t h_ = 0x243f6a8885a308d3ULL;
  uint64_t next_ = 0;
  std::unordered_map<const void*, uint64_t> vars_, buffers_;
};

}  // namespace

bool structural_equal(const PrimFunc& a, const PrimFunc& b) { return Comparer(true).func(a, b); }
bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars) { return Comparer(map_free_vars).stmt(a, b); }
bool structural_equal(const Expr& a, const Expr& b, bool map_free_vars) { return Comparer(map_free_vars).expr(a, b); }

uint64_t structural_hash(const PrimFunc& f) {
  Hasher h;
  h.func(f);
  return h.value();
}
uint64_t structural_hash(const Stmt& s) {
  Hasher h;
  h.stmt(s);
  return h.value();
}
uint64_t structural_hash(const Expr& e) {
  Hasher h;
  h.expr(e);
  return h.value();
}

std::string structural_diff(const PrimFunc& a, const PrimFunc& b) {
  Comparer c(true);
  return c.func(a, b) ? "" : c.report();
}
std::string structural_diff(const Stmt& a, const Stmt& b, bool map_free_vars) {
  Comparer c(map_free_vars);
  return c.stmt(a, b) ? "" : c.report();
}
std::string structural_diff(const Expr& a, const Expr& b, bool map_free_vars) {
  Comparer c(map_free_vars);
  return c.expr(a, b) ? "" : c.report();
}

}  // namespace tl
