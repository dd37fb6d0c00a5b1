#include "target/cpu/pad_gemm_accumulators.h"

#include <map>
#include <set>

#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/gemm.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr int64_t kAliasBytes = 1024;  // row strides that are multiples of this alias L1 sets
constexpr int64_t kPadBytes = 64;      // one cache line more per row
constexpr int64_t kMinRows = 16;       // one AMX tile of rows

bool amx_input(DataType t) { return t == DataType::BFloat16() || t == DataType::Float(16) || t == DataType::Int(8); }

// Buffers that are a qualifying GEMM's C, and buffers that must keep their dense layout.
class Collector : public IRVisitor {
 public:
  std::set<const BufferNode*> gemm_c, excluded;

  void visit_call(const CallNode* n) override {
    if (n->op == "tl.address_of")  // a pointer that something outside the tile ops may use densely
      for (const Expr& a : n->args)
        if (auto* l = a.as<BufferLoadNode>()) excluded.insert(l->buffer.get());
    IRVisitor::visit_call(n);
  }
  void visit_tile_op(const TileOpNode* n) override {
    TileOpKind kind;
    bool known = tile_op_kind(*n, &kind);
    bool allowed = known && (kind == TileOpKind::kCopy || kind == TileOpKind::kFill || kind == TileOpKind::kGemm ||
                             kind == TileOpKind::kReduce);
    if (!allowed) {
      for (const TileArg& a : n->args)
        if (a.is_region()) excluded.insert(a.region.buffer.get());
    } else if (kind == TileOpKind::kGemm) {
      GemmOperands g = analyze_gemm(*n);
      if (amx_input(g.A.buffer.dtype()) && amx_input(g.B.buffer.dtype())) gemm_c.insert(g.C.buffer.get());
    }
    IRVisitor::visit_tile_op(n);
  }
};

// The padded row stride (elements) for b, or 0 when b keeps its layout.
int64_t padded_ld(const Buffer& b) {
  if (!is_block_local(b.scope()) || !b->strides.empty() || b.ndim() < 2) return 0;
  if (b.dtype() != DataType::Float32() && b.dtype() != DataType::Int(32)) return 0;
  std::vector<int64_t> shape;
  for (const Expr& e : b.shape()) {
    int64_t v = 0;
    if (!is_const_int(e, &v) || v <= 0) return 0;
    shape.push_back(v);
  }
  const int64_t elem = b.dtype().element_bytes(), cols = shape.back(), rows = shape[shape.size() - 2];
  if (rows < kMinRows || (cols * elem) % kAliasBytes != 0) return 0;
  return cols + kPadBytes / elem;
}

}  // namespace

PrimFunc pad_gemm_accumulators(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_gemm_padding")) return f;
  Collector c;
  c.visit(f.body());
  std::map<Buffer, Buffer, BufferLess> bmap;
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* a = s.as<AllocateNode>();
    if (!a) return;
    const Buffer& b = a->buffer;
    if (!c.gemm_c.count(b.get()) || c.excluded.count(b.get())) return;
    int64_t ld = padded_ld(b);
    if (ld == 0) return;
    // Row-major over the padded rows: the last stride 1, the row stride ld, each outer one the
    // product of the inner extent and stride.
    std::vector<Expr> strides(b.ndim());
    int64_t st = 1;
    for (size_t d = b.ndim(); d-- > 0;) {
      strides[d] = make_int(st, b.shape().back().dtype());
      st = d + 1 == b.ndim() ? ld : st * get_const_int(b.shape()[d], "extent");
    }
    bmap[b] = Buffer(b.name(), b.dtype(), b.shape(), b.scope(), std::move(strides), b->span);
  });
  if (bmap.empty()) return f;
  return f.with_body(substitute_buffers(f.body(), bmap));
}

TL_REGISTER_PASS("pad_gemm_accumulators", pad_gemm_accumulators);

}  // namespace tl
