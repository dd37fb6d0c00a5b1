#include "transform/ascend_infer_scope.h"

#include <map>

#include "ir/error.h"
#include "ir/functor.h"

namespace tl {

namespace {

struct Use {
  bool cube_operand = false;  // A/B of a gemm (L1 when shared)
  int gemm_position = -1;     // 0/1/2 as gemm operand A/B/C
  bool copy_with_l0 = false;  // copy partner is L0A/L0B
};

bool is_gemm(const std::string& op) { return op == "gemm" || op == "gemm_v0" || op == "mma"; }

}  // namespace

PrimFunc ascend_infer_scope(const PrimFunc& f, const PassContext& ctx) {
  std::map<Buffer, Use, BufferLess> uses;
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* op = s.as<TileOpNode>();
    if (!op) return;
    if (is_gemm(op->op)) {
      for (int i = 0; i < 3 && i < static_cast<int>(op->args.size()); ++i) {
        if (!op->args[i].is_region()) continue;
        Use& u = uses[op->args[i].region.buffer];
        if (u.gemm_position < 0) u.gemm_position = i;
        if (i < 2) u.cube_operand = true;
      }
    }
  });
  // Copies whose other end is (or will be) L0A/L0B stage through L1.
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* op = s.as<TileOpNode>();
    if (!op || op->op != "copy" || op->args.size() != 2 || !op->args[0].is_region() || !op->args[1].is_region()) return;
    auto l0 = [&](const Buffer& b) {
      MemScope sc = b.scope();
      if (sc == MemScope::kL0A || sc == MemScope::kL0B) return true;
      if (sc != MemScope::kFragment && sc != MemScope::kL0) return false;
      auto it = uses.find(b);
      return it != uses.end() && (it->second.gemm_position == 0 || it->second.gemm_position == 1);
    };
    const Buffer& a = op->args[0].region.buffer;
    const Buffer& b = op->args[1].region.buffer;
    if (l0(b)) uses[a].copy_with_l0 = true;
    if (l0(a)) uses[b].copy_with_l0 = true;
  });
  std::map<Buffer, Buffer, BufferLess> bmap;
  auto visit_alloc = [&](const Buffer& b) {
    MemScope s = b.scope();
    const Use& u = uses[b];
    MemScope t = s;
    if (s == MemScope::kShared) {
      t = (u.cube_operand || u.copy_with_l0) ? MemScope::kL1 : MemScope::kUB;
    } else if (s == MemScope::kFragment || s == MemScope::kL0) {
      t = u.gemm_position == 0 ? MemScope::kL0A : u.gemm_position == 1 ? MemScope::kL0B : MemScope::kL0C;
    }
    if (t != s) bmap[b] = b.with_scope(t);
  };
  post_order_visit(f.body(), [&](const Stmt& s) {
    if (auto* a = s.as<AllocateNode>()) visit_alloc(a->buffer);
  });
  PrimFunc out = bmap.empty() ? f : f.with_body(substitute_buffers(f.body(), bmap));
  return out.with_attr("ascend.scopes_inferred", Attr(true));
}

TL_REGISTER_PASS("ascend_infer_scope", ascend_infer_scope);

}  // namespace tl
