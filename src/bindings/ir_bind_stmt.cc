// Python bindings of statements, functions and the IRBuilder (see ir_bind.cc for the
// conventions at the boundary).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings/ir_bind_convert.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "ir/printer.h"
#include "ir/verifier.h"

using namespace nanobind::literals;

namespace tl::bind::detail {

void bind_stmts(nb::module_& m) {
  nb::class_<Stmt>(m, "Stmt", "A statement of the tile IR.")
      .def_prop_ro("kind", [](const Stmt& s) { return stmt_kind_name(s.kind()); })
      .def_prop_ro("span", [](const Stmt& s) { return s.span(); })
      .def("same_as", [](const Stmt& a, const Stmt& b) { return a.same_as(b); })
      .def("__repr__", [](const Stmt& s) { return print_stmt(s); })
      .def("script", [](const Stmt& s) { return print_stmt(s); })
      .def_prop_ro("seq", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<SeqStmtNode>()) return stmt_list(n->seq);
        return nb::none();
      })
      .def_prop_ro("body", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<LetStmtNode>()) return nb::cast(n->body);
        if (auto* n = s.as<ForNode>()) return nb::cast(n->body);
        if (auto* n = s.as<AllocateNode>()) return nb::cast(n->body);
        if (auto* n = s.as<AttrStmtNode>()) return nb::cast(n->body);
        if (auto* n = s.as<KernelLaunchNode>()) return nb::cast(n->body);
        return nb::none();
      })
      .def_prop_ro("var", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<LetStmtNode>()) return nb::cast(n->var);
        if (auto* n = s.as<ForNode>()) return nb::cast(n->var);
        return nb::none();
      })
      .def_prop_ro("value", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<LetStmtNode>()) return wrap(n->value);
        if (auto* n = s.as<BufferStoreNode>()) return wrap(n->value);
        if (auto* n = s.as<EvaluateNode>()) return wrap(n->value);
        if (auto* n = s.as<AttrStmtNode>()) return from_attr(n->value);
        return nb::none();
      })
      .def_prop_ro("buffer", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<BufferStoreNode>()) return nb::cast(n->buffer);
        if (auto* n = s.as<AllocateNode>()) return nb::cast(n->buffer);
        return nb::none();
      })
      .def_prop_ro("indices", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<BufferStoreNode>()) return wrap_list(n->indices);
        return nb::none();
      })
      .def_prop_ro("min", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<ForNode>()) return wrap(n->min);
        return nb::none();
      })
      .def_prop_ro("extent", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<ForNode>()) return wrap(n->extent);
        return nb::none();
      })
      .def_prop_ro("for_kind", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<ForNode>()) return nb::str(for_kind_name(n->for_kind));
        return nb::none();
      })
      .def_prop_ro("annotations", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<ForNode>()) return from_attr_map(n->annotations);
        return nb::none();
      })
      .def_prop_ro("cond", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<IfThenElseNode>()) return wrap(n->cond);
        return nb::none();
      })
      .def_prop_ro("then_case", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<IfThenElseNode>()) return nb::cast(n->then_case);
        return nb::none();
      })
      .def_prop_ro("else_case", [](const Stmt& s) -> nb::object {
        auto* n = s.as<IfThenElseNode>();
        if (n && n->else_case.defined()) return nb::cast(n->else_case);
        return nb::none();
      })
      .def_prop_ro("key", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<AttrStmtNode>()) return nb::str(n->key.c_str());
        return nb::none();
      })
      .def_prop_ro("grid", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<KernelLaunchNode>()) return wrap_list(n->grid);
        return nb::none();
      })
      .def_prop_ro("block_vars", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<KernelLaunchNode>()) return nb::cast(n->block_vars);
        return nb::none();
      })
      .def_prop_ro("threads", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<KernelLaunchNode>()) return wrap_list(n->threads);
        return nb::none();
      })
      .def_prop_ro("thread_vars", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<KernelLaunchNode>()) return nb::cast(n->thread_vars);
        return nb::none();
      })
      .def_prop_ro("attrs", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<KernelLaunchNode>()) return from_attr_map(n->attrs);
        if (auto* n = s.as<TileOpNode>()) return from_attr_map(n->attrs);
        return nb::none();
      })
      .def_prop_ro("op", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<TileOpNode>()) return nb::str(n->op.c_str());
        return nb::none();
      })
      .def_prop_ro("args", [](const Stmt& s) -> nb::object {
        auto* n = s.as<TileOpNode>();
        if (!n) return nb::none();
        nb::list out;
        for (auto& a : n->args) out.append(tile_arg(a));
        return out;
      })
      .def_prop_ro("is_break", [](const Stmt& s) -> nb::object {
        if (auto* n = s.as<LoopControlNode>()) return nb::bool_(n->is_break);
        return nb::none();
      });

  m.def("make_seq", [](nb::handle stmts, nb::handle span) { return make_seq(vec_of<Stmt>(stmts), opt_span(span)); },
        "stmts"_a, "span"_a = nb::none());
  m.def("make_evaluate", [](nb::handle v, nb::handle span) { return make_evaluate(to_expr(v), opt_span(span)); },
        "value"_a, "span"_a = nb::none());
  m.def("make_let", [](const Var& v, nb::handle value, const Stmt& body, nb::handle span) {
    return make_let(v, to_expr(value), body, opt_span(span));
  }, "var"_a, "value"_a, "body"_a, "span"_a = nb::none());
  m.def("make_store", [](const Buffer& b, nb::handle idx, nb::handle v, nb::handle span) {
    return make_store(b, to_expr_list(idx, "index"), to_expr(v), opt_span(span));
  }, "buffer"_a, "indices"_a, "value"_a, "span"_a = nb::none());
  m.def("make_for",
        [](const Var& v, nb::handle mn, nb::handle ext, const std::string& kind, const Stmt& body, nb::handle ann,
           nb::handle span) {
          return make_for(v, to_expr(mn), to_expr(ext), parse_for_kind(kind), body, to_attr_map(ann), opt_span(span));
        },
        "var"_a, "min"_a, "extent"_a, "kind"_a, "body"_a, "annotations"_a = nb::none(), "span"_a = nb::none());
  m.def("make_if", [](nb::handle c, const Stmt& t, nb::handle e, nb::handle span) {
    return make_if(to_expr(c), t, e.is_none() ? Stmt() : nb::cast<Stmt>(e), opt_span(span));
  }, "cond"_a, "then_case"_a, "else_case"_a = nb::none(), "span"_a = nb::none());
  m.def("make_allocate", [](const Buffer& b, const Stmt& body, nb::handle span) {
    return make_allocate(b, body, opt_span(span));
  }, "buffer"_a, "body"_a, "span"_a = nb::none());
  m.def("make_attr", [](const std::string& key, nb::handle value, const Stmt& body, nb::handle span) {
    return make_attr(key, to_attr(value, key), body, opt_span(span));
  }, "key"_a, "value"_a, "body"_a, "span"_a = nb::none());
  m.def("make_kernel",
        [](nb::handle grid, nb::handle bvars, nb::handle threads, nb::handle tvars, nb::handle attrs, const Stmt& body,
           nb::handle span) {
          return make_kernel(to_expr_list(grid, "grid extent"), vec_of<Var>(bvars), to_expr_list(threads, "threads"),
                             vec_of<Var>(tvars), to_attr_map(attrs), body, opt_span(span));
        },
        "grid"_a, "block_vars"_a, "threads"_a, "thread_vars"_a, "attrs"_a, "body"_a, "span"_a = nb::none());
  m.def("make_tile_op", [](const std::string& op, nb::handle args, nb::handle attrs, nb::handle span) {
    return make_tile_op(op, to_tile_args(args), to_attr_map(attrs), opt_span(span));
  }, "op"_a, "args"_a, "attrs"_a = nb::none(), "span"_a = nb::none(),
        "A tile op; args are BufferRegions/Buffers (whole) or scalar expressions, attrs a dict.");
  m.def("make_loop_control", [](bool is_break, nb::handle span) { return make_loop_control(is_break, opt_span(span)); },
        "is_break"_a, "span"_a = nb::none());
  m.def("make_nop", &make_nop);
  m.def("print_stmt", &print_stmt);

  nb::class_<PrimFunc>(m, "PrimFunc", "A kernel function: parameters, body and attributes.")
      .def("__init__",
           [](PrimFunc* f, const std::string& name, nb::handle params, const Stmt& body, nb::handle attrs,
              nb::handle span) {
             new (f) PrimFunc(name, to_params(params), body, to_attr_map(attrs), opt_span(span));
           },
           "name"_a, "params"_a, "body"_a, "attrs"_a = nb::none(), "span"_a = nb::none())
      .def_prop_ro("name", [](const PrimFunc& f) { return f.name(); })
      .def_prop_ro("params",
                   [](const PrimFunc& f) {
                     nb::list out;
                     for (auto& p : f.params()) out.append(p.is_buffer() ? nb::cast(p.buffer) : nb::cast(p.var));
                     return out;
                   })
      .def_prop_ro("body", [](const PrimFunc& f) { return f.body(); })
      .def_prop_ro("attrs", [](const PrimFunc& f) { return from_attr_map(f.attrs()); })
      .def_prop_ro("span", [](const PrimFunc& f) { return f->span; })
      .def_prop_ro("dynamic_vars", [](const PrimFunc& f) { return f.dynamic_vars(); })
      .def("with_attr", [](const PrimFunc& f, const std::string& k, nb::handle v) { return f.with_attr(k, to_attr(v, k)); })
      .def("with_body", &PrimFunc::with_body)
      .def("same_as", [](const PrimFunc& a, const PrimFunc& b) { return a.get() == b.get(); })
      .def("script", [](const PrimFunc& f) { return print_func(f); })
      .def("__repr__", [](const PrimFunc& f) { return print_func(f); });
  m.def("print_func", &print_func);
  m.def("verify", &verify, "func"_a);
}

void bind_builder(nb::module_& m) {
  nb::class_<IRBuilder>(m, "IRBuilder", "Builds a function body from frame operations (ir/builder.h).")
      .def(nb::init<>())
      .def("set_span", &IRBuilder::set_span, "span"_a)
      .def_prop_ro("span", [](const IRBuilder& b) { return b.span(); })
      .def("emit", &IRBuilder::emit, "stmt"_a)
      .def("alloc", &IRBuilder::alloc, "buffer"_a)
      .def("let", [](IRBuilder& b, const Var& v, nb::handle value) { b.let(v, to_expr(value)); }, "var"_a, "value"_a)
      .def("enter_for",
           [](IRBuilder& b, const Var& v, nb::handle mn, nb::handle ext, const std::string& kind, nb::handle ann) {
             b.enter_for(v, to_expr(mn, "loop start"), to_expr(ext, "loop extent"), parse_for_kind(kind),
                         to_attr_map(ann));
           },
           "var"_a, "min"_a, "extent"_a, "kind"_a = "serial", "annotations"_a = nb::none())
      .def("enter_if", [](IRBuilder& b, nb::handle c) { b.enter_if(to_expr(c, "condition")); }, "cond"_a)
      .def("enter_else", &IRBuilder::enter_else)
      .def("enter_attr", [](IRBuilder& b, const std::string& k, nb::handle v) { b.enter_attr(k, to_attr(v, k)); }, "key"_a,
           "value"_a)
      .def("enter_kernel",
           [](IRBuilder& b, nb::handle grid, nb::handle bvars, nb::handle threads, nb::handle tvars, nb::handle attrs) {
             b.enter_kernel(to_expr_list(grid, "grid extent"), vec_of<Var>(bvars), to_expr_list(threads, "threads"),
                            vec_of<Var>(tvars), to_attr_map(attrs));
           },
           "grid"_a, "block_vars"_a, "threads"_a, "thread_vars"_a, "attrs"_a = nb::none())
      .def("set_kernel_attr", [](IRBuilder& b, const std::string& k, nb::handle v) { b.set_kernel_attr(k, to_attr(v, k)); },
           "key"_a, "value"_a)
      .def("set_kernel_dim",
           [](IRBuilder& b, bool is_thread, size_t index, nb::handle extent, const Var& var) {
             b.set_kernel_dim(is_thread, index, to_expr(extent, "kernel extent"), var);
           },
           "is_thread"_a, "index"_a, "extent"_a, "var"_a)
      .def("enter_scope", &IRBuilder::enter_scope)
      .def("exit", &IRBuilder::exit)
      .def("reopen_last_npu_kernel", &IRBuilder::reopen_last_npu_kernel)
      .def_prop_ro("depth", &IRBuilder::depth)
      .def("in_kernel", &IRBuilder::in_kernel)
      .def("finish_func",
           [](IRBuilder& b, const std::string& name, nb::handle params, nb::handle attrs, nb::handle span) {
             return b.finish_func(name, to_params(params), to_attr_map(attrs), opt_span(span));
           },
           "name"_a, "params"_a, "attrs"_a = nb::none(), "span"_a = nb::none())
      .def("finish_stmt", &IRBuilder::finish_stmt)
      // Conveniences: build a statement stamped with the current span and emit it.
      .def("emit_store",
           [](IRBuilder& b, const Buffer& buf, nb::handle idx, nb::handle v) {
             b.emit(make_store(buf, to_expr_list(idx, "index"), to_expr(v, "stored value"), b.span()));
           },
           "buffer"_a, "indices"_a, "value"_a)
      .def("emit_evaluate", [](IRBuilder& b, nb::handle v) { b.emit(make_evaluate(to_expr(v), b.span())); }, "value"_a)
      .def("emit_tile_op",
           [](IRBuilder& b, const std::string& op, nb::handle args, nb::handle attrs) {
             b.emit(make_tile_op(op, to_tile_args(args), to_attr_map(attrs), b.span()));
           },
           "op"_a, "args"_a, "attrs"_a = nb::none())
      .def("emit_loop_control", [](IRBuilder& b, bool is_break) { b.emit(make_loop_control(is_break, b.span())); },
           "is_break"_a)
      .def("make_buffer",
           [](IRBuilder& b, const std::string& name, const std::string& dtype, nb::handle shape,
              const std::string& scope, nb::handle strides) {
             std::vector<Expr> st = strides.is_none() ? std::vector<Expr>{} : to_expr_list(strides, "stride");
             return Buffer(name, dt(dtype), to_expr_list(shape, "shape entry"), parse_scope(scope), std::move(st),
                           b.span());
           },
           "name"_a, "dtype"_a, "shape"_a, "scope"_a = "global", "strides"_a = nb::none(),
           "A buffer declared at the current span.");
}

}  // namespace tl::bind::detail
