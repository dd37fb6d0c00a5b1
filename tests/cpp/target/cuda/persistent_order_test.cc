// persistent_order: the paired tile order runs every tile exactly once, whatever the grid and the
// number of CTAs, and pairs q blocks of complementary causal lengths.
#include "target/cuda/persistent_order.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "ir/eval.h"

namespace tl {
namespace {

struct OrderRun {
  std::map<std::tuple<int64_t, int64_t, int64_t>, int> count;  // (bx, by, bz) -> times run
  std::vector<int64_t> work;                                   // per CTA: sum of causal lengths bx + 1
};

OrderRun simulate(int64_t g0, int64_t g1, int64_t g2, int64_t nctas) {
  Var cta("cta", DataType::Int32()), iter("tile_iter", DataType::Int32());
  std::vector<Var> blocks = {Var("bx", DataType::Int32()), Var("by", DataType::Int32()), Var("bz", DataType::Int32())};
  Expr n = make_int(nctas);
  PairedTileOrder o = paired_tile_order({make_int(g0), make_int(g1), make_int(g2)}, blocks, cta, iter, n);
  EXPECT_EQ(o.valid.defined(), g0 % 2 == 1);
  OrderRun r;
  r.work.assign(static_cast<size_t>(nctas), 0);
  for (int64_t c = 0; c < nctas; ++c) {
    std::map<Var, Value, VarLess> env = {{cta, Value::from_int(c)}};
    const int64_t trip = eval_expr(o.trip, env).i;
    for (int64_t j = 0; j < trip; ++j) {
      env[iter] = Value::from_int(j);
      for (const Stmt& s : o.lets) {
        const auto* let = s.as<LetStmtNode>();
        env[let->var] = eval_expr(let->value, env);
      }
      if (o.valid.defined() && !eval_expr(o.valid, env).as_bool()) continue;
      const int64_t bx = env[blocks[0]].i, by = env[blocks[1]].i, bz = env[blocks[2]].i;
      ++r.count[{bx, by, bz}];
      r.work[static_cast<size_t>(c)] += bx + 1;
    }
  }
  return r;
}

TEST(PersistentOrder, EveryTileOnce) {
  for (auto [g0, g1, g2] : {std::tuple<int64_t, int64_t, int64_t>{32, 16, 8}, {3, 2, 2}, {4, 2, 1}, {1, 3, 1},
                            {7, 5, 3}, {2, 1, 1}})
    for (int64_t nctas : {1, 3, 7, 132}) {
      OrderRun r = simulate(g0, g1, g2, nctas);
      EXPECT_EQ(static_cast<int64_t>(r.count.size()), g0 * g1 * g2) << g0 << " " << g1 << " " << g2 << " " << nctas;
      for (const auto& [tile, times] : r.count) {
        EXPECT_EQ(times, 1);
        EXPECT_LT(std::get<0>(tile), g0);
        EXPECT_LT(std::get<1>(tile), g1);
        EXPECT_LT(std::get<2>(tile), g2);
      }
    }
}

TEST(PersistentOrder, CausalWorkIsBalanced) {
  // B8 H16 S4096, 128-row q blocks on 132 SMs: 2048 pairs of 33 KV blocks each, 15 or 16 per CTA
  // (grid order round-robin: 451 to 576 per CTA).
  OrderRun r = simulate(32, 16, 8, 132);
  std::set<int64_t> work(r.work.begin(), r.work.end());
  EXPECT_EQ(work, (std::set<int64_t>{15 * 33, 16 * 33}));
}

}  // namespace
}  // namespace tl
