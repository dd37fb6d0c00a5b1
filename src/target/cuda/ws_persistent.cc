// The persistent tile schedule of warp_specialize (ws_persistent.h).
#include "target/cuda/ws_persistent.h"

#include <map>
#include <set>

#include "ir/functor.h"
#include "target/cuda/persistent_order.h"
#include "target/cuda/warp_specialize_common.h"
#include "transform/pass_config.h"

namespace tl {

bool trip_depends_on_tile(const KernelLaunchNode& k, const std::vector<BodyItem>& top, const ForNode& loop) {
  std::set<const VarNode*> tile_vars;
  for (const Var& v : k.block_vars) tile_vars.insert(v.get());
  for (const BodyItem& it : top)
    if (it.let_var.defined() && uses_any_var(it.let_value, tile_vars)) tile_vars.insert(it.let_var.get());
  return uses_any_var(loop.min, tile_vars) || uses_any_var(loop.extent, tile_vars);
}

PersistentPlan plan_persistent(const KernelLaunchNode& k, const std::vector<BodyItem>& top, const ForNode& loop,
                               const AttrMap& configs, bool persistent_flash) {
  PersistentPlan p;
  if (config_bool(configs, "tl.disable_persistent") || k.grid.empty() || k.grid.size() > 3) return p;
  const bool varying = trip_depends_on_tile(k, top, loop);
  if (varying && !persistent_flash) return p;
  p.on = true;
  p.cta = Var("cta", DataType::Int32());
  p.iter = Var("tile_iter", DataType::Int32());
  std::vector<Expr> g = k.grid;
  while (g.size() < 3) g.push_back(make_int(1));
  p.tiles = g[0] * g[1] * g[2];
  Expr nctas = make_call(DataType::Int32(), "cuda.num_ctas", {});
  if (varying) {
    PairedTileOrder o = paired_tile_order(k.grid, k.block_vars, p.cta, p.iter, nctas);
    p.trip = o.trip;
    p.tile_lets = o.lets;
    p.valid = o.valid;
    p.base = Buffer("tl_tile_base", loop.var.dtype(), {make_int(2)}, MemScope::kLocal, {}, loop.span);
    p.extent = loop.extent;
    return p;
}
  p.trip = ceildiv(p.tiles - p.cta, nctas);
  Var t("tile", DataType::Int32());
  p.tile_lets.push_back(make_let(t, p.cta + p.iter * nctas, make_nop()));
  Expr xy = g[0] * g[1], r = floormod(Expr(t), xy);
  Expr bx = floormod(r, g[0]), by = floordiv(r, g[0]);
  const int64_t panel = attr_int(k.attrs, "use_swizzle_panel", 0);
  if (panel > 0 && k.block_vars.size() >= 2) {  // tl::rasterize2d on the tile index
    const bool row = attr_str(k.attrs, "use_swizzle_order", "row") == "row";
    Expr P = make_int(panel), gx = row ? g[0] : g[1], gy = row ? g[1] : g[0];
    Expr group = P * gx, first = floordiv(r, group) * P, rows = min(gy - first, P);
    Expr minor = first + floormod(floormod(r, group), rows), major = floordiv(floormod(r, group), rows);
    bx = row ? major : minor;
    by = row ? minor : major;
}
  std::vector<Expr> ids = {bx, by, floordiv(Expr(t), xy)};
  for (size_t i = 0; i < k.block_vars.size(); ++i)
    p.tile_lets.push_back(make_let(k.block_vars[i], ids[i], make_nop()));
  return p;
}

Stmt persistent_tile_loop(const PersistentPlan& p, const std::vector<BodyItem>& lets, const Stmt& body,
                          const Span& span, bool fresh) {
  if (!p.on) return body;
  std::map<Var, Expr, VarLess> sub;
  auto bind = [&](const Var& v) {
    if (!fresh) return v;
    Var n(v.name(), v.dtype());
    sub[v] = n;
    return n;
  };
  Var iter = bind(p.iter);
  std::vector<BodyItem> items;
  auto add_let = [&](const Var& v, const Expr& value) {
    BodyItem b;
    b.let_value = substitute(value, sub);
    b.let_var = bind(v);
    b.span = span;
    items.push_back(b);
  };
  for (const Stmt& l : p.tile_lets) add_let(l.as<LetStmtNode>()->var, l.as<LetStmtNode>()->value);
  for (const BodyItem& l : lets) add_let(l.let_var, l.let_value);
  const Buffer& base = p.base;
  Stmt tile = body;
  auto add = [&](int64_t i, const Expr& v) {
    return make_store(base, {make_int(i)}, make_load(base, {make_int(i)}) + v, span);
  };
  if (base.defined()) tile = make_seq({tile, add(0, p.extent), add(1, make_int(1, base.dtype()))});
  if (p.valid.defined()) tile = make_if(p.valid, tile);
  BodyItem b;
  b.stmt = substitute(tile, sub);
  b.span = span;
  items.push_back(b);
  Stmt loop = make_for(iter, make_int(0), p.trip, ForKind::kSerial, rebuild_body(items), {}, span);
  if (!base.defined()) return loop;
  const Expr zero = make_int(0, base.dtype());
  return make_seq({make_store(base, {make_int(0)}, zero, span), make_store(base, {make_int(1)}, zero, span), loop});
}

}  // namespace tl
