#include "target/ascend/ascend_expand_gemm.h"

#include "transform/pass_config.h"

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "sim/machine_model.h"

namespace tl {

namespace {

Stmt flag(const char* op, const char* s, const char* d, Expr id, const Span& sp) {
  return make_evaluate(make_call(DataType::Void(), op, {make_string(s), make_string(d), std::move(id)}), sp);
}
Stmt set_flag(const char* s, const char* d, Expr id, const Span& sp) { return flag("ascend.set_flag", s, d, id, sp); }
Stmt wait_flag(const char* s, const char* d, Expr id, const Span& sp) { return flag("ascend.wait_flag", s, d, id, sp); }

int64_t const_extent(const TileOpNode& op, const Range& r, const char* what) {
  int64_t v;
  if (!is_const_int(r.extent, &v))
    throw_error<SyntaxError>(op_error_prefix(op), "the ", what, " extent must be a compile-time constant on target "
                             "ascend, got ", to_string(r.extent));
  return v;
}

// Region of the last two dimensions of `r` with dimension `axis` (0 = rows, 1 = cols) narrowed to
// [start, start + len).
BufferRegion narrow(const BufferRegion& r, int axis, Expr start, int64_t len) {
  std::vector<Range> rr = r.region;
  size_t d = rr.size() - 2 + axis;
  rr[d] = Range(rr[d].min + start, make_int(len));
  return BufferRegion(r.buffer, rr);
}

class GemmExpander : public StmtMutator {
 public:
  GemmExpander(const sim::MachineModel& m, bool lean) : model_(m), lean_(lean) {}

 protected:
  Stmt mutate_tile_op(const TileOpNode* op, const Stmt& s) override {
    const GemmOp* gemm = tile_op_as<GemmOp>(*op);
    if (!gemm || gemm->form() == GemmForm::kMma) return s;  // gemm / gemm_v0 expand into mma
    const bool tl_gemm = gemm->form() == GemmForm::kGemm;
    if (op->args.size() != 3 || !op->args[0].is_region() || !op->args[1].is_region() || !op->args[2].is_region())
      throw_error<SyntaxError>(op_error_prefix(*op), "expects (A, B, C) buffers");
    const BufferRegion &A = op->args[0].region, &B = op->args[1].region, &C = op->args[2].region;
    bool ta = attr_bool(op->attrs, "transpose_A", false), tb = attr_bool(op->attrs, "transpose_B", false);
    Expr init = make_bool(false);
    auto it = op->attrs.find(gemm->clear_attr());
    if (it == op->attrs.end() && tl_gemm) it = op->attrs.find("initC");
    if (it != op->attrs.end() && !it->second.is_none()) {
      init = it->second.as_expr();
      if (!init.dtype().is_bool()) init = ne(init, make_int(0, init.dtype()));
    }
    if (A.region.size() < 2 || B.region.size() < 2 || C.region.size() < 2)
      throw_error<SyntaxError>(op_error_prefix(*op), "operands must be matrices (at least 2 dimensions)");
    if (A.buffer.scope() == MemScope::kL0A) {  // generic T.gemm on L0 operands: one cube instruction
      AttrMap at;
      at["init"] = Attr(init);
      at["transpose_A"] = Attr(ta);
      at["transpose_B"] = Attr(tb);
      return make_tile_op("mma", op->args, at, op->span);
    }
    const Span& sp = op->span;
    auto last2 = [&](const BufferRegion& r, const char* n) {
      size_t k = r.region.size();
      return std::make_pair(const_extent(*op, r.region[k - 2], n), const_extent(*op, r.region[k - 1], n));
    };
    auto [a0, a1] = last2(A, "A");
    auto [b0, b1] = last2(B, "B");
    int64_t M = ta ? a1 : a0, K = ta ? a0 : a1, N = tb ? b0 : b1, Kb = tb ? b1 : b0;
    if (K != Kb)
      throw_error<SyntaxError>(op_error_prefix(*op), "A has K = ", K, " but B has K = ", Kb,
                               tb ? "" : " (is B stored [N, K]? pass transpose_B=True)");
    DataType ad = A.buffer.dtype(), bd = B.buffer.dtype();
    int64_t half = model_.mem_bytes[int(sim::Mem::kL0A)] / 2;
    int64_t eb = std::max(ad.element_bytes(), bd.element_bytes());
    int64_t kc = std::min<int64_t>(model_.gemm_v0_k_chunk, K);
    while (kc > 16 && (M * kc * eb > half || N * kc * eb > half || K % kc != 0)) kc -= 16;
    if (M * kc * eb > half || N * kc * eb > half || K % kc != 0)
      throw_error<SyntaxError>(op_error_prefix(*op), "cannot split K = ", K, " into chunks that fit half of L0A/L0B (",
                               half, " bytes) for M = ", M, ", N = ", N, "; K must be a multiple of 16 and M, N at most ",
                               half / (16 * eb));
    int64_t nchunks = K / kc;
    // The two halves of the whole L0A / L0B, as [2, rows, cols] buffers pinned at byte 0.
    int64_t a_rows = ta ? kc : half / (kc * ad.element_bytes()), a_cols = ta ? half / (kc * ad.element_bytes()) : kc;
    int64_t b_rows = tb ? half / (kc * bd.element_bytes()) : kc, b_cols = tb ? kc : half / (kc * bd.element_bytes());
    Buffer l0a("gemm_v0_L0A", ad, {make_int(2), make_int(a_rows), make_int(a_cols)}, MemScope::kL0A, {}, sp);
    Buffer l0b("gemm_v0_L0B", bd, {make_int(2), make_int(b_rows), make_int(b_cols)}, MemScope::kL0B, {}, sp);
    Var kk("gemm_v0_k");
    Expr p = floormod(kk, make_int(2));
    auto half_region = [&](const Buffer& b, int64_t r, int64_t c) {
      return BufferRegion(b, {Range(p, make_int(1)), Range(make_int(0), make_int(r)), Range(make_int(0), make_int(c))});
    };
    BufferRegion a_src = narrow(A, ta ? 0 : 1, kk * make_int(kc), kc);
    BufferRegion b_src = narrow(B, tb ? 1 : 0, kk * make_int(kc), kc);
    BufferRegion a_dst = half_region(l0a, ta ? kc : M, ta ? M : kc);
    BufferRegion b_dst = half_region(l0b, tb ? N : kc, tb ? kc : N);
    AttrMap mm;
    mm["init"] = Attr(make_binary(BinOp::kAnd, init, eq(kk, make_int(0))));
    mm["transpose_A"] = Attr(ta);
    mm["transpose_B"] = Attr(tb);
    std::vector<Stmt> body = {
        wait_flag("m", "mte1", p, sp),
        make_tile_op("copy", {a_src, a_dst}, {}, sp),
        make_tile_op("copy", {b_src, b_dst}, {}, sp),
        set_flag("mte1", "m", p, sp),
        wait_flag("mte1", "m", p, sp),
        make_evaluate(make_call(DataType::Void(), "ascend.pipe_barrier", {make_string("m")}), sp),
        make_tile_op("mma", {a_dst, b_dst, C}, mm, sp),
        set_flag("m", "mte1", p, sp),
    };
    std::vector<Stmt> seq = {
        set_flag("mte2", "mte1", make_int(0), sp), wait_flag("mte2", "mte1", make_int(0), sp),
        set_flag("fix", "m", make_int(0), sp),     wait_flag("fix", "m", make_int(0), sp),
        set_flag("m", "mte1", make_int(0), sp),    set_flag("m", "mte1", make_int(1), sp),
        make_for(kk, make_int(0), make_int(nchunks), ForKind::kSerial, make_seq(body), {}, sp),
        wait_flag("m", "mte1", make_int(0), sp),   wait_flag("m", "mte1", make_int(1), sp),
        set_flag("mte1", "m", make_int(0), sp),    wait_flag("mte1", "m", make_int(0), sp),
        set_flag("m", "fix", make_int(0), sp),     wait_flag("m", "fix", make_int(0), sp),
        set_flag("mte1", "mte2", make_int(0), sp), wait_flag("mte1", "mte2", make_int(0), sp),
    };
    if (lean_ && tl_gemm) {
      // A Developer T.gemm under automatic sync: the L1 and L0C hazards with the surrounding
      // copies (MTE2 -> MTE1 before, MTE1 -> MTE2 / M -> FIX / FIX -> M around) are left to
      // ascend_insert_sync, which rotates them over multi-versioned L1 tiles, so the next tile's
      // GM -> L1 load overlaps this gemm. Only the L0 ping-pong of the macro stays.
      seq = {set_flag("m", "mte1", make_int(0), sp), set_flag("m", "mte1", make_int(1), sp),
             make_for(kk, make_int(0), make_int(nchunks), ForKind::kSerial, make_seq(body), {}, sp),
             wait_flag("m", "mte1", make_int(0), sp), wait_flag("m", "mte1", make_int(1), sp),
             set_flag("mte1", "m", make_int(0), sp),  wait_flag("mte1", "m", make_int(0), sp)};
    }
    Stmt pin = make_seq({make_tile_op("annotate_address", {BufferRegion::full(l0a), make_int(0)}, {}, sp),
                         make_tile_op("annotate_address", {BufferRegion::full(l0b), make_int(0)}, {}, sp)});
    return make_allocate(l0a, make_allocate(l0b, make_seq({pin, make_seq(seq, sp)}), sp), sp);
  }

 private:
  const sim::MachineModel& model_;
  bool lean_;
};

}  // namespace

PrimFunc ascend_expand_gemm(const PrimFunc& f, const PassContext& ctx) {
  bool auto_sync = config_bool(ctx.configs, "tl.ascend_auto_sync") || attr_bool(f.attrs(), "enable_auto_sync", false) ||
                   attr_bool(f.attrs(), "ascend.pipelined", false);
  GemmExpander e(sim::machine_model(ctx.target.model), auto_sync);
  Stmt b = e.mutate(f.body());
  return b.same_as(f.body()) ? f : f.with_body(b);
}

TL_REGISTER_PASS("ascend_expand_gemm", ascend_expand_gemm);

}  // namespace tl
