#include "transform/check_cpu_constructs.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <sstream>
#include <vector>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/printer.h"

namespace tl {

namespace {

std::string at(const Span& span) { return span.prefix(); }

std::string human_bytes(int64_t bytes) {
  std::ostringstream os;
  os << bytes << " bytes";
  if (bytes >= (int64_t(1) << 20)) os << " (" << (bytes >> 20) << " MiB)";
  return os.str();
}

std::string shape_text(const Buffer& b) {
  std::string s = std::string(scope_name(b.scope())) + " " + b.dtype().str() + "[";
  for (size_t i = 0; i < b.shape().size(); ++i) s += (i ? ", " : "") + print_expr(b.shape()[i]);
  return s + "]";
}

constexpr int64_t kOverflow = INT64_MAX;

// Bytes of a block-local buffer with a constant shape: -1 when the shape is not constant,
// kOverflow when the size does not fit in 63 bits.
int64_t constant_bytes(const Buffer& b) {
  __int128 bytes = b.dtype().element_bytes();
  for (const Expr& e : b.shape()) {
    int64_t v = 0;
    if (!is_const_int(e, &v)) return -1;
    bytes *= std::max<int64_t>(v, 0);
    if (bytes >= kOverflow) bytes = kOverflow;  // saturate (dimensions are below 2^63)
  }
  return static_cast<int64_t>(bytes);
}

bool is_integer_division(BinOp op) {
  return op == BinOp::kDiv || op == BinOp::kMod || op == BinOp::kFloorDiv || op == BinOp::kFloorMod;
}

class CpuConstructChecker : public IRVisitor {
 public:
  using IRVisitor::visit;

  void visit(const Stmt& s) override {
    if (!s.defined()) return;
    Span saved = span_;
    if (s.span().defined()) span_ = s.span();
    IRVisitor::visit(s);
    span_ = saved;
  }

 protected:
  void visit_kernel(const KernelLaunchNode* n) override {
    std::vector<std::pair<int64_t, std::string>> saved;
    saved.swap(block_local_);
    int64_t saved_total = block_local_total_;
    block_local_total_ = 0;
    IRVisitor::visit_kernel(n);
    block_local_.swap(saved);
    block_local_total_ = saved_total;
  }
  void visit_allocate(const AllocateNode* n) override {
    MemScope s = n->buffer.scope();
    if (is_ascend_scope(s) || s == MemScope::kBarrier)
      throw_error<NotImplemented>(at(span_), "not implemented: buffer '", n->buffer.name(), "' in memory scope ",
                                  scope_name(s), " on target cpu; use T.alloc_shared / T.alloc_fragment / "
                                  "T.alloc_local, or compile for target '",
                                  s == MemScope::kBarrier ? "cuda" : "ascend", "'");
    if (s != MemScope::kGlobal) check_block_local_size(n->buffer);
    IRVisitor::visit_allocate(n);
  }
  void visit_binary(const BinaryNode* n) override {
    int64_t divisor = 1;
    if (is_integer_division(n->op) && n->dtype.is_integer() && is_const_int(n->b, &divisor) && divisor == 0)
      throw_error<ValueError>(at(span_), "integer division by zero in '", binop_name(n->op), "(",
                              print_expr(n->a), ", ", print_expr(n->b), ")'; the divisor is the constant 0");
    IRVisitor::visit_binary(n);
  }
  void visit_attr(const AttrStmtNode* n) override {
    if (n->key == "scope")
      throw_error<NotImplemented>(at(span_), "not implemented: T.Scope (Ascend cube/vector core scope) on target cpu; "
                                  "compile this kernel for target 'ascend'");
    IRVisitor::visit_attr(n);
  }
  void visit_call(const CallNode* n) override {
    if (n->op.rfind("ascend.", 0) == 0)
      throw_error<NotImplemented>(at(span_), "not implemented: T.", n->op.substr(7),
                                  " (Ascend synchronisation) on target cpu; compile this kernel for target 'ascend'");
    IRVisitor::visit_call(n);
  }

 private:
  // Every constant-shape block-local buffer of a kernel counts, whether or not its lifetime overlaps the
  // others: an upper bound of what one block holds at once.
  void check_block_local_size(const Buffer& b) {
    int64_t bytes = constant_bytes(b);
    if (bytes < 0) return;  // run-time shape: checked when it is allocated
    std::string what = "buffer '" + b.name() + "' (" + shape_text(b) + ")";
    if (bytes > kCpuMaxBlockLocalBytes)
      throw_error<ResourceError>(at(span_), what, " needs ",
                                 bytes == kOverflow ? std::string("more than 2^63 bytes") : human_bytes(bytes),
                                 " but a block's shared/fragment/local buffers are limited to ",
                                 kCpuMaxBlockLocalBytes >> 20, " MiB on target cpu; use smaller tiles");
    block_local_.emplace_back(bytes, what);
    block_local_total_ += bytes;
    if (block_local_total_ > kCpuMaxBlockLocalBytes) {
      std::sort(block_local_.rbegin(), block_local_.rend());
      std::string list;
      for (size_t i = 0; i < block_local_.size() && i < 4; ++i)
        list += (i ? ", " : "") + block_local_[i].second + " " + human_bytes(block_local_[i].first);
      throw_error<ResourceError>(at(span_), "the kernel's block-local buffers need ", human_bytes(block_local_total_),
                                 " per block (", list, block_local_.size() > 4 ? ", ..." : "",
                                 ") but a block's shared/fragment/local buffers are limited to ",
                                 kCpuMaxBlockLocalBytes >> 20, " MiB on target cpu; use smaller tiles");
    }
  }

  Span span_;
  std::vector<std::pair<int64_t, std::string>> block_local_;
  int64_t block_local_total_ = 0;
};

}  // namespace

PrimFunc check_cpu_constructs(const PrimFunc& f, const PassContext&) {
  CpuConstructChecker c;
  c.visit(f.body());
  return f;
}

TL_REGISTER_PASS("check_cpu_constructs", check_cpu_constructs);

}  // namespace tl
