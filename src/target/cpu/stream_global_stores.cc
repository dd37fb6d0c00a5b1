#include "target/cpu/stream_global_stores.h"

#include <optional>

#include "ir/functor.h"
#include "ir/structural.h"
#include "target/cpu/loop_index.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr int64_t kMinRowBytes = kStreamMinRowBytes;
constexpr int64_t kMinTotalBytes = kStreamMinTotalBytes;

class StreamRewriter : public StmtMutator {
 public:
  using StmtMutator::mutate;
  int rewritten = 0;

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    int64_t bytes = 0;
    // A loop over rows (serial, constant trip count) around a streamable row copy: the total counts.
    if (auto* inner = n->body.as<ForNode>()) {
      int64_t rows = 0;
      if (n->for_kind == ForKind::kSerial && is_const_int(n->extent, &rows) && rows > 0) {
        std::optional<Stmt> copy = row_copy(inner, &bytes);
        if (copy && rows * bytes >= kMinTotalBytes) {
          ++rewritten;
          return fenced(make_for(n->var, n->min, n->extent, n->for_kind, *copy, n->annotations, n->span));
        }
      }
      return StmtMutator::mutate_for(n, s);
    }
    std::optional<Stmt> copy = row_copy(n, &bytes);
    if (copy && bytes >= kMinTotalBytes) {
      ++rewritten;
      return fenced(*copy);
    }
    return StmtMutator::mutate_for(n, s);
  }

 private:
  // The copy, then the fence that orders its streaming stores before everything after it.
  static Stmt fenced(const Stmt& copy) {
    return make_seq({copy, make_evaluate(make_call(DataType::Void(), "tl.cpu.store_fence", {}), copy->span)});
  }
  // The streaming copy for a loop `G[f + i] = L[g + i]` of at least kMinRowBytes (its size in
  // *bytes), or nothing.
  std::optional<Stmt> row_copy(const ForNode* n, int64_t* bytes) {
    if (n->for_kind != ForKind::kSerial && n->for_kind != ForKind::kVectorized) return std::nullopt;
    auto* st = n->body.as<BufferStoreNode>();
    int64_t ext = 0;
    if (!st || !is_const_int(n->extent, &ext) || ext <= 0) return std::nullopt;
    auto* ld = st->value.as<BufferLoadNode>();
    if (ld == nullptr) {  // a float32 value rounded to bfloat16 / float16: copy_stream's converting overloads
      auto* c = st->value.as<CastNode>();
      ld = c != nullptr ? c->value.as<BufferLoadNode>() : nullptr;
      const bool narrow = c != nullptr && (c->dtype == DataType::BFloat16() || c->dtype == DataType::Float(16));
      if (ld == nullptr || !narrow || st->buffer.dtype() != c->dtype || ld->buffer.dtype() != DataType::Float32())
        return std::nullopt;
    } else if (st->buffer.dtype() != ld->buffer.dtype()) {
      return std::nullopt;
    }
    if (st->buffer.scope() != MemScope::kGlobal || ld->buffer.scope() == MemScope::kGlobal ||
        st->indices.size() != 1 || ld->indices.size() != 1)
      return std::nullopt;
    const DataType t = st->buffer.dtype();
    if (t.bits % 8 != 0 || t.lanes != 1 || ext * t.bytes() < kMinRowBytes) return std::nullopt;
    std::optional<Expr> dst = unit_stride_start(st->indices[0], n), src = unit_stride_start(ld->indices[0], n);
    if (!dst || !src) return std::nullopt;
    auto address = [](const Buffer& b, const Expr& i) {
      return make_call(DataType::Handle(), "tl.address_of", {make_load(b, {i})});
    };
    *bytes = ext * t.bytes();
    return make_evaluate(make_call(DataType::Void(), "tl.cpu.copy_stream",
                                   {address(st->buffer, *dst), address(ld->buffer, *src), make_int(ext)}),
                         n->span);
  }
};

}  // namespace

PrimFunc stream_global_stores(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_stream_stores")) return f;
  StreamRewriter r;
  Stmt body = r.mutate(f.body());
  return r.rewritten == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("stream_global_stores", stream_global_stores);

}  // namespace tl
