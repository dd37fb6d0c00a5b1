// Conversions between Python values and IR objects (see ir_bind_convert.h).
#include "bindings/ir_bind_convert.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <climits>
#include <map>
#include <memory>
#include <unordered_map>

#include "ir/error.h"
#include "ir/printer.h"

namespace tl::bind::detail {

DataType dt(const std::string& s) { return parse_dtype(s); }

nb::object wrap(const Expr& e) {
  if (!e.defined()) return nb::none();
  switch (e.kind()) {
    case ExprKind::kVar: return nb::cast(Var(std::static_pointer_cast<const VarNode>(e.node())));
    case ExprKind::kBufferLoad: return nb::cast(LoadExpr(e));
    default: return nb::cast(e);
  }
}

nb::list wrap_list(const std::vector<Expr>& v) {
  nb::list out;
  for (auto& e : v) out.append(wrap(e));
  return out;
}

std::string describe(const Buffer& b) {
  return "'" + b.name() + "' (" + scope_name(b.scope()) + " " + b.dtype().str() + ")";
}

// Python value -> expression. Returns false (leaving `out` untouched) when `h` is no scalar value.
bool try_to_expr(nb::handle h, Expr* out) {
  if (nb::isinstance<Expr>(h)) {
    *out = nb::cast<Expr>(h);
    return true;
  }
  PyObject* p = h.ptr();
  if (PyBool_Check(p)) {
    *out = make_bool(p == Py_True);
    return true;
  }
  if (PyLong_Check(p) || (!PyFloat_Check(p) && PyIndex_Check(p))) {
    nb::object idx = nb::steal(PyNumber_Index(p));
    if (!idx.is_valid()) throw nb::python_error();
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
    if (overflow) throw nb::value_error("integer constant does not fit in 64 bits");
    *out = (v >= INT32_MIN && v <= INT32_MAX) ? make_int(v, DataType::Int32()) : make_int(v, DataType::Int64());
    return true;
  }
  if (PyFloat_Check(p) || (nb::hasattr(h, "__float__") && !nb::isinstance<Buffer>(h) && !PyUnicode_Check(p))) {
    double v = PyFloat_AsDouble(p);
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    *out = make_float(v, DataType::Float32());
    return true;
  }
  if (nb::isinstance<Buffer>(h)) {
    const Buffer& b = nb::cast<const Buffer&>(h);
    if (b.scope() == MemScope::kLocalVar) {
      *out = make_load(b, {make_int(0)});
      return true;
    }
    throw nb::type_error(("buffer " + describe(b) +
                          " is not a scalar value; index it (e.g. " + b.name() + "[i, j]) or pass it to a tile op")
                             .c_str());
  }
  return false;
}

Expr to_expr(nb::handle h, const char* what) {
  Expr e;
  if (try_to_expr(h, &e)) return e;
  std::string tn = nb::type_name(h.type()).c_str();
  throw nb::type_error((std::string(what) + " must be a PrimExpr, a Python number or bool, got " + tn).c_str());
}

std::vector<Expr> to_expr_list(nb::handle seq, const char* what) {
  std::vector<Expr> out;
  if (PySequence_Check(seq.ptr()) && !PyUnicode_Check(seq.ptr()) && !nb::isinstance<Buffer>(seq)) {
    for (nb::handle x : nb::iter(seq)) out.push_back(to_expr(x, what));
  } else {
    out.push_back(to_expr(seq, what));
  }
  return out;
}

// ---- attributes --------------------------------------------------------------------------------

std::string utf8_text(nb::handle h, const std::string& what) {
  if (!PyUnicode_Check(h.ptr()))
    throw_error<TypeError>(what, " must be a str, got ", nb::type_name(h.type()).c_str());
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
  if (s) return std::string(s, static_cast<size_t>(n));
  PyErr_Clear();
  nb::object text = nb::steal(PyObject_ASCII(h.ptr()));
  std::string shown = text.is_valid() && PyUnicode_AsUTF8(text.ptr()) ? PyUnicode_AsUTF8(text.ptr()) : "?";
  PyErr_Clear();
  throw_error<ValueError>(what, " ", shown, " is not valid Unicode text: it holds a lone surrogate (as "
                          "os.fsdecode or errors='surrogateescape' make of bytes that are not UTF-8); decode the "
                          "bytes with errors='replace' or errors='backslashreplace' first");
}

int64_t int64_from_py(nb::handle h, const std::string& what) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow) {
    nb::object text = nb::steal(PyObject_Repr(h.ptr()));
    std::string t = text.is_valid() && PyUnicode_AsUTF8(text.ptr()) ? PyUnicode_AsUTF8(text.ptr()) : "?";
    PyErr_Clear();
    if (t.size() > 40) t = t.substr(0, 20) + "..." + t.substr(t.size() - 8) + " (" + std::to_string(t.size()) + " digits)";
    throw_error<ValueError>(what, " is ", t, ", which does not fit in a signed 64-bit integer (-2**63 .. 2**63-1)");
  }
  return static_cast<int64_t>(v);
}

Attr to_attr(nb::handle h, const std::string& key) {
  PyObject* p = h.ptr();
  const std::string what = key.empty() ? std::string("an attribute value") : "the value of attribute '" + key + "'";
  if (h.is_none()) return Attr();
  if (PyBool_Check(p)) return Attr(p == Py_True);
  if (PyLong_Check(p)) return Attr(int64_from_py(h, what));
  if (PyFloat_Check(p)) return Attr(nb::cast<double>(h));
  if (PyUnicode_Check(p)) return Attr(utf8_text(h, key.empty() ? std::string("an attribute value") : "attribute '" + key + "'"));
  if (nb::isinstance<Expr>(h)) return Attr(nb::cast<Expr>(h));
  if (nb::isinstance<Buffer>(h)) return Attr(nb::cast<Buffer>(h));
  if (PyList_Check(p) || PyTuple_Check(p)) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    bool all_int = true, all_str = true;
    for (nb::handle x : nb::iter(seq)) {
      if (!PyLong_Check(x.ptr()) || PyBool_Check(x.ptr())) all_int = false;
      if (!PyUnicode_Check(x.ptr())) all_str = false;
    }
    if (nb::len(seq) == 0 || all_int) {
      std::vector<int64_t> v;
      for (nb::handle x : nb::iter(seq)) v.push_back(int64_from_py(x, "an entry of " + what));
      return Attr(std::move(v));
    }
    if (all_str) {
      std::vector<std::string> v;
      for (nb::handle x : nb::iter(seq)) v.push_back(utf8_text(x, "an entry of " + what));
      return Attr(std::move(v));
    }
    std::vector<Expr> v;
    for (nb::handle x : nb::iter(seq)) v.push_back(to_expr(x, "attribute list entry"));
    return Attr(std::move(v));
  }
  Expr e;
  if (try_to_expr(h, &e)) return Attr(e);
  throw nb::type_error(("attribute values must be bool, int, float, str, PrimExpr, Buffer or a list of "
                        "those, got " + std::string(nb::type_name(h.type()).c_str()))
                           .c_str());
}

AttrMap to_attr_map(nb::handle d) {
  AttrMap m;
  if (d.is_none()) return m;
  if (!PyDict_Check(d.ptr())) throw nb::type_error("attributes must be given as a dict");
  for (auto [k, v] : nb::borrow<nb::dict>(d)) {
    if (!PyUnicode_Check(k.ptr())) throw nb::type_error("attribute names must be strings");
    std::string key = nb::cast<std::string>(k);
    m[key] = to_attr(v, key);
  }
  return m;
}

nb::object from_attr(const Attr& a) {
  switch (a.kind()) {
    case Attr::kNone: return nb::none();
    case Attr::kBool: return nb::bool_(a.as_bool());
    case Attr::kInt: return nb::int_(a.as_int());
    case Attr::kFloat: return nb::float_(a.as_float());
    case Attr::kStr: return nb::str(a.as_str().c_str());
    case Attr::kExpr: return wrap(a.as_expr());
    case Attr::kBuffer: return nb::cast(a.as_buffer());
    case Attr::kIntList: return nb::cast(a.as_int_list());
    case Attr::kExprList: return wrap_list(a.as_expr_list());
    case Attr::kStrList: return nb::cast(a.as_str_list());
  }
  return nb::none();
}

nb::dict from_attr_map(const AttrMap& m) {
  nb::dict d;
  for (auto& [k, v] : m) d[k.c_str()] = from_attr(v);
  return d;
}

// ---- spans -------------------------------------------------------------------------------------

Span make_span(const std::string& file, int line, int col) {
  // One shared string per file name: every statement of a kernel points at it.
  static std::unordered_map<std::string, std::shared_ptr<const std::string>> files;
  auto& f = files[file];
  if (!f) f = std::make_shared<const std::string>(file);
  Span s;
  s.file = f;
  s.line = line;
  s.col = col;
  return s;
}

Span opt_span(nb::handle h) { return h.is_none() ? Span{} : nb::cast<Span>(h); }

// ---- names -------------------------------------------------------------------------------------

BinOp parse_binop(const std::string& s) {
  static const std::map<std::string, BinOp> table = {
      {"add", BinOp::kAdd},       {"sub", BinOp::kSub},       {"mul", BinOp::kMul},
      {"div", BinOp::kDiv},       {"mod", BinOp::kMod},       {"floordiv", BinOp::kFloorDiv},
      {"floormod", BinOp::kFloorMod}, {"min", BinOp::kMin},   {"max", BinOp::kMax},
      {"eq", BinOp::kEQ},         {"ne", BinOp::kNE},         {"lt", BinOp::kLT},
      {"le", BinOp::kLE},         {"gt", BinOp::kGT},         {"ge", BinOp::kGE},
      {"and", BinOp::kAnd},       {"or", BinOp::kOr},         {"bitand", BinOp::kBitAnd},
      {"bitor", BinOp::kBitOr},   {"bitxor", BinOp::kBitXor}, {"shl", BinOp::kShl},
      {"shr", BinOp::kShr},
  };
  auto it = table.find(s);
  if (it == table.end()) throw nb::value_error(("unknown binary operator '" + s + "'").c_str());
  return it->second;
}

UnOp parse_unop(const std::string& s) {
  if (s == "neg") return UnOp::kNeg;
  if (s == "not") return UnOp::kNot;
  if (s == "bitnot") return UnOp::kBitNot;
  throw nb::value_error(("unknown unary operator '" + s + "'; expected neg, not, bitnot").c_str());
}

const char* expr_kind_name(ExprKind k) {
  switch (k) {
    case ExprKind::kIntImm: return "int";
    case ExprKind::kFloatImm: return "float";
    case ExprKind::kStringImm: return "string";
    case ExprKind::kVar: return "var";
    case ExprKind::kBinary: return "binary";
    case ExprKind::kUnary: return "unary";
    case ExprKind::kSelect: return "select";
    case ExprKind::kCast: return "cast";
    case ExprKind::kBufferLoad: return "load";
    case ExprKind::kCall: return "call";
    case ExprKind::kRamp: return "ramp";
    case ExprKind::kBroadcast: return "broadcast";
  }
  return "?";
}

const char* stmt_kind_name(StmtKind k) {
  switch (k) {
    case StmtKind::kSeq: return "seq";
    case StmtKind::kEvaluate: return "evaluate";
    case StmtKind::kLet: return "let";
    case StmtKind::kStore: return "store";
    case StmtKind::kFor: return "for";
    case StmtKind::kIf: return "if";
    case StmtKind::kAllocate: return "allocate";
    case StmtKind::kAttr: return "attr";
    case StmtKind::kKernel: return "kernel";
    case StmtKind::kTileOp: return "tile_op";
    case StmtKind::kLoopControl: return "loop_control";
  }
  return "?";
}

std::vector<TileArg> to_tile_args(nb::handle args) {
  std::vector<TileArg> out;
  for (nb::handle a : nb::iter(args)) {
    if (nb::isinstance<BufferRegion>(a)) {
      out.emplace_back(nb::cast<BufferRegion>(a));
    } else if (nb::isinstance<Buffer>(a) && nb::cast<const Buffer&>(a).scope() != MemScope::kLocalVar) {
      out.emplace_back(BufferRegion::full(nb::cast<Buffer>(a)));
    } else {
      out.emplace_back(to_expr(a, "tile op argument"));
    }
  }
  return out;
}

std::vector<Param> to_params(nb::handle params) {
  std::vector<Param> out;
  for (nb::handle p : nb::iter(params)) {
    Param q;
    if (nb::isinstance<Buffer>(p)) {
      q.buffer = nb::cast<Buffer>(p);
      q.name = q.buffer.name();
    } else if (nb::isinstance<Var>(p)) {
      q.var = nb::cast<Var>(p);
      q.name = q.var.name();
    } else {
      throw nb::type_error("function parameters must be Buffers or Vars");
    }
    out.push_back(std::move(q));
  }
  return out;
}

nb::object tile_arg(const TileArg& a) { return a.is_region() ? nb::cast(a.region) : wrap(a.expr); }

nb::list stmt_list(const std::vector<Stmt>& v) {
  nb::list out;
  for (auto& s : v) out.append(nb::cast(s));
  return out;
}

}  // namespace tl::bind::detail
