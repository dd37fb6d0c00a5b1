// The paired tile order of persistent kernels with tile-dependent loop lengths (persistent_order.h).
#include "target/cuda/persistent_order.h"

namespace tl {

PairedTileOrder paired_tile_order(const std::vector<Expr>& grid, const std::vector<Var>& block_vars, const Var& cta,
                                  const Var& iter, const Expr& num_ctas) {
  std::vector<Expr> g = grid;
  while (g.size() < 3) g.push_back(make_int(1));
  PairedTileOrder out;
  const Expr one = make_int(1), two = make_int(2);
  const Expr half = ceildiv(g[0], two);
  const Expr pairs = half * g[1] * g[2];
  out.trip = two * ceildiv(pairs - cta, num_ctas);
  auto let = [&](const Var& v, const Expr& value) {
    out.lets.push_back(make_let(v, value, make_nop()));
    return Expr(v);
  };
  const Expr p = let(Var("pair", DataType::Int32()), Expr(cta) + floordiv(Expr(iter), two) * num_ctas);
  const Expr side = let(Var("side", DataType::Int32()), floormod(Expr(iter), two));
  const Expr b = let(Var("pair_b", DataType::Int32()), floormod(p, half));
  const Expr h = let(Var("pair_h", DataType::Int32()), floordiv(p, half));
  std::vector<Expr> ids = {make_select(eq(side, make_int(0)), g[0] - one - b, b), floormod(h, g[1]), floordiv(h, g[1])};
  for (size_t i = 0; i < block_vars.size() && i < ids.size(); ++i) out.lets.push_back(make_let(block_vars[i], ids[i], make_nop()));
  int64_t g0 = 0;
  if (!(is_const_int(g[0], &g0) && g0 % 2 == 0))
    out.valid = eq(side, make_int(0)) || ne(two * b + one, g[0]);
  return out;
}

}  // namespace tl
