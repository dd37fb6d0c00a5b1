// Property test of automatic sync: random vector-core programs written without any sync are made
// race-free by TL_ASCEND_AUTO_SYNC (strict checker clean) and compute what the same program computes
// in program order (lenient mode, which orders every conflicting pair like the vendor's implicit syncs).
#include <cstdlib>
#include <random>

#include "ascend_test_util.h"

namespace tl::test {

namespace {
const DataType f32 = DataType::Float32();
constexpr int64_t kW = 64;  // elements per slot

struct RandomProgram {
  std::mt19937 rng;
  explicit RandomProgram(uint32_t seed) : rng(seed) {}
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); }

  PrimFunc build(int64_t* out_len) {
    int iters = 2 + pick(4);
    int64_t n = iters * kW;
    *out_len = n;
    int slots = 2 + pick(2);  // double or triple buffering
    Buffer X = buf("X", {n}, f32, MemScope::kGlobal), Y = buf("Y", {n}, f32, MemScope::kGlobal);
    std::vector<Buffer> ub;
    for (int i = 0; i < 4; ++i) ub.push_back(buf("u" + std::to_string(i), {slots, kW}, f32, MemScope::kUB));
    Var cid("cid"), vid("vid"), k("k"), j("j");
    auto slot_expr = [&]() -> Expr {
      switch (pick(3)) {
        case 0: return floormod(k, make_int(slots));
        case 1: return make_int(0);
        default: return floormod(k + 1, make_int(slots));
      }
    };
    auto slot = [&](const Buffer& b, Expr s) {
      return BufferRegion(b, {Range(s, make_int(1)), Range(make_int(0), make_int(kW))});
    };
    auto random_op = [&]() -> Stmt {
      const Buffer& a = ub[pick(4)];
      const Buffer& b = ub[pick(4)];
      const Buffer& c = ub[pick(4)];
      switch (pick(7)) {
        case 0:
        case 1: return copy(region(X, {{k * kW, kW}}), slot(a, slot_expr()));
        case 2: return op("tile.add", {slot(a, slot_expr()), slot(b, slot_expr()), slot(c, slot_expr())});
        case 3: return op("tile.mul", {slot(a, slot_expr()), slot(b, slot_expr()), make_float(0.5)});
        case 4: return copy(slot(a, slot_expr()), region(Y, {{k * kW, kW}}));
        case 5:  // a scalar operand read from UB by the scalar unit
          return op("tile.add", {slot(a, slot_expr()), slot(b, slot_expr()), make_load(c, {slot_expr(), make_int(pick(kW))})});
        default:
          return make_store(a, {slot_expr(), make_int(pick(kW))},
                            make_load(b, {slot_expr(), make_int(pick(kW))}) * make_float(2.0));
      }
    };
    std::vector<Stmt> body;
    int ops = 3 + pick(6);
    for (int i = 0; i < ops; ++i) {
      switch (pick(8)) {
        case 0: {  // a branch on the iteration
          std::vector<Stmt> t = {random_op(), random_op()};
          body.push_back(make_if(eq(floormod(k, make_int(2)), make_int(0)), make_seq(t),
                                 pick(2) ? random_op() : Stmt()));
          break;
        }
        case 1: {  // an inner loop
          std::vector<Stmt> t = {random_op(), random_op()};
          body.push_back(serial(j, make_int(1 + pick(3)), make_seq(t)));
          break;
        }
        default: body.push_back(random_op());
      }
    }
    // Make sure something reaches Y every iteration.
    body.push_back(copy(slot(ub[pick(4)], slot_expr()), region(Y, {{k * kW, kW}})));
    Stmt loop = serial(k, make_int(iters), make_seq(body));
    Stmt kern = scope("V", make_if(eq(vid, make_int(0)), loop));
    return npu_kernel("rnd", {X, Y}, 1, cid, vid, ub, kern);
  }
};
}  // namespace

TEST(AscendInsertSyncRandom, AutoSyncedProgramsMatchProgramOrder) {
  int checked = 0;
  const char* env = std::getenv("TL_SYNC_RANDOM_SEEDS");
  uint32_t seeds = env ? static_cast<uint32_t>(std::atoi(env)) : 60;
  const char* only = std::getenv("TL_SYNC_RANDOM_ONLY");
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    if (only && seed != static_cast<uint32_t>(std::atoi(only))) {
      ++checked;
      continue;
    }
    RandomProgram g(seed);
    int64_t n;
    PrimFunc f = g.build(&n);
    auto X = tensor({n}, f32, seed + 100);
    auto Yref = tensor({n}, f32), Y = tensor({n}, f32);
    sim::SimOptions lenient;
    lenient.lenient = true;
    run(lower(f), {&X, &Yref}, lenient);
    PrimFunc low;
    try {
      low = lower(f, auto_sync());
    } catch (const Error& e) {
      ADD_FAILURE() << "seed " << seed << ": " << e.what() << "\n" << print_func(f);
      continue;
    }
    EXPECT_EQ(count_calls(low, "ascend.barrier_all"), 0) << "seed " << seed << "\n" << print_func(low);
    try {
      run(low, {&X, &Y});
    } catch (const SyncError& e) {
      ADD_FAILURE() << "seed " << seed << ": " << e.what() << "\n" << print_func(low);
      continue;
    }
    bool same = true;
    for (int64_t i = 0; i < n && same; ++i)
      if (Y.get(i) != Yref.get(i)) {
        ADD_FAILURE() << "seed " << seed << " element " << i << ": " << Y.get(i) << " vs program order "
                      << Yref.get(i) << "\n" << print_func(f) << "\n" << print_func(low);
        same = false;
      }
    if (!same) continue;
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(seeds));
}

}  // namespace tl::test

namespace tl::test {

namespace {
// Random cube-core programs: GM->L1 loads, L1->L0A/L0B moves, mma into L0C slots, L0C->GM stores.
PrimFunc random_cube_program(uint32_t seed, int64_t* iters_out) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const DataType f16 = DataType::Float(16);
  int64_t t = 16, iters = 2 + pick(3);
  *iters_out = iters;
  Buffer X = buf("X", {iters, t, t}, f16, MemScope::kGlobal), Y = buf("Y", {iters, t, t}, f32, MemScope::kGlobal);
  Buffer a1 = buf("a1", {2, t, t}, f16, MemScope::kL1), b1 = buf("b1", {2, t, t}, f16, MemScope::kL1);
  Buffer a0 = buf("a0", {2, t, t}, f16, MemScope::kL0A), b0 = buf("b0", {2, t, t}, f16, MemScope::kL0B);
  Buffer c0 = buf("c0", {2, t, t}, f32, MemScope::kL0C);
  Var cid("cid"), vid("vid"), k("k");
  auto s = [&]() -> Expr { return pick(2) ? floormod(k, make_int(2)) : make_int(pick(2)); };
  auto sl = [&](const Buffer& b) {
    return BufferRegion(b, {Range(s(), make_int(1)), Range(make_int(0), make_int(t)), Range(make_int(0), make_int(t))});
  };
  auto gm = [&](const Buffer& b) {
    return BufferRegion(b, {Range(k, make_int(1)), Range(make_int(0), make_int(t)), Range(make_int(0), make_int(t))});
  };
  std::vector<Stmt> body;
  int ops = 4 + pick(6);
  for (int i = 0; i < ops; ++i) {
    switch (pick(6)) {
      case 0: body.push_back(copy(gm(X), sl(pick(2) ? a1 : b1))); break;
      case 1: body.push_back(copy(sl(a1), sl(a0))); break;
      case 2: body.push_back(copy(sl(b1), sl(b0))); break;
      case 3:
      case 4: {
        AttrMap at;
        at["init"] = Attr(pick(2) ? eq(k, make_int(0)) : make_bool(pick(2) == 0));
        body.push_back(op("mma", {sl(a0), sl(b0), sl(c0)}, 0, at));
        break;
      }
      default: body.push_back(copy(sl(c0), gm(Y))); break;
    }
  }
  body.push_back(copy(sl(c0), gm(Y)));
  return npu_kernel("rnd_cube", {X, Y}, 1, cid, vid, {a1, b1, a0, b0, c0},
                    scope("C", serial(k, make_int(iters), make_seq(body))));
}
}  // namespace

TEST(AscendInsertSyncRandom, AutoSyncedCubeProgramsMatchProgramOrder) {
  const char* env = std::getenv("TL_SYNC_RANDOM_SEEDS");
  uint32_t seeds = env ? static_cast<uint32_t>(std::atoi(env)) : 40;
  int checked = 0;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    int64_t iters;
    PrimFunc f = random_cube_program(seed, &iters);
    auto X = tensor({iters, 16, 16}, DataType::Float(16), seed + 7);
    auto Yref = tensor({iters, 16, 16}, f32), Y = tensor({iters, 16, 16}, f32);
    sim::SimOptions lenient;
    lenient.lenient = true;
    run(lower(f), {&X, &Yref}, lenient);
    PrimFunc low;
    try {
      low = lower(f, auto_sync());
      run(low, {&X, &Y});
    } catch (const Error& e) {
      ADD_FAILURE() << "seed " << seed << ": " << e.what() << "\n" << print_func(f);
      continue;
    }
    bool same = true;
    for (int64_t i = 0; i < Y.numel() && same; ++i)
      if (Y.get(i) != Yref.get(i)) {
        ADD_FAILURE() << "seed " << seed << " element " << i << ": " << Y.get(i) << " vs program order "
                      << Yref.get(i) << "\n" << print_func(f) << "\n" << print_func(low);
        same = false;
      }
    checked += same;
  }
  EXPECT_EQ(checked, static_cast<int>(seeds));
}

}  // namespace tl::test
