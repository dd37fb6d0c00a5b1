// Python bindings of the IR (src/ir/*.h): the objects the frontend builds kernels from. This file
// binds expressions and buffers (with their operators and slicing) and defines bind_ir;
// ir_bind_stmt.cc binds statements, functions and the builder; ir_bind_convert.* convert values.
//
// Conventions at the boundary:
//   - a DataType is its canonical string ("float16", "int32", ...);
//   - an expression argument accepts a PrimExpr, a Python bool/int/float (made a constant) or an
//     alloc_var buffer (read as its single element);
//   - attribute maps are dicts of bool/int/float/str/PrimExpr/Buffer/lists;
//   - an expression result is returned as its most specific Python class (Var, BufferLoad or
//     PrimExpr) so the frontend can tell a tile origin `A[i, j]` from any other value.
// Everything here is a thin wrapper over the make_* constructors; no compiler logic.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>

#include "bindings/bindings.h"
#include "bindings/ir_bind_convert.h"
#include "ir/error.h"
#include "ir/printer.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tl::bind {
namespace detail {
namespace {

// ---- operators ---------------------------------------------------------------------------------

nb::object not_implemented() { return nb::borrow(Py_NotImplemented); }

// `self OP other` (or `other OP self` when reversed) for PrimExpr and alloc_var buffers.
nb::object binary(BinOp op, nb::handle self, nb::handle other, bool reversed) {
  Expr a, b;
  if (!try_to_expr(other, &b)) return not_implemented();
  a = to_expr(self);
  return reversed ? wrap(make_binary(op, b, a)) : wrap(make_binary(op, a, b));
}

Expr pow_expr(Expr a, Expr b) {
  DataType t = make_binary(BinOp::kAdd, a, b).dtype();
  if (!t.is_float()) t = DataType::Float32();
  return make_call(t, "pow", {make_cast(t, a), make_cast(t, b)});
}

std::string runtime_value_hint(const Expr& e) {
  return "'" + print_expr(e) + "' is a run-time value (" + e.dtype().str() + ")";
}

template <typename C>
void def_operators(C& cls) {
#define TL_BINOP(py, rpy, op)                                                                          \
  cls.def(py, [](nb::handle s, nb::handle o) { return binary(op, s, o, false); }, nb::is_operator()); \
  cls.def(rpy, [](nb::handle s, nb::handle o) { return binary(op, s, o, true); }, nb::is_operator());
  TL_BINOP("__add__", "__radd__", BinOp::kAdd)
  TL_BINOP("__sub__", "__rsub__", BinOp::kSub)
  TL_BINOP("__mul__", "__rmul__", BinOp::kMul)
  TL_BINOP("__truediv__", "__rtruediv__", BinOp::kDiv)
  TL_BINOP("__floordiv__", "__rfloordiv__", BinOp::kFloorDiv)
  TL_BINOP("__mod__", "__rmod__", BinOp::kFloorMod)
  TL_BINOP("__and__", "__rand__", BinOp::kBitAnd)
  TL_BINOP("__or__", "__ror__", BinOp::kBitOr)
  TL_BINOP("__xor__", "__rxor__", BinOp::kBitXor)
  TL_BINOP("__lshift__", "__rlshift__", BinOp::kShl)
  TL_BINOP("__rshift__", "__rrshift__", BinOp::kShr)
#undef TL_BINOP
  cls.def("__lt__", [](nb::handle s, nb::handle o) { return binary(BinOp::kLT, s, o, false); }, nb::is_operator());
  cls.def("__le__", [](nb::handle s, nb::handle o) { return binary(BinOp::kLE, s, o, false); }, nb::is_operator());
  cls.def("__gt__", [](nb::handle s, nb::handle o) { return binary(BinOp::kGT, s, o, false); }, nb::is_operator());
  cls.def("__ge__", [](nb::handle s, nb::handle o) { return binary(BinOp::kGE, s, o, false); }, nb::is_operator());
  cls.def(
      "__pow__",
      [](nb::handle s, nb::handle o) -> nb::object {
        Expr b;
        if (!try_to_expr(o, &b)) return not_implemented();
        return wrap(pow_expr(to_expr(s), b));
      },
      nb::is_operator());
  cls.def(
      "__rpow__",
      [](nb::handle s, nb::handle o) -> nb::object {
        Expr b;
        if (!try_to_expr(o, &b)) return not_implemented();
        return wrap(pow_expr(b, to_expr(s)));
      },
      nb::is_operator());
  cls.def("__neg__", [](nb::handle s) { return wrap(make_unary(UnOp::kNeg, to_expr(s))); });
  cls.def("__pos__", [](nb::handle s) { return wrap(to_expr(s)); });
  cls.def("__invert__", [](nb::handle s) { return wrap(make_unary(UnOp::kBitNot, to_expr(s))); });
  cls.def("__abs__", [](nb::handle s) {
    Expr a = to_expr(s);
    return wrap(make_call(a.dtype(), "abs", {a}));
  });
}

// ---- slicing -----------------------------------------------------------------------------------

// Linear form sum(coef * atom) + constant, atoms compared by node identity. Used only to give a
// slice `A[x:x+c]` or `A[i*b:(i+1)*b]` its constant extent; anything else keeps `stop - start`.
struct Linear {
  std::map<const ExprNode*, int64_t> terms;
  std::map<const ExprNode*, Expr> atoms;
  int64_t constant = 0;
};

bool linearize(const Expr& e, int64_t scale, Linear& out, int depth = 0) {
  if (depth > 16) return false;
  int64_t c;
  if (is_const_int(e, &c)) {
    out.constant += scale * c;
    return true;
  }
  if (auto* b = e.as<BinaryNode>()) {
    if (b->op == BinOp::kAdd) return linearize(b->a, scale, out, depth + 1) && linearize(b->b, scale, out, depth + 1);
    if (b->op == BinOp::kSub) return linearize(b->a, scale, out, depth + 1) && linearize(b->b, -scale, out, depth + 1);
    if (b->op == BinOp::kMul) {
      if (is_const_int(b->b, &c)) return linearize(b->a, scale * c, out, depth + 1);
      if (is_const_int(b->a, &c)) return linearize(b->b, scale * c, out, depth + 1);
    }
  }
  if (auto* u = e.as<UnaryNode>(); u && u->op == UnOp::kNeg) return linearize(u->a, -scale, out, depth + 1);
  if (!e.dtype().is_integer()) return false;
  out.terms[e.get()] += scale;
  out.atoms[e.get()] = e;
  return true;
}

Expr slice_extent(const Expr& start, const Expr& stop) {
  Linear l;
  if (linearize(stop, 1, l) && linearize(start, -1, l)) {
    Expr acc;
    for (auto& [node, coef] : l.terms) {
      if (coef == 0) continue;
      Expr t = make_binary(BinOp::kMul, l.atoms[node], make_int(coef, l.atoms[node].dtype()));
      acc = acc.defined() ? make_binary(BinOp::kAdd, acc, t) : t;
    }
    if (!acc.defined()) return make_int(l.constant, stop.dtype().is_integer() ? stop.dtype() : DataType::Int32());
    if (l.constant != 0) acc = make_binary(BinOp::kAdd, acc, make_int(l.constant));
    return acc;
  }
  return make_binary(BinOp::kSub, stop, start);
}

// An index into dimension `d`: Python negative constants count from the end.
Expr index_expr(const Buffer& b, size_t d, nb::handle h) {
  Expr e = to_expr(h, "buffer index");
  if (!e.dtype().is_integer())
    throw nb::type_error(("index " + std::to_string(d) + " of buffer '" + b.name() + "' must be an integer, got " +
                          e.dtype().str() + " '" + print_expr(e) + "'")
                             .c_str());
  int64_t v, n;
  if (is_const_int(e, &v)) {
    bool known = is_const_int(b.shape()[d], &n);
    if (v < 0) {
      if (known && -v > n)
        throw nb::index_error(("index " + std::to_string(v) + " is out of bounds for dimension " + std::to_string(d) +
                               " of buffer '" + b.name() + "' with size " + std::to_string(n))
                                  .c_str());
      return make_binary(BinOp::kAdd, b.shape()[d], e);
    }
    if (known && v >= n)
      throw nb::index_error(("index " + std::to_string(v) + " is out of bounds for dimension " + std::to_string(d) +
                             " of buffer '" + b.name() + "' with size " + std::to_string(n))
                                .c_str());
  }
  return e;
}

nb::object buffer_getitem(const Buffer& b, nb::handle key) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle x : nb::borrow<nb::tuple>(key)) items.push_back(x);
  } else {
    items.push_back(key);
  }
  // Expand `...` to full slices.
  size_t n_ellipsis = 0;
  for (auto& x : items) n_ellipsis += x.ptr() == Py_Ellipsis;
  if (n_ellipsis > 1) throw nb::index_error("an index can only have a single ellipsis ('...')");
  std::vector<nb::handle> full;
  nb::object all_slice = nb::steal(PySlice_New(nullptr, nullptr, nullptr));
  for (auto& x : items) {
    if (x.ptr() == Py_Ellipsis) {
      if (items.size() - 1 > b.ndim()) break;
      for (size_t k = 0; k < b.ndim() - (items.size() - 1); ++k) full.push_back(all_slice);
    } else {
      full.push_back(x);
    }
  }
  if (full.size() != b.ndim()) {
    throw nb::index_error(("buffer " + describe(b) + " has " + std::to_string(b.ndim()) +
                           " dimension(s) but was indexed with " + std::to_string(full.size()) +
                           "; give one index or slice per dimension (e.g. " + b.name() + "[i, :])")
                              .c_str());
  }
  bool any_slice = false;
  for (auto& x : full) any_slice |= PySlice_Check(x.ptr()) != 0;
  if (!any_slice) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < full.size(); ++d) idx.push_back(index_expr(b, d, full[d]));
    return wrap(make_load(b, std::move(idx)));
  }
  std::vector<Range> ranges;
  for (size_t d = 0; d < full.size(); ++d) {
    nb::handle x = full[d];
    if (!PySlice_Check(x.ptr())) {
      Expr i = index_expr(b, d, x);
      ranges.emplace_back(i, make_int(1, i.dtype()));
      continue;
    }
    nb::object sl_start = nb::getattr(x, "start"), sl_stop = nb::getattr(x, "stop"), sl_step = nb::getattr(x, "step");
    if (!sl_step.is_none()) {
      Expr st = to_expr(sl_step, "slice step");
      if (!is_const_value(st, 1))
        throw nb::index_error(("slice of buffer '" + b.name() + "' (dimension " + std::to_string(d) +
                               ") has step '" + print_expr(st) +
                               "'; only contiguous slices a:b are supported")
                                  .c_str());
    }
    Expr dim = b.shape()[d];
    Expr start = sl_start.is_none() ? make_int(0, dim.dtype()) : index_expr(b, d, sl_start);
    if (sl_stop.is_none()) {
      ranges.emplace_back(start, slice_extent(start, dim));
      continue;
    }
    // A stop equal to the dimension is allowed (it is one past the end).
    Expr stop = to_expr(sl_stop, "slice stop");
    int64_t v;
    if (is_const_int(stop, &v) && v < 0) stop = make_binary(BinOp::kAdd, dim, stop);
    if (!stop.dtype().is_integer()) throw nb::type_error("slice bounds must be integers");
    Expr ext = slice_extent(start, stop);
    if (is_const_int(ext, &v) && v <= 0)
      throw nb::index_error(("empty slice " + print_expr(start) + ":" + print_expr(stop) + " of buffer '" +
                             b.name() + "' (dimension " + std::to_string(d) + ")")
                                .c_str());
    ranges.emplace_back(start, ext);
  }
  return nb::cast(BufferRegion(b, std::move(ranges)));
}

}  // namespace

void bind_exprs(nb::module_& m) {
  nb::class_<Span>(m, "Span")
      .def("__init__", [](Span* s, const std::string& file, int line, int col) { new (s) Span(make_span(file, line, col)); },
           "file"_a, "line"_a, "col"_a = 0)
      .def_prop_ro("file", [](const Span& s) { return s.file ? *s.file : std::string(); })
      .def_ro("line", &Span::line)
      .def_ro("col", &Span::col)
      .def("defined", &Span::defined)
      .def("__str__", &Span::str)
      .def("__repr__", [](const Span& s) { return "Span(" + s.str() + ")"; });

  // The deepest expression the IR admits (ir/expr.h): deeper ones are a ResourceError where they are built.
  m.attr("MAX_EXPR_DEPTH") = kMaxExprDepth;
  m.def("canonical_dtype", [](const std::string& s) { return parse_dtype(s).str(); }, "name"_a,
        "Canonical name of a dtype ('float' -> 'float32'); ValueError on unknown names.");
  m.def("dtype_info", [](const std::string& s) {
    DataType t = parse_dtype(s);
    const char* code = t.is_bool() ? "bool" : t.is_int() ? "int" : t.is_uint() ? "uint" : t.is_float() ? "float"
                       : t.is_handle() ? "handle" : "void";
    return nb::make_tuple(code, static_cast<int>(t.bits), static_cast<int>(t.lanes));
  }, "name"_a, "(kind, bits, lanes) of a dtype; kind is bool, int, uint, float, handle or void.");

  auto expr = nb::class_<Expr>(m, "PrimExpr", "An expression of the tile IR. Arithmetic builds IR.");
  expr.def_prop_ro("dtype", [](const Expr& e) { return e.dtype().str(); })
      .def_prop_ro("kind", [](const Expr& e) { return expr_kind_name(e.kind()); })
      .def("same_as", [](const Expr& a, const Expr& b) { return a.same_as(b); })
      .def("__hash__", [](const Expr& e) { return reinterpret_cast<intptr_t>(e.get()) >> 4; })
      .def("__repr__", [](const Expr& e) { return print_expr(e); })
      // `x == x` on one node folds to a constant, so dicts and sets keyed by Vars work (a hash
      // match compares the keys with ==, and bool() of a run-time comparison would raise).
      .def("__eq__",
           [](nb::handle s, nb::handle o) {
             if (nb::isinstance<Expr>(o) && nb::cast<const Expr&>(s).same_as(nb::cast<const Expr&>(o)))
               return wrap(make_bool(true));
             return binary(BinOp::kEQ, s, o, false);
           },
           nb::is_operator())
      .def("__ne__",
           [](nb::handle s, nb::handle o) {
             if (nb::isinstance<Expr>(o) && nb::cast<const Expr&>(s).same_as(nb::cast<const Expr&>(o)))
               return wrap(make_bool(false));
             return binary(BinOp::kNE, s, o, false);
           },
           nb::is_operator())
      .def("__bool__",
           [](const Expr& e) {
             int64_t v;
             double f;
             if (is_const_int(e, &v)) return v != 0;
             if (is_const_float(e, &f)) return f != 0;
             throw nb::type_error((runtime_value_hint(e) +
                                   " and cannot be used as a Python bool. Inside @T.prim_func, put the condition "
                                   "directly in an `if` (it becomes an IR if), combine conditions with "
                                   "and/or/not or T.And/T.Or/T.Not, and pick values with T.if_then_else")
                                      .c_str());
           })
      .def("__index__",
           [](const Expr& e) {
             int64_t v;
             if (is_const_int(e, &v)) return v;
             throw nb::type_error((runtime_value_hint(e) +
                                   " and cannot be used where Python needs an integer; use T.serial(n) for loops "
                                   "over run-time bounds")
                                      .c_str());
           })
      .def("__int__",
           [](const Expr& e) {
             int64_t v;
             double f;
             if (is_const_int(e, &v)) return v;
             if (is_const_float(e, &f)) return static_cast<int64_t>(f);
             throw nb::type_error((runtime_value_hint(e) + " and has no Python int value").c_str());
           })
      .def("__float__",
           [](const Expr& e) {
             int64_t v;
             double f;
             if (is_const_float(e, &f)) return f;
             if (is_const_int(e, &v)) return static_cast<double>(v);
             throw nb::type_error((runtime_value_hint(e) + " and has no Python float value").c_str());
           })
      .def("__iter__", [](const Expr& e) -> nb::object {
        throw nb::type_error(("cannot iterate over the expression '" + print_expr(e) + "'").c_str());
      })
      .def_prop_ro("value",
                   [](const Expr& e) -> nb::object {
                     if (auto* i = e.as<IntImmNode>()) {
                       if (i->dtype.is_bool()) return nb::bool_(i->value != 0);
                       return nb::int_(i->value);
                     }
                     if (auto* f = e.as<FloatImmNode>()) return nb::float_(f->value);
                     if (auto* s = e.as<StringImmNode>()) return nb::str(s->value.c_str());
                     return nb::none();
                   },
                   "The Python value of a constant, else None.")
      .def_prop_ro("op",
                   [](const Expr& e) -> nb::object {
                     if (auto* b = e.as<BinaryNode>()) return nb::str(binop_name(b->op));
                     if (auto* u = e.as<UnaryNode>()) return nb::str(unop_name(u->op));
                     if (auto* c = e.as<CallNode>()) return nb::str(c->op.c_str());
                     return nb::none();
                   })
      .def_prop_ro("operands",
                   [](const Expr& e) -> nb::list {
                     nb::list out;
                     if (auto* b = e.as<BinaryNode>()) { out.append(wrap(b->a)); out.append(wrap(b->b)); }
                     else if (auto* u = e.as<UnaryNode>()) out.append(wrap(u->a));
                     else if (auto* c = e.as<CallNode>()) return wrap_list(c->args);
                     else if (auto* s = e.as<SelectNode>()) {
                       out.append(wrap(s->cond)); out.append(wrap(s->true_value)); out.append(wrap(s->false_value));
                     } else if (auto* c = e.as<CastNode>()) out.append(wrap(c->value));
                     else if (auto* l = e.as<BufferLoadNode>()) return wrap_list(l->indices);
                     return out;
                   },
                   "Child expressions: (a, b) of a binary op, call args, (cond, t, f) of a select, ...");
  def_operators(expr);

  nb::class_<Var, Expr>(m, "Var", "A variable: loop/let/kernel index, dynamic dimension, scalar parameter.")
      .def("__init__", [](Var* v, const std::string& name, const std::string& dtype) { new (v) Var(name, dt(dtype)); },
           "name"_a, "dtype"_a = "int32")
      .def_prop_ro("name", [](const Var& v) { return v.name(); });

  nb::class_<LoadExpr, Expr>(m, "BufferLoad", "A scalar read `A[i, j]`; as a tile-op argument, an origin.")
      .def_prop_ro("buffer", [](const LoadExpr& e) { return e.as<BufferLoadNode>()->buffer; })
      .def_prop_ro("indices", [](const LoadExpr& e) { return wrap_list(e.as<BufferLoadNode>()->indices); });

  m.def("check_attr", [](const std::string& key, nb::handle value) { (void)to_attr(value, key); }, "key"_a, "value"_a,
        "Raises the error converting an attribute value would raise (T.func_attr checks at the user's line).");
  m.def("to_expr", [](nb::handle h) { return wrap(to_expr(h)); }, "value"_a,
        "Converts a Python number/bool, PrimExpr or alloc_var buffer to a PrimExpr.");
  m.def("make_int", [](long long v, const std::string& t) { return wrap(make_int(v, dt(t))); }, "value"_a,
        "dtype"_a = "int32");
  m.def("make_float", [](double v, const std::string& t) { return wrap(make_float(v, dt(t))); }, "value"_a,
        "dtype"_a = "float32");
  m.def("make_bool", [](bool v) { return wrap(make_bool(v)); });
  m.def("make_string", [](nb::handle s) { return wrap(make_string(utf8_text(s, "the string"))); });
  m.def("make_const", [](const std::string& t, double v) { return wrap(make_const(dt(t), v)); }, "dtype"_a,
        "value"_a);
  m.def("make_binary", [](const std::string& op, nb::handle a, nb::handle b) {
    return wrap(make_binary(parse_binop(op), to_expr(a), to_expr(b)));
  }, "op"_a, "a"_a, "b"_a);
  m.def("make_unary", [](const std::string& op, nb::handle a) { return wrap(make_unary(parse_unop(op), to_expr(a))); },
        "op"_a, "a"_a);
  m.def("make_select", [](nb::handle c, nb::handle t, nb::handle f) {
    return wrap(make_select(to_expr(c), to_expr(t), to_expr(f)));
  }, "cond"_a, "true_value"_a, "false_value"_a);
  m.def("make_cast", [](const std::string& t, nb::handle v) { return wrap(make_cast(dt(t), to_expr(v))); },
        "dtype"_a, "value"_a);
  m.def("make_call", [](const std::string& t, const std::string& op, nb::handle args) {
    return wrap(make_call(dt(t), op, to_expr_list(args, "call argument")));
  }, "dtype"_a, "op"_a, "args"_a);
  m.def("make_load", [](const Buffer& b, nb::handle idx) { return wrap(make_load(b, to_expr_list(idx, "index"))); },
        "buffer"_a, "indices"_a);
  m.def("ceildiv", [](nb::handle a, nb::handle b) { return wrap(ceildiv(to_expr(a), to_expr(b))); });
  m.def("print_expr", [](nb::handle e) { return print_expr(to_expr(e)); });
}

void bind_buffers(nb::module_& m) {
  auto buf = nb::class_<Buffer>(m, "Buffer", "A tensor parameter or an on-chip buffer.");
  buf.def("__init__",
          [](Buffer* b, const std::string& name, const std::string& dtype, nb::handle shape, const std::string& scope,
             nb::handle strides, nb::handle span) {
            std::vector<Expr> st = strides.is_none() ? std::vector<Expr>{} : to_expr_list(strides, "stride");
            new (b) Buffer(name, dt(dtype), to_expr_list(shape, "shape entry"), parse_scope(scope), std::move(st),
                           opt_span(span));
          },
          "name"_a, "dtype"_a, "shape"_a, "scope"_a = "global", "strides"_a = nb::none(), "span"_a = nb::none())
      .def_prop_ro("name", [](const Buffer& b) { return b.name(); })
      .def_prop_ro("dtype", [](const Buffer& b) { return b.dtype().str(); })
      .def_prop_ro("shape", [](const Buffer& b) { return wrap_list(b.shape()); })
      .def_prop_ro("strides", [](const Buffer& b) { return wrap_list(b->strides); })
      .def_prop_ro("scope", [](const Buffer& b) { return std::string(scope_name(b.scope())); })
      .def_prop_ro("ndim", [](const Buffer& b) { return b.ndim(); })
      .def_prop_ro("span", [](const Buffer& b) { return b->span; })
      .def("same_as", [](const Buffer& a, const Buffer& b) { return a.same_as(b); })
      .def("__hash__", [](const Buffer& b) { return reinterpret_cast<intptr_t>(b.get()) >> 4; })
      .def("__eq__",
           [](nb::handle s, nb::handle o) -> nb::object {
             const Buffer& a = nb::cast<const Buffer&>(s);
             if (nb::isinstance<Buffer>(o)) return nb::bool_(a.same_as(nb::cast<const Buffer&>(o)));
             if (a.scope() == MemScope::kLocalVar) return binary(BinOp::kEQ, s, o, false);
             return not_implemented();
           },
           nb::is_operator())
      .def("__ne__",
           [](nb::handle s, nb::handle o) -> nb::object {
             const Buffer& a = nb::cast<const Buffer&>(s);
             if (nb::isinstance<Buffer>(o)) return nb::bool_(!a.same_as(nb::cast<const Buffer&>(o)));
             if (a.scope() == MemScope::kLocalVar) return binary(BinOp::kNE, s, o, false);
             return not_implemented();
           },
           nb::is_operator())
      .def("__getitem__", [](const Buffer& b, nb::handle key) { return buffer_getitem(b, key); })
      // Stores go to whatever kernel is being built; the frontend installs the hook
      // (`_core._buffer_store_hook(buffer, key, value)`) so the builder stays in Python.
      .def("__setitem__",
           [](nb::handle self, nb::handle key, nb::handle value) {
             nb::object core = nb::module_::import_("tilelang._core");
             if (!nb::hasattr(core, "_buffer_store_hook"))
               throw nb::type_error("buffer stores are only valid inside a @T.prim_func or @T.macro body");
             core.attr("_buffer_store_hook")(self, key, value);
           })
      .def("__iter__", [](const Buffer& b) -> nb::object {
        throw nb::type_error(("cannot iterate over buffer '" + b.name() +
                              "'; loop over its indices with T.serial / T.Parallel")
                                 .c_str());
      })
      .def("__repr__", [](const Buffer& b) {
        std::string s = "Buffer(" + b.name() + ": " + scope_name(b.scope()) + " " + b.dtype().str() + "[";
        for (size_t i = 0; i < b.ndim(); ++i) s += (i ? ", " : "") + print_expr(b.shape()[i]);
        return s + "])";
      });
  // alloc_var buffers are scalars: `x + 1` reads x[0].
  def_operators(buf);

  nb::class_<BufferRegion>(m, "BufferRegion", "A rectangular piece of a buffer, one (min, extent) per dimension.")
      .def("__init__",
           [](BufferRegion* r, const Buffer& b, nb::handle ranges) {
             std::vector<Range> rs;
             for (nb::handle x : nb::iter(ranges)) {
               nb::sequence p = nb::borrow<nb::sequence>(x);
               if (nb::len(p) != 2) throw nb::type_error("each range must be a (min, extent) pair");
               rs.emplace_back(to_expr(p[0], "range min"), to_expr(p[1], "range extent"));
             }
             if (rs.size() != b.ndim())
               throw nb::index_error(("region of buffer '" + b.name() + "' needs " + std::to_string(b.ndim()) +
                                      " ranges, got " + std::to_string(rs.size()))
                                         .c_str());
             new (r) BufferRegion(b, std::move(rs));
           },
           "buffer"_a, "ranges"_a)
      .def_static("full", &BufferRegion::full, "buffer"_a)
      .def_prop_ro("buffer", [](const BufferRegion& r) { return r.buffer; })
      .def_prop_ro("region",
                   [](const BufferRegion& r) {
                     nb::list out;
                     for (auto& x : r.region) out.append(nb::make_tuple(wrap(x.min), wrap(x.extent)));
                     return out;
                   })
      .def_prop_ro("mins",
                   [](const BufferRegion& r) {
                     nb::list out;
                     for (auto& x : r.region) out.append(wrap(x.min));
                     return out;
                   })
      .def_prop_ro("extents",
                   [](const BufferRegion& r) {
                     nb::list out;
                     for (auto& x : r.region) out.append(wrap(x.extent));
                     return out;
                   })
      .def_prop_ro("squeezed_extents", [](const BufferRegion& r) { return wrap_list(r.squeezed_extents()); })
      .def_prop_ro("dtype", [](const BufferRegion& r) { return r.buffer.dtype().str(); })
      .def("__iter__", [](const BufferRegion&) -> nb::object { throw nb::type_error("cannot iterate over a region"); })
      .def("__repr__", [](const BufferRegion& r) {
        std::string s = r.buffer.name() + "[";
        for (size_t i = 0; i < r.region.size(); ++i)
          s += (i ? ", " : "") + print_expr(r.region[i].min) + " :+ " + print_expr(r.region[i].extent);
        return s + "]";
      });
}

}  // namespace detail

void bind_ir(nb::module_& m) {
  detail::bind_exprs(m);
  detail::bind_buffers(m);
  detail::bind_stmts(m);
  detail::bind_builder(m);
}

}  // namespace tl::bind
