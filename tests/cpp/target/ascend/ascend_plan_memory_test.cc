// Memory planning for the ascend target: reuse with liveness, pinned addresses, capacity errors.
#include "ascend_test_util.h"
#include "target/ascend/ascend_liveness.h"

namespace tl::test {

namespace {
const DataType f32 = DataType::Float32();

int64_t address_of(const PrimFunc& f, const std::string& name) {
  int64_t a = -1;
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* op = s.as<TileOpNode>();
    if (op && op->op == "annotate_address" && op->args[0].region.buffer.name() == name)
      a = get_const_int(op->args[1].expr, "address");
  });
  return a;
}

// Two phases on the vector core: phase 1 computes exp(x) with buffers x, y; phase 2 computes
// z = w * 3 with buffers z, w. Each buffer is `n` floats.
PrimFunc two_phases(int64_t n, std::vector<Stmt> front = {}) {
  Buffer X = buf("X", {2 * n}, f32, MemScope::kGlobal), Y = buf("Y", {2 * n}, f32, MemScope::kGlobal);
  Buffer x = buf("x", {n}, f32, MemScope::kUB), y = buf("y", {n}, f32, MemScope::kUB);
  Buffer z = buf("z", {n}, f32, MemScope::kUB), w = buf("w", {n}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  std::vector<Stmt> s = front;
  s.push_back(copy(region(X, {{vid * n, n}}), full(x), 300));
  s.push_back(op("tile.exp", {full(y), full(x)}, 301));
  s.push_back(copy(full(y), region(X, {{vid * n, n}}), 302));
  s.push_back(copy(region(Y, {{vid * n, n}}), full(w), 303));
  s.push_back(op("tile.mul", {full(z), full(w), make_float(3.0)}, 304));
  s.push_back(copy(full(z), region(Y, {{vid * n, n}}), 305));
  return npu_kernel("phases", {X, Y}, 1, cid, vid, {x, y, z, w}, scope("V", make_seq(s)));
}

AttrMap configs(bool planning, bool sync = true) {
  AttrMap m;
  m["tl.ascend_memory_planning"] = Attr(planning);
  m["tl.ascend_auto_sync"] = Attr(sync);
  return m;
}
}  // namespace

TEST(AscendPlanMemory, SequentialWithoutPlanning) {
  PrimFunc low = lower(two_phases(1024), configs(false));
  EXPECT_EQ(address_of(low, "x"), 0);
  EXPECT_EQ(address_of(low, "y"), 4096);
  EXPECT_EQ(address_of(low, "z"), 8192);
  EXPECT_EQ(address_of(low, "w"), 12288);
  EXPECT_EQ(attr_int(low.attrs(), "ascend.memory_planning", 1), 0);
}

TEST(AscendPlanMemory, ReusesMemoryOfDeadBuffersAndStaysCorrect) {
  int64_t n = 1024;
  PrimFunc low = lower(two_phases(n), configs(true));
  // x and y are dead once phase 2 starts: w and z take their place.
  EXPECT_EQ(address_of(low, "x"), 0);
  EXPECT_EQ(address_of(low, "y"), 4096);
  std::set<int64_t> phase2 = {address_of(low, "z"), address_of(low, "w")};
  EXPECT_EQ(phase2, (std::set<int64_t>{0, 4096}));
  auto peak = low.attrs().at("ascend.peak_bytes").as_int_list();
  EXPECT_EQ(peak[4], 8192);  // UB
  // The aliasing creates WAR hazards between the phases; auto sync orders them.
  auto X = tensor({2 * n}, f32, 31), Y = tensor({2 * n}, f32, 32);
  auto X0 = X, Y0 = Y;
  run(low, {&X, &Y});
  for (int64_t i = 0; i < 2 * n; ++i) {
    ASSERT_NEAR(X.get(i), std::exp(X0.get(i)), 1e-5 * std::exp(X0.get(i))) << i;
    ASSERT_NEAR(Y.get(i), 3 * Y0.get(i), 1e-5) << i;
  }
}

TEST(AscendPlanMemory, BuffersLiveAcrossLoopIterationsAreNotShared) {
  Buffer X = buf("X", {4096}, f32, MemScope::kGlobal);
  Buffer acc = buf("acc", {512}, f32, MemScope::kUB), t = buf("t", {512}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid"), i("i");
  // acc is read at the top of each iteration and written at the bottom: it lives through the loop.
  Stmt loop = serial(i, make_int(4), make_seq({copy(region(X, {{i * 512, 512}}), full(t), 310),
                                               op("tile.add", {full(acc), full(acc), full(t)}, 311)}));
  Stmt body = scope("V", make_seq({op("fill", {full(acc), make_float(0.0)}, 312), loop,
                                   copy(full(acc), region(X, {{make_int(0), 512}}), 313)}));
  PrimFunc low = lower(npu_kernel("acc", {X}, 1, cid, vid, {acc, t}, body), configs(true));
  EXPECT_NE(address_of(low, "acc"), address_of(low, "t"));
  auto lives = analyze_ascend_liveness(low, sim::model_a2());
  ASSERT_EQ(lives.size(), 2u);
  EXPECT_TRUE(lives[0].first <= lives[1].last && lives[1].first <= lives[0].last);
}

TEST(AscendPlanMemory, PinnedAddressesAreHonouredAndChecked) {
  Buffer X = buf("X", {2048}, f32, MemScope::kGlobal);
  // Pin y at 64 KiB with T.annotate_address.
  Buffer x = buf("x", {1024}, f32, MemScope::kUB), y = buf("y", {1024}, f32, MemScope::kUB);
  Var cid("cid"), vid("vid");
  std::vector<Stmt> s = {op("annotate_address", {full(y), make_int(65536)}, 320),
                         copy(region(X, {{vid * 1024, 1024}}), full(x), 321), op("tile.exp", {full(y), full(x)}, 322),
                         copy(full(y), region(X, {{vid * 1024, 1024}}), 323)};
  for (bool planning : {false, true}) {
    PrimFunc low = lower(npu_kernel("pin", {X}, 1, cid, vid, {x, y}, scope("V", make_seq(s))), configs(planning));
    EXPECT_EQ(address_of(low, "y"), 65536);
    EXPECT_EQ(address_of(low, "x"), 0);
  }
  std::vector<Stmt> bad = s;
  bad[0] = op("annotate_address", {full(y), make_int(100)}, 324);
  EXPECT_THROW(lower(npu_kernel("pin", {X}, 1, cid, vid, {x, y}, scope("V", make_seq(bad)))), ValueError);
}

TEST(AscendPlanMemory, OverCapacityIsAResourceErrorListingBuffers) {
  // 4 buffers of 64 KiB: 256 KiB > 196608 bytes of UB without reuse.
  int64_t n = 16384;
  try {
    lower(two_phases(n), configs(false));
    FAIL() << "expected ResourceError";
  } catch (const ResourceError& e) {
    std::string m = e.what();
    for (const char* part : {"UB over capacity", "196608", "'x' float32[16384] = 65536 bytes", "'w'",
                             "TL_ASCEND_MEMORY_PLANNING"})
      EXPECT_NE(m.find(part), std::string::npos) << part << " missing in: " << m;
  }
  // With planning the two phases share memory and the kernel fits.
  PrimFunc low = lower(two_phases(n), configs(true));
  EXPECT_EQ(low.attrs().at("ascend.peak_bytes").as_int_list()[4], 131072);
}

TEST(AscendPlanMemory, L0COverCapacityNamesTheTile) {
  Buffer C = buf("C", {256, 256}, f32, MemScope::kGlobal);
  Buffer c0 = buf("c_l0", {256, 256}, f32, MemScope::kL0C);
  Var cid("cid"), vid("vid");
  Stmt body = scope("C", copy(full(c0), full(C), 330));
  try {
    lower(npu_kernel("big", {C}, 1, cid, vid, {c0}, body));
    FAIL() << "expected ResourceError";
  } catch (const ResourceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("L0C over capacity"), std::string::npos) << m;
    EXPECT_NE(m.find("'c_l0' float32[256, 256] = 262144 bytes"), std::string::npos) << m;
  }
}

}  // namespace tl::test
