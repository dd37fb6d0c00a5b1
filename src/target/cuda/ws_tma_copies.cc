// The producer's TMA copies in warp_specialize (ws_tma_copies.h).
#include "target/cuda/ws_tma_copies.h"

#include "ir/functor.h"
#include "op/tile_ops.h"
#include "target/cuda/warp_specialize_common.h"

namespace tl {

bool tma_box_for(const TileOpNode& op, const LayoutMap& lm, const std::vector<Param>& params, TmaBoxPlan* box,
                 std::string* why) {
  if (attr_bool(op.attrs, "disable_tma", false)) return *why = "a producer copy has disable_tma", false;
  if (auto pv = op.attrs.find("pad_value"); pv != op.attrs.end() && !pv->second.is_none() &&
                                             !is_zero(pv->second.as_expr()))
    return *why = "a producer copy fills out-of-bounds reads with a value other than 0 (TMA fills 0)", false;
  const BufferRegion& src = op.args[0].region;
  const Buffer& dst = op.args[1].region.buffer;
  if (src.buffer.dtype() != dst.dtype()) return *why = "a producer copy converts types", false;
  bool is_param = false;
  for (const Param& p : params) is_param |= p.is_buffer() && p.buffer.same_as(src.buffer);
  if (!is_param) return *why = "'" + src.buffer.name() + "' is not a kernel parameter", false;
  int swizzle = 0;
  if (auto it = lm.shared.find(dst); it != lm.shared.end()) {
    const std::string& n = it->second->name;
    if (n.rfind("gmma", 0) != 0 && n != "row_major") return *why = "'" + dst.name() + "' is laid out as " + n, false;
    if (n != "row_major") swizzle = std::stoi(n.substr(4));
  }
  std::string w;
  if (!plan_tma_box(src, const_shape(dst, "shared buffer"), swizzle, box, &w))
    return *why = "copy into '" + dst.name() + "': " + w, false;
  return true;
}

std::set<size_t> plan_multicast(const KernelLaunchNode& k, const std::vector<BodyItem>& top,
                                const std::vector<BodyItem>& items, const std::vector<size_t>& producers,
                                const std::map<size_t, TmaBoxPlan>& boxes, int64_t cluster) {
  std::set<size_t> multicast;
  if (k.block_vars.empty()) return multicast;
  std::set<const VarNode*> x_vars = {k.block_vars[0].get()};
  auto add_lets = [&](const std::vector<BodyItem>& v) {
    for (const BodyItem& it : v)
      if (it.let_var.defined() && uses_any_var(it.let_value, x_vars)) x_vars.insert(it.let_var.get());
  };
  add_lets(top);
  add_lets(items);
  for (size_t i : producers) {
    const auto* op = items[i].stmt.as<TileOpNode>();
    const BufferRegion& src = op->args[0].region;
    bool depends = false;
    for (const Range& r : src.region) depends = depends || uses_any_var(r.min, x_vars) || uses_any_var(r.extent, x_vars);
    const TmaBoxPlan& b = boxes.at(i);
    if (depends || b.box.size() < 2 || b.box.size() > 4 || b.box[1] % cluster) continue;
    bool flat = true;
    for (size_t d = 2; d < b.box.size(); ++d) flat = flat && b.box[d] == 1;
    const int64_t share_bytes = b.box[1] / cluster * b.box[0] * src.buffer.dtype().element_bytes();
    if (!flat || share_bytes % 1024) continue;
    multicast.insert(i);
  }
  return multicast;
}

}  // namespace tl
