#include "target/ascend/ascend_npuir_kernel.h"

#include "ir/functor.h"

namespace tl {

namespace {

bool uses_any(const Stmt& s, const std::vector<Var>& vars) {
  bool used = false;
  for_each_expr(s, [&](const Expr& e) {
    for_each_subexpr(e, [&](const Expr& x) {
      for (auto& v : vars)
        if (x.get() == static_cast<const ExprNode*>(v.get())) used = true;
    });
  });
  return used;
}

class MarkNpu : public StmtMutator {
 protected:
  Stmt mutate_kernel(const KernelLaunchNode* k, const Stmt& s) override {
    if (attr_bool(k->attrs, "is_npu", false) || k->grid.size() != 1 || uses_any(k->body, k->thread_vars)) return s;
    // As the frontend builds `T.Kernel(n, is_npu=True) as cid`: grid [n, 2], a vid the body does not use.
    AttrMap attrs = k->attrs;
    attrs["is_npu"] = Attr(true);
    attrs["npu_vid"] = Attr(true);
    std::vector<Expr> grid = {k->grid[0], make_int(2)};
    std::vector<Var> bvars = {k->block_vars[0], Var("vid")};
    return make_kernel(grid, bvars, {}, {}, attrs, k->body, k->span);
  }
};

}  // namespace

PrimFunc ascend_npuir_kernel(const PrimFunc& f, const PassContext& ctx) {
  if (!ctx.target.npuir) return f;
  return f.with_body(MarkNpu().mutate(f.body()));
}

TL_REGISTER_PASS("ascend_npuir_kernel", ascend_npuir_kernel);

}  // namespace tl
