// Python access to the IR tools: parse textual IR, compare and hash functions structurally,
// and the canonical (alpha-renamed) text the kernel cache keys on. tl::PrimFunc's Python class
// is registered by ir_bind.cc.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <set>

#include "bindings/bindings.h"
#include "ir/functor.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "transform/resolve_buffer_views.h"

namespace nb = nanobind;

namespace tl::bind {

void bind_ir_tools(nb::module_& m) {
  m.def(
      "parse_ir", [](const std::string& text, const std::string& filename) { return parse_func(text, filename); },
      nb::arg("text"), nb::arg("filename") = "<text>",
      "Parses one function in the textual IR (docs/IR_TEXT.md); raises TileLangSyntaxError with file:line:col.");
  m.def(
      "structural_equal", [](const PrimFunc& a, const PrimFunc& b) { return structural_equal(a, b); }, nb::arg("a"),
      nb::arg("b"), "True when the two functions are equal up to variable/buffer names and spans.");
  m.def(
      "structural_hash", [](const PrimFunc& f) { return structural_hash(f); }, nb::arg("f"),
      "A 64-bit hash consistent with structural_equal.");
  m.def(
      "structural_diff", [](const PrimFunc& a, const PrimFunc& b) { return structural_diff(a, b); }, nb::arg("a"),
      nb::arg("b"), "The first structural mismatch as text, or '' when equal.");
  m.def(
      "resolve_buffer_views",
      [](const PrimFunc& f, const std::vector<std::pair<Buffer, Buffer>>& views) { return resolve_buffer_views(f, views); },
      nb::arg("f"), nb::arg("views"),
      "Folds T.reshape / T.view buffers into one buffer per storage (transform/resolve_buffer_views.h).");
  m.def(
      "used_param_buffers",
      [](const PrimFunc& f) {
        // The tensor parameters the body reads or writes (loads, stores, tile-op regions, calls).
        std::set<const BufferNode*> used;
        post_order_visit(f.body(), [&](const Stmt& x) {
          if (auto* st = x.as<BufferStoreNode>()) used.insert(st->buffer.get());
          if (auto* t = x.as<TileOpNode>())
            for (auto& a : t->args)
              if (a.is_region()) used.insert(a.region.buffer.get());
        });
        for_each_expr(f.body(), [&](const Expr& e) {
          if (auto* l = e.as<BufferLoadNode>()) used.insert(l->buffer.get());
        });
        std::vector<bool> out;
        for (auto& p : f.params()) out.push_back(!p.is_buffer() || used.count(p.buffer.get()) > 0);
        return out;
      },
      nb::arg("f"), "Per parameter: False for a tensor parameter the body never accesses.");
  m.def(
      "canonical_text", [](const PrimFunc& f) { return canonical_text(f); }, nb::arg("f"),
      "The function printed with alpha-renamed names (the kernel-cache key form).");
}

}  // namespace tl::bind
