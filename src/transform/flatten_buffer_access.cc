#include "transform/flatten_buffer_access.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

// True when the buffer's element count is a constant below 2^31.
bool small_constant_size(const Buffer& b) {
  __int128 n = 1;
  for (auto& e : b.shape()) {
    int64_t v;
    if (!is_const_int(e, &v)) return false;
    n *= v;
    if (n >= (__int128(1) << 31)) return false;
  }
  for (auto& s : b->strides)
    if (!is_const_int(s)) return false;
  return true;
}

class Flattener : public StmtMutator {
 public:
  explicit Flattener(bool wide_index) : wide_index_(wide_index) {}
  using StmtMutator::mutate;

 protected:
  Expr mutate_load(const BufferLoadNode* n, const Expr& e) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    if (needs_flatten(n->buffer, idx)) return make_load(n->buffer, {offset(n->buffer, idx)});
    return changed ? make_load(n->buffer, std::move(idx)) : e;
  }
  Stmt mutate_store(const BufferStoreNode* n, const Stmt& s) override {
    std::vector<Expr> idx;
    bool changed = mutate_list(n->indices, &idx);
    Expr v = mutate(n->value);
    if (needs_flatten(n->buffer, idx)) return make_store(n->buffer, {offset(n->buffer, idx)}, v, n->span);
    if (!changed && v.same_as(n->value)) return s;
    return make_store(n->buffer, std::move(idx), v, n->span);
  }
  Stmt mutate_tile_op(const TileOpNode* n, const Stmt& s) override {
    throw_error<Error>("internal error: flatten_buffer_access found tile op '", n->op,
                       "'; run lower_tile_ops first");
  }

 private:
  bool needs_flatten(const Buffer& b, const std::vector<Expr>& idx) const {
    if (idx.size() != b.ndim()) return false;  // already flat
    return b.ndim() > 1 || (wide(b) && idx[0].dtype() != DataType::Int64()) || !b->strides.empty();
  }
  bool wide(const Buffer& b) const { return b.scope() == MemScope::kGlobal && (wide_index_ || !small_constant_size(b)); }
  Expr offset(const Buffer& b, const std::vector<Expr>& idx) const {
    std::vector<Expr> strides = b.effective_strides();
    bool w = wide(b);
    Expr off;
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr i = w ? make_cast(DataType::Int64(), idx[d]) : idx[d];
      Expr st = w ? make_cast(DataType::Int64(), strides[d]) : strides[d];
      Expr term = i * st;
      off = off.defined() ? off + term : term;
    }
    return off.defined() ? off : make_int(0);
  }

  bool wide_index_;
};

}  // namespace

PrimFunc flatten_buffer_access(const PrimFunc& f, const PassContext& ctx) {
  Flattener fl(config_int(ctx.configs, "tl.config_index_bitwidth", 32) == 64);
  Stmt body = fl.mutate(f.body());
  return body.same_as(f.body()) ? f : f.with_body(body);
}

TL_REGISTER_PASS("flatten_buffer_access", flatten_buffer_access);

}  // namespace tl
