// T.annotate_layout({buf: layout}) (kinds custom, swizzled, zn, nz, fragment) and T.annotate_address({buf: offset}): hints for layout
// inference and memory planning (cuda shared-memory swizzles, Ascend fractal layouts and pinned
// on-chip addresses). They neither read nor write data; the loop form is nothing (cpu buffers are
// plain row-major arrays).
#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "layout/infer_layout.h"
#include "layout/swizzle.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

const std::vector<std::string> kLayoutKinds = {"custom", "swizzled", "zn", "nz", "fragment"};

bool has_list(const TileOpNode& op, const char* key) {
  auto it = op.attrs.find(key);
  return it != op.attrs.end() && it->second.kind() == Attr::kExprList;
}

void check_annotate_layout(const TileOpNode& op) {
  check_num_args(op, 1, 1, "T.annotate_layout({buffer: layout})");
  region_arg(op, 0, "buffer");
  std::string kind = checked_str_attr(op, "kind", kLayoutKinds, "custom");
  if ((kind == "custom" || kind == "fragment") && (!has_list(op, "vars") || !has_list(op, "exprs")))
    throw_op_error_type(op, "a " + kind + " layout needs the index variables ('vars') and the forward map ('exprs')");
  if (kind == "fragment") {
    auto it = op.attrs.find("thread");
    if (it == op.attrs.end() || it->second.is_none())
      throw_op_error_type(op, "a fragment layout (T.Fragment) needs its thread map ('thread')");
  }
}

void check_annotate_address(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.annotate_address({buffer: byte_offset})");
  const BufferRegion& r = region_arg(op, 0, "buffer");
  const Expr& off = expr_arg(op, 1, "byte_offset");
  if (!off.dtype().is_integer())
    throw_op_error_type(op, "the address of buffer '" + r.buffer.name() + "' must be an integer byte offset, got " +
                                print_expr(off));
  int64_t v;
  if (is_const_int(off, &v) && v < 0)
    throw_op_error_value(op, "the address of buffer '" + r.buffer.name() + "' must be non-negative, got " +
                                 std::to_string(v));
}

Stmt lower_nothing(const TileOpNode&, const LowerContext&) { return make_nop(); }

}  // namespace

void AnnotateLayoutOp::verify(const TileOpNode& op) const { check_annotate_layout(op); }
Stmt AnnotateLayoutOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_nothing(op, ctx); }
void AnnotateAddressOp::verify(const TileOpNode& op) const { check_annotate_address(op); }
Stmt AnnotateAddressOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_nothing(op, ctx); }

namespace {
TileOpRegistration reg_layout(std::make_unique<AnnotateLayoutOp>());
TileOpRegistration reg_address(std::make_unique<AnnotateAddressOp>());
}  // namespace

// The layout the user pinned (cuda: shared-memory swizzles and custom permutations; the Ascend
// kinds have no meaning there). Runs before every other layout constraint of the kernel.
bool AnnotateLayoutOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  if (stage != LayoutStage::kAnnotate) return false;
  if (op.args.empty() || !op.args[0].is_region()) return false;
  const Buffer& b = op.args[0].region.buffer;
  std::string kind = attr_str(op.attrs, "kind", "custom");
  if (b.scope() == MemScope::kShared) {
    std::vector<int64_t> shape = const_shape(b, "shared buffer");
    if (kind == "swizzled") {
      if (!swizzle_applicable(shape, b.dtype().element_bytes()))
        throw_error<LayoutError>(op_error_prefix(op), "no swizzled layout exists for shared buffer '", b.name(),
                                 "' ", shape_str(shape), " of ", b.dtype().str(),
                                 "; rows must be 16, 32, 64 or a multiple of 128 bytes");
      ctx.set_shared_layout(b, make_swizzled_layout(shape, b.dtype().element_bytes()));
    } else if (kind == "custom") {
      auto vit = op.attrs.find("vars");
      auto eit = op.attrs.find("exprs");
      if (vit == op.attrs.end() || eit == op.attrs.end())
        throw_error<LayoutError>(op_error_prefix(op), "a custom layout needs 'vars' and 'exprs'");
      std::vector<Var> vars;
      for (const Expr& e : vit->second.as_expr_list()) {
        const VarNode* v = e.as<VarNode>();
        if (!v) throw_error<LayoutError>(op_error_prefix(op), "layout 'vars' must be variables");
        vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
      }
      std::vector<Expr> exprs = eit->second.as_expr_list();
      if (vars.size() != shape.size())
        throw_error<LayoutError>(op_error_prefix(op), "the layout of '", b.name(), "' takes ", vars.size(),
                                 " indices for a buffer of rank ", shape.size());
      std::vector<int64_t> out_shape;
      // The output space: flat, as large as the largest image (checked bijective below).
      int64_t total = 1;
      for (int64_t s : shape) total *= s;
      Layout l = make_layout(shape, {total}, [&](const std::vector<Var>& v) {
        std::map<Var, Expr, VarLess> sub;
        for (size_t i = 0; i < vars.size(); ++i) sub[vars[i]] = v[i];
        std::vector<Expr> out;
        std::vector<Expr> mapped;
        for (const Expr& e : exprs) mapped.push_back(substitute(e, sub));
        if (mapped.size() == 1) return mapped;
        // A multi-dimensional image is flattened row-major over the buffer's own shape.
        return std::vector<Expr>{flatten_index(mapped, shape)};
      }, "custom");
      std::string why;
      if (!l.is_bijective(&why))
        throw_error<LayoutError>(op_error_prefix(op), "the layout annotated for '", b.name(),
                                 "' is not a permutation of its elements: ", why);
      ctx.set_shared_layout(b, l);
    } else {
      throw_error<LayoutError>(op_error_prefix(op), "layout kind '", kind,
                               "' is an Ascend layout; it has no meaning on target cuda");
    }
  } else if (is_fragment_buffer(b)) {
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.annotate_layout of fragment '",
                                b.name(), "' on target cuda (fragment layouts are inferred)");
  }
  return true;
}

}  // namespace tl
