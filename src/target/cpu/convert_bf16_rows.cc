#include "target/cpu/convert_bf16_rows.h"

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "arith/analyzer.h"
#include "arith/expr_order.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "op/op_util.h"
#include "target/cpu/loop_index.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

// The loads and stores of one buffer in a statement.
struct BufferUse {
  std::vector<const BufferLoadNode*> loads;
  std::vector<const BufferStoreNode*> stores;
};

BufferUse uses_of(const Stmt& s, const Buffer& b) {
  BufferUse u;
  post_order_visit(s, [&](const Stmt& st) {
    if (auto* store = st.as<BufferStoreNode>(); store && store->buffer.same_as(b)) u.stores.push_back(store);
  });
  for_each_expr(s, [&](const Expr& e) {  // every expression, sub-expressions included
    if (auto* load = e.as<BufferLoadNode>(); load && load->buffer.same_as(b)) u.loads.push_back(load);
  });
  return u;
}

// Element-wise work only (stores, lets, ifs of pure expressions: no loop, no call with an effect,
// no tl.address_of), so the buffers are reached by plain loads and stores alone.
bool plain_body(const Stmt& body) {
  bool ok = true;
  post_order_visit(body, [&](const Stmt& s) {
    ok = ok && (s.kind() == StmtKind::kSeq || s.kind() == StmtKind::kLet || s.kind() == StmtKind::kStore ||
                s.kind() == StmtKind::kIf);
  });
  for_each_expr(body, [&](const Expr& e) { ok = ok && is_pure_expr(e); });
  return ok;
}

class RowConverter : public StmtMutator {
 public:
  using StmtMutator::mutate;
  int rewritten = 0;

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    // A nest of one or two loops: the outer one over rows, the inner one over a row's elements.
    const ForNode* inner = n->body.as<ForNode>();
    if (inner != nullptr && inner->body.as<ForNode>() == nullptr) {
      if (std::optional<Stmt> r = rewrite(n, inner)) return *r;
    } else if (inner == nullptr) {
      if (std::optional<Stmt> r = rewrite(nullptr, n)) return *r;
    }
    return StmtMutator::mutate_for(n, s);
  }

 private:
  // (b0, stride) when `base` is b0 + i * stride with b0 free of i and stride a constant.
  static std::optional<std::pair<Expr, int64_t>> row_form(const Expr& base, const Var& i) {
    Analyzer an;
    Expr b0 = an.simplify(substitute(base, {{i, make_int(0, i.dtype())}}));
    Expr b1 = an.simplify(substitute(base, {{i, make_int(1, i.dtype())}}));
    int64_t stride = 0;
    if (!is_const_int(an.simplify(b1 - b0), &stride)) return std::nullopt;
    Expr rest = an.simplify(base - b0 - make_cast(base.dtype(), i) * make_int(stride, base.dtype()));
    int64_t zero = 1;
    if (!is_const_int(rest, &zero) || zero != 0 || uses_var(b0, i)) return std::nullopt;
    return std::make_pair(b0, stride);
  }

  static bool plain_loop(const ForNode* f, int64_t* extent) {
    int64_t mn = 1;
    return is_const_int(f->min, &mn) && mn == 0 && is_const_int(f->extent, extent) && *extent > 0 &&
           f->annotations.empty();
  }

  std::optional<Stmt> rewrite(const ForNode* outer, const ForNode* inner) {
    int64_t rows = 1, len = 0;
    if (!plain_loop(inner, &len) ||
        (inner->for_kind != ForKind::kSerial && inner->for_kind != ForKind::kVectorized))
      return std::nullopt;
    if (outer != nullptr && (!plain_loop(outer, &rows) || outer->for_kind != ForKind::kSerial)) return std::nullopt;
    if (!plain_body(inner->body)) return std::nullopt;
    std::vector<Stmt> body;
    if (auto* seq = inner->body.as<SeqStmtNode>()) body = seq->seq;
    else body = {inner->body};
    for (size_t k = 0; k < body.size(); ++k) {
      auto* st = body[k].as<BufferStoreNode>();
      if (st == nullptr) continue;
      std::optional<Stmt> call = conversion(outer, inner, len, body, k, st);
      if (!call) continue;
      ++rewritten;
      std::vector<Stmt> rest;
      for (size_t q = 0; q < body.size(); ++q)
        if (q != k) rest.push_back(body[q]);
      std::optional<Stmt> in;
      if (!rest.empty())
        in = make_for(inner->var, inner->min, inner->extent, inner->for_kind,
                      rest.size() == 1 ? rest[0] : make_seq(rest, inner->body->span), inner->annotations, inner->span);
      if (outer == nullptr) {  // one loop: the conversion after it
        if (!in) return *call;
        return make_seq({mutate(*in), *call}, inner->span);  // mutate: a second cast store of the loop
      }
      // A nest: row i is converted at the end of iteration i, while the row is still in L1.
      Stmt row_body = in ? make_seq({*in, *call}, inner->span) : *call;
      return mutate(make_for(outer->var, outer->min, outer->extent, outer->for_kind, row_body, outer->annotations,
                             outer->span));
    }
    return std::nullopt;
  }

  // The conversion call(s) replacing store `st` (statement k of the innermost body), or nothing.
  std::optional<Stmt> conversion(const ForNode* outer, const ForNode* inner, int64_t len,
                                 const std::vector<Stmt>& body, size_t k, const BufferStoreNode* st) {
    auto* c = st->value.as<CastNode>();
    auto* ld = c != nullptr ? c->value.as<BufferLoadNode>() : nullptr;
    const Buffer& D = st->buffer;
    if (ld == nullptr || c->dtype != DataType::BFloat16() || D.dtype() != DataType::BFloat16() ||
        ld->buffer.dtype() != DataType::Float32() || D.scope() == MemScope::kGlobal || D.same_as(ld->buffer) ||
        st->indices.size() != 1 || ld->indices.size() != 1 || !D->strides.empty() || !ld->buffer->strides.empty())
      return std::nullopt;
    const Buffer& X = ld->buffer;
    std::optional<Expr> dj = unit_stride_start(st->indices[0], inner), xj = unit_stride_start(ld->indices[0], inner);
    if (!dj || !xj) return std::nullopt;
    Expr d0 = *dj, x0 = *xj;
    int64_t sd = len, sx = len;
    if (outer != nullptr) {
      auto dr = row_form(*dj, outer->var), xr = row_form(*xj, outer->var);
      if (!dr || !xr || dr->second < len || xr->second < len) return std::nullopt;
      d0 = dr->first;
      x0 = xr->first;
      sd = dr->second;
      sx = xr->second;
    }
    // D: this store only. X: written nowhere after it, and before it only at its own index.
    for (size_t q = 0; q < body.size(); ++q) {
      BufferUse d = uses_of(body[q], D), x = uses_of(body[q], X);
      if (q == k) {
        if (d.stores.size() != 1 || !d.loads.empty() || x.loads.size() != 1 || !x.stores.empty()) return std::nullopt;
        continue;
      }
      if (!d.loads.empty() || !d.stores.empty()) return std::nullopt;
      for (auto* w : x.stores)
        if (q > k || w->indices.size() != 1 || !structural_equal(w->indices[0], ld->indices[0])) return std::nullopt;
    }
    auto address = [](const Buffer& b, const Expr& i) {
      return make_call(DataType::Handle(), "tl.address_of", {make_load(b, {i})});
    };
    auto call = [&](const Expr& dst, const Expr& src, int64_t n) {
      return make_evaluate(make_call(DataType::Void(), "tl.cpu.convert_bf16",
                                     {address(D, dst), address(X, src),
                                      make_int(n, n > INT32_MAX ? DataType::Int64() : DataType::Int32())}),
                           st->span);
    };
    if (outer == nullptr) return call(d0, x0, len);
    Analyzer an;  // row i of the nest (the caller places the call at the end of iteration i)
    const Var& i = outer->var;
    Expr di = an.simplify(d0 + make_cast(d0.dtype(), i) * make_int(sd, d0.dtype()));
    Expr xi = an.simplify(x0 + make_cast(x0.dtype(), i) * make_int(sx, x0.dtype()));
    return call(di, xi, len);
  }
};

}  // namespace

PrimFunc convert_bf16_rows(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_convert_rows")) return f;
  RowConverter r;
  Stmt body = r.mutate(f.body());
  return r.rewritten == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("convert_bf16_rows", convert_bf16_rows);

}  // namespace tl
