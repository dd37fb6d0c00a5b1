// What the files of warp_specialize share (warp_specialize_common.h).
#include "target/cuda/warp_specialize_common.h"

#include "ir/functor.h"

namespace tl {

Stmt release_stage(const ProducerGroup& g, const Expr& empty_bar, int64_t cluster) {
  if (!g.multicast) return make_evaluate(make_call(DataType::Void(), "cuda.mbarrier_arrive_warp", {empty_bar}));
  return make_evaluate(make_call(DataType::Void(), "cuda.mbarrier_arrive_cluster_warps", {empty_bar, make_int(cluster)}));
}

bool uses_any_var(const Expr& e, const std::set<const VarNode*>& vars) {
  bool hit = false;
  for_each_subexpr(e, [&](const Expr& x) {
    if (const auto* v = x.as<VarNode>(); v && vars.count(v)) hit = true;
  });
  return hit;
}

}  // namespace tl
