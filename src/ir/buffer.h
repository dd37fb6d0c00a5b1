// Buffers, regions and attribute values.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace tl {

// Where a buffer lives. The first five are target-neutral (what T.alloc_* produce); the Ascend
// memories are produced by T.alloc_L1/... or by scope inference on the ascend target.
enum class MemScope : uint8_t {
  kGlobal,    // kernel parameter / device memory
  kShared,    // T.alloc_shared: block-shared (cuda smem; cpu block-local; ascend L1 or UB)
  kFragment,  // T.alloc_fragment: block-level register tile with an inferred thread layout
  kLocal,     // T.alloc_local: per-thread array
  kLocalVar,  // T.alloc_var: per-thread scalar (a buffer of shape [1])
  kL1,        // Ascend cube-core L1
  kUB,        // Ascend vector-core unified buffer
  kL0A,
  kL0B,
  kL0C,
  kL0,        // Ascend L0A/L0B/L0C, chosen by gemm operand position during scope inference
  kBarrier,   // cuda mbarrier array (T.alloc_barrier)
};
const char* scope_name(MemScope s);  // "global", "shared", "fragment", "local", "local.var", "L1", ...
MemScope parse_scope(const std::string& name);  // inverse; throws ValueError
bool is_ascend_scope(MemScope s);
// A block's own arrays on a cpu block: T.alloc_shared, T.alloc_fragment, T.alloc_local.
bool is_block_local(MemScope s);

struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<Expr> shape;
  // Element strides; empty means dense row-major. Global tensors from T.StridedTensor carry them.
  std::vector<Expr> strides;
  MemScope scope = MemScope::kGlobal;
  Span span;  // where it was declared
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<const BufferNode> node) : node_(std::move(node)) {}
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape, MemScope scope,
         std::vector<Expr> strides = {}, Span span = {});

  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& o) const { return node_ == o.node_; }
  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  const std::vector<Expr>& shape() const { return node_->shape; }
  MemScope scope() const { return node_->scope; }
  size_t ndim() const { return node_->shape.size(); }

  // Strides actually in effect (explicit ones, or the row-major ones derived from the shape).
  std::vector<Expr> effective_strides() const;
  // Linear element offset of `indices`.
  Expr offset_of(const std::vector<Expr>& indices) const;
  // Product of the shape (elements).
  Expr num_elements() const;
  // Returns a copy with some fields changed (buffers are immutable).
  Buffer with_shape(std::vector<Expr> shape) const;
  Buffer with_scope(MemScope scope) const;
  Buffer with_name(std::string name) const;

 private:
  std::shared_ptr<const BufferNode> node_;
};

struct BufferLess {
  bool operator()(const Buffer& a, const Buffer& b) const { return a.get() < b.get(); }
};
struct BufferHash {
  size_t operator()(const Buffer& b) const { return std::hash<const void*>()(b.get()); }
};
struct BufferEq {
  bool operator()(const Buffer& a, const Buffer& b) const { return a.get() == b.get(); }
};

struct BufferLoadNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBufferLoad;
  const Buffer buffer;
  const std::vector<Expr> indices;
  BufferLoadNode(DataType t, Buffer b, std::vector<Expr> i)
      : ExprNode(kKind, t, depth_over(i)), buffer(std::move(b)), indices(std::move(i)) {}
};
// Checks the index count against the buffer rank (one index is also accepted for a flat access).
Expr make_load(Buffer buffer, std::vector<Expr> indices);

struct Range {
  Expr min, extent;
  Range() = default;
  Range(Expr m, Expr e) : min(std::move(m)), extent(std::move(e)) {}
};

// A rectangular piece of a buffer: one (min, extent) per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
  BufferRegion() = default;
  BufferRegion(Buffer b, std::vector<Range> r) : buffer(std::move(b)), region(std::move(r)) {}
  static BufferRegion full(const Buffer& b);
  bool defined() const { return buffer.defined(); }
  // Extents with unit dimensions dropped ("squeezed"), the shape a tile op sees.
  std::vector<Expr> squeezed_extents() const;
};

// Annotation value attached to loops, kernels, tile ops and functions.
class Attr {
 public:
  enum Kind : uint8_t { kNone, kBool, kInt, kFloat, kStr, kExpr, kBuffer, kIntList, kExprList, kStrList };
  Attr() = default;
  Attr(bool v) : kind_(kBool), i_(v) {}                       // NOLINT
  Attr(int v) : kind_(kInt), i_(v) {}                         // NOLINT
  Attr(int64_t v) : kind_(kInt), i_(v) {}                     // NOLINT
  Attr(double v) : kind_(kFloat), f_(v) {}                    // NOLINT
  Attr(std::string v) : kind_(kStr), s_(std::move(v)) {}      // NOLINT
  Attr(const char* v) : kind_(kStr), s_(v) {}                 // NOLINT
  Attr(Expr v) : kind_(kExpr), e_(std::move(v)) {}            // NOLINT
  Attr(Var v) : kind_(kExpr), e_(std::move(v)) {}             // NOLINT
  Attr(Buffer v) : kind_(kBuffer), b_(std::move(v)) {}        // NOLINT
  Attr(std::vector<int64_t> v) : kind_(kIntList), ints_(std::move(v)) {}      // NOLINT
  Attr(std::vector<Expr> v) : kind_(kExprList), exprs_(std::move(v)) {}       // NOLINT
  Attr(std::vector<std::string> v) : kind_(kStrList), strs_(std::move(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == kNone; }
  bool as_bool() const;     // bool, int, or constant Expr
  int64_t as_int() const;   // int, bool, or constant-int Expr
  double as_float() const;  // float or int
  const std::string& as_str() const;
  Expr as_expr() const;     // Expr, or an int/float/bool converted to a constant
  const Buffer& as_buffer() const;
  const std::vector<int64_t>& as_int_list() const;
  const std::vector<Expr>& as_expr_list() const;
  const std::vector<std::string>& as_str_list() const;

 private:
  Kind kind_ = kNone;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  Expr e_;
  Buffer b_;
  std::vector<int64_t> ints_;
  std::vector<Expr> exprs_;
  std::vector<std::string> strs_;
};
using AttrMap = std::map<std::string, Attr>;

// Helpers for optional attributes.
bool attr_bool(const AttrMap& m, const std::string& key, bool dflt);
int64_t attr_int(const AttrMap& m, const std::string& key, int64_t dflt);
std::string attr_str(const AttrMap& m, const std::string& key, const std::string& dflt);

}  // namespace tl
