// T.annotate_layout({buf: layout}) (kinds custom, swizzled, zn, nz, fragment) and T.annotate_address({buf: offset}): hints for layout
// inference and memory planning (cuda shared-memory swizzles, Ascend fractal layouts and pinned
// on-chip addresses). They neither read nor write data; the loop form is nothing (cpu buffers are
// plain row-major arrays).
#include "ir/error.h"
#include "ir/printer.h"
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

}  // namespace tl
