#include "layout/fragment.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ir/error.h"
#include "layout/layout.h"
#include "layout/mma_layout.h"

namespace tl {
namespace {

TEST(Fragment, ParallelFragmentsAreBijective) {
  struct Case {
    std::vector<int64_t> shape;
    int64_t threads, vec;
  };
  for (const Case& c : std::vector<Case>{{{64, 64}, 128, 8}, {{128}, 128, 1}, {{3, 50}, 128, 1}, {{7}, 32, 1},
                                         {{1, 1}, 64, 1}, {{4, 96}, 128, 4}, {{2, 3, 40}, 96, 2}, {{256, 8}, 256, 8},
                                         {{5, 5}, 256, 1}}) {
    Fragment f = make_parallel_fragment(c.shape, c.threads, c.vec);
    std::string why;
    EXPECT_TRUE(f.is_bijective(&why)) << f.str() << ": " << why;
    EXPECT_LE(f.num_threads(), c.threads) << f.str();
    // Every element is held exactly once.
    std::set<std::vector<int64_t>> seen;
    for (int64_t t = 0; t < f.num_threads(); ++t)
      for (int64_t r = 0; r < f.num_regs(); ++r) {
        std::vector<int64_t> idx;
        if (f.index_at(t, r, &idx)) EXPECT_TRUE(seen.insert(idx).second);
      }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), f.num_elements()) << f.str();
  }
}

TEST(Fragment, VectorDigitsAreContiguousRegisters) {
  Fragment f = make_parallel_fragment({64, 64}, 128, 8);
  EXPECT_EQ(f.num_threads(), 128);
  EXPECT_EQ(f.num_regs(), 32);
  // Thread 0 holds columns 0..7 of row 0 in registers 0..7; thread 1 the next 8 columns.
  for (int64_t e = 0; e < 8; ++e) {
    EXPECT_EQ(f.thread_at({0, e}), 0);
    EXPECT_EQ(f.reg_at({0, e}), e);
    EXPECT_EQ(f.thread_at({0, 8 + e}), 1);
  }
  EXPECT_EQ(f.thread_at({1, 0}), 8);  // 8 threads per 64-element row
  EXPECT_EQ(f.thread_at({16, 0}), 0);
  EXPECT_EQ(f.reg_at({16, 0}), 8);
}

TEST(Fragment, PaddedDimensionsHaveAGuard) {
  Fragment f = make_parallel_fragment({3, 50}, 128, 1);
  EXPECT_TRUE(f.padded());
  Var t("t"), r("r");
  Expr valid = f.is_valid(t, r, 128);
  std::vector<Expr> idx = f.index_of(t, r);
  int64_t real = 0;
  for (int64_t tt = 0; tt < 128; ++tt)
    for (int64_t rr = 0; rr < f.num_regs(); ++rr) {
      std::map<Var, int64_t, VarLess> env{{t, tt}, {r, rr}};
      bool v = eval_index(valid, env) != 0;
      std::vector<int64_t> want;
      bool in = f.index_at(tt, rr, &want);
      EXPECT_EQ(v, in) << "thread " << tt << " reg " << rr;
      if (v) {
        ++real;
        EXPECT_EQ(eval_index(idx[0], env), want[0]);
        EXPECT_EQ(eval_index(idx[1], env), want[1]);
      }
    }
  EXPECT_EQ(real, 150);
}

TEST(Fragment, InvalidModesAreRejected) {
  // Two digits of dimension 0 with a gap.
  EXPECT_THROW(Fragment::make({16}, {{0, 4, 1, 1, 0}, {0, 2, 8, 0, 1}}), LayoutError);
  // Thread space with a hole (strides 1 and 8 for a 4-wide digit).
  EXPECT_THROW(Fragment::make({4, 4}, {{0, 4, 1, 1, 0}, {1, 4, 1, 8, 0}}), LayoutError);
  // A digit on both threads and registers.
  EXPECT_THROW(Fragment::make({4}, {{0, 4, 1, 1, 1}}), LayoutError);
  // Digits that do not reach the extent.
  EXPECT_THROW(Fragment::make({8}, {{0, 4, 1, 1, 0}}), LayoutError);
}

TEST(Fragment, NormalizationMakesEqualMapsEqual) {
  // One 8-digit versus the same split into 2 x 4 with consecutive strides.
  Fragment a = Fragment::make({8, 2}, {{0, 8, 1, 1, 0}, {1, 2, 1, 0, 1}});
  Fragment b = Fragment::make({8, 2}, {{0, 2, 1, 1, 0}, {0, 4, 2, 2, 0}, {1, 2, 1, 0, 1}});
  EXPECT_TRUE(a.same_as(b)) << a.str() << " vs " << b.str();
  Fragment c = Fragment::make({8, 2}, {{0, 8, 1, 2, 0}, {1, 2, 1, 1, 0}});
  EXPECT_FALSE(a.same_as(c));
}

// Reducing a GEMM accumulator over N: threads that shared a row become replicas, and the
// all-reduce groups are the 4 lanes of a quad and the warps along N.
TEST(Fragment, ReduceAccumulatorRows) {
  Fragment c = make_mma_c_fragment(64, 64, WarpPartition{2, 2});
  std::vector<ThreadGroup> groups;
  Fragment r = c.reduce(1, &groups);
  ASSERT_EQ(r.shape(), std::vector<int64_t>({64}));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].extent, 4);
  EXPECT_EQ(groups[0].stride, 1);
  EXPECT_EQ(groups[1].extent, 2);
  EXPECT_EQ(groups[1].stride, 32);
  EXPECT_EQ(r.replicate(), 8);
  std::string why;
  ASSERT_TRUE(r.is_bijective(&why)) << why;
  // The threads holding output row i are exactly the threads holding any element of input row i.
  for (int64_t i = 0; i < 64; ++i) {
    std::set<int64_t> want, got;
    for (int64_t j = 0; j < 64; ++j) want.insert(c.thread_at({i, j}));
    for (int64_t rep = 0; rep < r.replicate(); ++rep) got.insert(r.thread_at({i}, rep));
    EXPECT_EQ(want, got) << "row " << i;
  }
  // Each source register feeds the destination register of its own row, in every thread.
  std::vector<int64_t> map = c.reduce_reg_map(1);
  for (int64_t t = 0; t < c.num_threads(); ++t)
    for (int64_t reg = 0; reg < c.num_regs(); ++reg) {
      std::vector<int64_t> src, dst;
      ASSERT_TRUE(c.index_at(t, reg, &src));
      ASSERT_TRUE(r.index_at(t, map[static_cast<size_t>(reg)], &dst));
      EXPECT_EQ(dst[0], src[0]);
    }
}

TEST(Fragment, ReduceToScalarAndReplicated) {
  Fragment f = make_parallel_fragment({128}, 128, 1);
  std::vector<ThreadGroup> groups;
  Fragment s = f.reduce(0, &groups);
  EXPECT_EQ(s.shape(), std::vector<int64_t>({1}));
  EXPECT_EQ(s.replicate(), 128);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].extent, 128);
  Fragment rep = make_replicated_fragment({4, 4}, 64);
  EXPECT_EQ(rep.replicate(), 64);
  EXPECT_EQ(rep.num_regs(), 16);
  std::string why;
  EXPECT_TRUE(rep.is_bijective(&why)) << why;
}

TEST(Fragment, StrMentionsModes) {
  std::string s = mma_warp_fragment_c().str();
  EXPECT_NE(s.find("Fragment[16, 8]"), std::string::npos) << s;
  EXPECT_NE(s.find("threads=32"), std::string::npos) << s;
}

// index_at, reg_at and holds (tabulated on first use) against the maps computed here from the
// modes by division, for every (thread, register) and every (thread, element), including padded,
// replicated and permuted fragments, and one too large to tabulate (the maps then divide).
TEST(Fragment, IntegerMapsMatchTheModes) {
  std::vector<Fragment> cases = {
      make_parallel_fragment({64, 64}, 128, 8), make_parallel_fragment({3, 50}, 128, 1),
      make_parallel_fragment({2, 3, 40}, 96, 2), make_parallel_fragment({128}, 128, 1).reduce(0),
      make_replicated_fragment({4, 4}, 64), make_mma_c_fragment(64, 64, WarpPartition{2, 2}),
      make_mma_c_fragment(128, 64, WarpPartition{4, 1}).reduce(1),
      make_parallel_fragment({32, 16}, 64, 4).permute({1, 0}).replicate_on_threads(2),
      make_replicated_fragment({1024, 1024}, 2)};  // 2^20 registers: not tabulated
  for (const Fragment& f : cases) {
    const size_t rank = f.shape().size();
    auto expect_index = [&](int64_t t, int64_t r) {
      std::vector<int64_t> idx(rank, 0);
      for (const FragmentMode& m : f.modes()) {
        if (m.is_replica()) continue;
        int64_t x = m.on_threads() ? t : r, stride = m.on_threads() ? m.thread_stride : m.reg_stride;
        idx[static_cast<size_t>(m.dim)] += x / stride % m.extent * m.dim_stride;
      }
      return idx;
    };
    auto owner_digits = [&](int64_t t) {  // t's non-replica thread digits
      std::vector<int64_t> d;
      for (const FragmentMode& m : f.modes())
        if (m.on_threads() && !m.is_replica()) d.push_back(t / m.thread_stride % m.extent);
      return d;
    };
    auto element_digits = [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> d;
      for (const FragmentMode& m : f.modes())
        if (m.on_threads() && !m.is_replica()) d.push_back(idx[static_cast<size_t>(m.dim)] / m.dim_stride % m.extent);
      return d;
    };
    const bool big = f.num_regs() >= (int64_t(1) << 20);
    const int64_t reg_step = big ? 997 : 1;
    std::vector<int64_t> got;
    for (int64_t t = 0; t < f.num_threads(); ++t)
      for (int64_t r = 0; r < f.num_regs(); r += reg_step) {
        std::vector<int64_t> want = expect_index(t, r);
        bool real = true;
        for (size_t d = 0; d < rank; ++d) real &= want[d] < f.shape()[d];
        ASSERT_EQ(f.index_at(t, r, &got), real) << f.str() << " t=" << t << " r=" << r;
        std::vector<int64_t> arr(rank, -7);
        ASSERT_EQ(f.index_at(t, r, arr.data()), real) << f.str() << " t=" << t << " r=" << r;
        if (!real) continue;
        ASSERT_EQ(arr, want) << f.str();
        ASSERT_EQ(got, want) << f.str();
        ASSERT_EQ(f.reg_at(want), r) << f.str();
      }
    std::vector<int64_t> idx(rank, 0);
    const int64_t elems = f.num_elements(), step = big ? 7919 : 1;
    for (int64_t e = 0; e < elems; e += step) {
      for (size_t d = rank, rest = static_cast<size_t>(e); d-- > 0;) {
        idx[d] = static_cast<int64_t>(rest) % f.shape()[d];
        rest /= static_cast<size_t>(f.shape()[d]);
      }
      for (int64_t t = -1; t <= f.num_threads(); ++t) {
        int64_t reg = -1;
        bool want = t >= 0 && t < f.num_threads() && owner_digits(t) == element_digits(idx);
        ASSERT_EQ(f.holds(t, idx, &reg), want) << f.str() << " t=" << t;
        if (want) ASSERT_EQ(reg, f.reg_at(idx));
      }
    }
    // Outside the tile (and in a padded slot): nobody holds it.
    std::vector<int64_t> out = f.padded_shape();
    for (int64_t t = 0; t < f.num_threads(); ++t) {
      int64_t reg = 0;
      EXPECT_FALSE(f.holds(t, out, &reg));
      std::vector<int64_t> neg(rank, 0);
      neg[0] = -1;
      EXPECT_FALSE(f.holds(t, neg, &reg));
    }
  }
}

// A fragment on threads [32, 96): every map speaks of block threads, the digits stay relative, and
// the algebra keeps the offset.
TEST(Fragment, ThreadOffsetShiftsTheThreads) {
  Fragment base = make_parallel_fragment({2, 512}, 64, 8);
  Fragment f = base.with_thread_offset(32);
  EXPECT_EQ(f.thread_offset(), 32);
  EXPECT_EQ(f.thread_end(), 96);
  EXPECT_FALSE(f.same_as(base));
  EXPECT_TRUE(f.with_thread_offset(0).same_as(base));
  EXPECT_TRUE(f.is_bijective());
  int64_t reg = 0;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 512; j += 37) {
      const int64_t t = f.thread_at({i, j});
      EXPECT_EQ(t, base.thread_at({i, j}) + 32);
      EXPECT_TRUE(f.holds(t, std::vector<int64_t>{i, j}, &reg));
      EXPECT_EQ(reg, base.reg_at({i, j}));
      EXPECT_FALSE(f.holds(t - 32, std::vector<int64_t>{i, j}, &reg));
      std::vector<int64_t> back;
      EXPECT_TRUE(f.index_at(t, reg, &back));
      EXPECT_EQ(back, (std::vector<int64_t>{i, j}));
    }
  std::vector<int64_t> none;
  EXPECT_FALSE(f.index_at(31, 0, &none));
  EXPECT_FALSE(f.index_at(96, 0, &none));
  std::vector<ThreadGroup> groups;
  Fragment r = f.reduce(1, &groups);
  EXPECT_EQ(r.thread_offset(), 32);
  EXPECT_TRUE(r.same_as(base.reduce(1).with_thread_offset(32)));
  EXPECT_EQ(f.project({0}).thread_offset(), 32);
  EXPECT_NE(f.str().find("thread_offset=32"), std::string::npos);
  EXPECT_THROW(base.with_thread_offset(-1), LayoutError);
}

}  // namespace
}  // namespace tl
