#include "runtime/args.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tl {

namespace {

Param tensor(const std::string& name, DataType t, std::vector<Expr> shape, std::vector<Expr> strides = {}) {
  return Param{name, Var(), Buffer(name, t, std::move(shape), MemScope::kGlobal, std::move(strides))};
}
Param scalar(const std::string& name, DataType t) { return Param{name, Var(name, t), Buffer()}; }

// A tensor argument backed by vectors owned by the test.
struct FakeTensor {
  std::vector<int64_t> shape, strides;
  std::vector<char> storage;
  CallArg arg;
  FakeTensor(DataType t, std::vector<int64_t> s, std::vector<int64_t> st = {}) : shape(std::move(s)), strides(std::move(st)) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    storage.resize(std::max<int64_t>(n, 1) * t.element_bytes());
    arg.kind = CallArg::kTensor;
    arg.tensor.data = storage.data();
    arg.tensor.ndim = static_cast<int32_t>(shape.size());
    arg.tensor.shape = shape.data();
    arg.tensor.strides = strides.empty() ? nullptr : strides.data();
    arg.tensor.dtype = t;
  }
};

CallArg int_arg(int64_t v) {
  CallArg a;
  a.kind = CallArg::kInt;
  a.i = v;
  return a;
}
CallArg float_arg(double v) {
  CallArg a;
  a.kind = CallArg::kFloat;
  a.f = v;
  return a;
}

// Runs bind() and returns the ArgumentError message ("" when binding succeeds).
std::string bind_error(const ArgBinder& b, std::vector<CallArg> args, ArgBinder::State* out = nullptr) {
  ArgBinder::State st;
  try {
    b.bind(args.data(), args.size(), st);
  } catch (const ArgumentError& e) {
    return e.what();
  }
  if (out) *out = st;
  return "";
}

#define EXPECT_CONTAINS(hay, needle) EXPECT_NE(std::string(hay).find(needle), std::string::npos) << (hay)

const DataType f32 = DataType::Float32(), f16 = DataType::Float(16), i32 = DataType::Int32();

}  // namespace

TEST(ArgBinder, StaticShapesPackInParameterOrder) {
  PrimFunc f("gemm", {tensor("A", f16, {64, 32}), tensor("B", f16, {32, 16}), tensor("C", f32, {64, 16}),
                      scalar("alpha", f32), scalar("k", i32)},
             make_nop());
  ArgBinder b(f, Target::parse("cpu"));
  FakeTensor A(f16, {64, 32}), B(f16, {32, 16}), C(f32, {64, 16});
  std::vector<CallArg> args = {A.arg, B.arg, C.arg, float_arg(0.5), int_arg(7)};
  ArgBinder::State st;
  ASSERT_EQ(bind_error(b, args, &st), "");
  std::vector<TLArg> packed;
  b.pack(args.data(), nullptr, st, &packed);
  ASSERT_EQ(packed.size(), 5u);
  EXPECT_EQ(packed[0].ptr, A.storage.data());
  EXPECT_EQ(packed[2].ptr, C.storage.data());
  EXPECT_EQ(packed[3].f64, 0.5);
  EXPECT_EQ(packed[4].i64, 7);
}

TEST(ArgBinder, ReportsEachMismatchNamingTheParameter) {
  PrimFunc f("k", {tensor("A", f16, {64, 32}), tensor("B", f32, {32})}, make_nop());
  ArgBinder b(f, Target::parse("cpu"));
  FakeTensor good_a(f16, {64, 32}), good_b(f32, {32});
  std::string m;

  FakeTensor wrong_dtype(f32, {64, 32});
  m = bind_error(b, {wrong_dtype.arg, good_b.arg});
  EXPECT_CONTAINS(m, "parameter 'A'");
  EXPECT_CONTAINS(m, "expects dtype float16, got float32");

  FakeTensor wrong_rank(f32, {32, 1});
  m = bind_error(b, {good_a.arg, wrong_rank.arg});
  EXPECT_CONTAINS(m, "parameter 'B'");
  EXPECT_CONTAINS(m, "expects a 1-d tensor, got 2-d with shape [32, 1]");

  FakeTensor wrong_shape(f16, {64, 31});
  m = bind_error(b, {wrong_shape.arg, good_b.arg});
  EXPECT_CONTAINS(m, "parameter 'A'");
  EXPECT_CONTAINS(m, "dimension 1 (32) must be 32, got 31");

  m = bind_error(b, {good_a.arg});
  EXPECT_CONTAINS(m, "k() takes 2 arguments");
  EXPECT_CONTAINS(m, "but 1 were given");

  m = bind_error(b, {good_a.arg, int_arg(3)});
  EXPECT_CONTAINS(m, "parameter 'B'");
  EXPECT_CONTAINS(m, "expects a tensor");
  EXPECT_CONTAINS(m, "got int");

  FakeTensor on_gpu(f32, {32});
  on_gpu.arg.tensor.device_type = kDLCUDA;
  m = bind_error(b, {good_a.arg, on_gpu.arg});
  EXPECT_CONTAINS(m, "parameter 'B'");
  EXPECT_CONTAINS(m, "is on cuda:0");
  EXPECT_CONTAINS(m, "host (cpu) memory");
}

TEST(ArgBinder, ContiguityIsRequiredUnlessStrided) {
  PrimFunc f("k", {tensor("A", f32, {4, 8})}, make_nop());
  ArgBinder b(f, Target::parse("cpu"));
  FakeTensor transposed(f32, {4, 8}, {1, 4});
  std::string m = bind_error(b, {transposed.arg});
  EXPECT_CONTAINS(m, "must be contiguous");
  EXPECT_CONTAINS(m, "strides are [1, 4]");
  // Explicit compact strides are fine, and size-1 dimensions may carry any stride.
  FakeTensor explicit_compact(f32, {4, 8}, {8, 1});
  EXPECT_EQ(bind_error(b, {explicit_compact.arg}), "");
  PrimFunc g("g", {tensor("A", f32, {1, 8})}, make_nop());
  ArgBinder bg(g, Target::parse("cpu"));
  FakeTensor odd_unit_stride(f32, {1, 8}, {999, 1});
  EXPECT_EQ(bind_error(bg, {odd_unit_stride.arg}), "");

  // T.StridedTensor((m, n), (ld, 1)): the leading dimension binds like a dynamic dim.
  Var m_("m"), n_("n"), ld("ld");
  PrimFunc s("s", {tensor("X", f32, {m_, n_}, {ld, 1}), tensor("Y", f32, {m_, n_})}, make_nop());
  ArgBinder bs(s, Target::parse("cpu"));
  FakeTensor x(f32, {3, 5}, {16, 1}), y(f32, {3, 5});
  ArgBinder::State st;
  ASSERT_EQ(bind_error(bs, {x.arg, y.arg}, &st), "");
  std::vector<TLArg> packed;
  bs.pack(std::vector<CallArg>{x.arg, y.arg}.data(), nullptr, st, &packed);
  ASSERT_EQ(packed.size(), 5u);  // X, Y, then m, n, ld in first-use order
  EXPECT_EQ(packed[2].i64, 3);
  EXPECT_EQ(packed[3].i64, 5);
  EXPECT_EQ(packed[4].i64, 16);
  FakeTensor bad_inner(f32, {3, 5}, {16, 2});
  EXPECT_CONTAINS(bind_error(bs, {bad_inner.arg, y.arg}), "stride 1 (1) must be 1, got 2");
}

TEST(ArgBinder, DynamicDimsBindOnceAndMustAgree) {
  Var m("m"), n("n");
  PrimFunc f("k", {tensor("A", f32, {m, n}), tensor("B", f32, {n, m}), tensor("C", f32, {m * 2})}, make_nop());
  ArgBinder b(f, Target::parse("cpu"));
  FakeTensor a(f32, {3, 5}), bt(f32, {5, 3}), c(f32, {6});
  ArgBinder::State st;
  ASSERT_EQ(bind_error(b, {a.arg, bt.arg, c.arg}, &st), "");
  EXPECT_EQ(st.values[0], 3);
  EXPECT_EQ(st.values[1], 5);

  FakeTensor bad_b(f32, {5, 4});
  std::string msg = bind_error(b, {a.arg, bad_b.arg, c.arg});
  EXPECT_CONTAINS(msg, "parameter 'B'");
  EXPECT_CONTAINS(msg, "dimension 1 (m) must be 3");
  EXPECT_CONTAINS(msg, "bound from parameter 'A'");
  EXPECT_CONTAINS(msg, "got 4");

  FakeTensor bad_c(f32, {7});
  msg = bind_error(b, {a.arg, bt.arg, bad_c.arg});
  EXPECT_CONTAINS(msg, "parameter 'C'");
  EXPECT_CONTAINS(msg, "must be 6");
  EXPECT_CONTAINS(msg, "got 7");
}

TEST(ArgBinder, SolvesAffineExpressionDims) {
  // The only use of m is inside 2*m + 1: it is solved from the given size.
  Var m("m");
  PrimFunc f("k", {tensor("A", f32, {m * 2 + 1}), tensor("B", f32, {m})}, make_nop(), {});
  ArgBinder b(f, Target::parse("cpu"), {1});
  FakeTensor a(f32, {9});
  ArgBinder::State st;
  ASSERT_EQ(bind_error(b, {a.arg}, &st), "");
  std::vector<int64_t> shape;
  b.alloc_shape(1, st, &shape);
  EXPECT_EQ(shape, std::vector<int64_t>{4});
  FakeTensor even(f32, {8});
  EXPECT_CONTAINS(bind_error(b, {even.arg}), "not a value of");
}

TEST(ArgBinder, OutputsAndWorkspaces) {
  Var m("m");
  PrimFunc f("k", {tensor("A", f32, {m, 4}), tensor("W", f32, {m}), tensor("C", f32, {m, 4})}, make_nop());
  ArgBinder b(f, Target::parse("cpu"), {-1}, {1});
  EXPECT_EQ(b.user_params(), std::vector<int>{0});
  EXPECT_EQ(b.allocated_params(), (std::vector<int>{1, 2}));
  FakeTensor a(f32, {6, 4});
  ArgBinder::State st;
  ASSERT_EQ(bind_error(b, {a.arg}, &st), "");
  std::vector<int64_t> shape;
  b.alloc_shape(2, st, &shape);
  EXPECT_EQ(shape, (std::vector<int64_t>{6, 4}));
  std::string m2 = bind_error(b, {a.arg, a.arg});
  EXPECT_CONTAINS(m2, "takes 1 argument");
  EXPECT_CONTAINS(m2, "'W', 'C' are allocated by the runtime");

  // An output whose size no input determines.
  Var n("n");
  PrimFunc g("g", {tensor("A", f32, {4}), tensor("C", f32, {n})}, make_nop());
  ArgBinder bg(g, Target::parse("cpu"), {1});
  FakeTensor a4(f32, {4});
  ASSERT_EQ(bind_error(bg, {a4.arg}, &st), "");
  try {
    bg.alloc_shape(1, st, &shape);
    FAIL();
  } catch (const ArgumentError& e) {
    EXPECT_CONTAINS(e.what(), "parameter 'C'");
    EXPECT_CONTAINS(e.what(), "dynamic variable 'n'");
  }
}

TEST(ArgBinder, BadIndexListsAreValueErrors) {
  PrimFunc f("k", {tensor("A", f32, {4}), scalar("s", i32)}, make_nop());
  Target cpu = Target::parse("cpu");
  EXPECT_THROW(ArgBinder(f, cpu, {2}), ValueError);
  EXPECT_THROW(ArgBinder(f, cpu, {-3}), ValueError);
  EXPECT_THROW(ArgBinder(f, cpu, {1}), ValueError);  // a scalar
  EXPECT_THROW(ArgBinder(f, cpu, {0, -2}), ValueError);  // the same twice
  EXPECT_THROW(ArgBinder(f, cpu, {0}, {0}), ValueError);
  try {
    ArgBinder(f, cpu, {5});
  } catch (const ValueError& e) {
    EXPECT_CONTAINS(e.what(), "out_idx entry 5 is out of range");
  }
}

TEST(ArgBinder, Scalars) {
  DataType i8 = DataType::Int(8), u32 = DataType::UInt(32), b8 = DataType::Bool();
  PrimFunc f("k", {scalar("a", i8), scalar("b", u32), scalar("x", f32), scalar("flag", b8)}, make_nop());
  ArgBinder b(f, Target::parse("cpu"));
  CallArg t;
  t.kind = CallArg::kBool;
  t.i = 1;
  ArgBinder::State st;
  EXPECT_EQ(bind_error(b, {int_arg(-5), int_arg(7), int_arg(2), t}, &st), "");  // int accepted for float
  EXPECT_CONTAINS(bind_error(b, {int_arg(300), int_arg(7), float_arg(1), t}), "value 300 does not fit in int8");
  EXPECT_CONTAINS(bind_error(b, {int_arg(1), int_arg(-1), float_arg(1), t}), "parameter 'b'");
  EXPECT_CONTAINS(bind_error(b, {float_arg(1.5), int_arg(1), float_arg(1), t}), "expects an integer scalar");
  CallArg other;
  other.kind = CallArg::kOther;
  other.type_name = "str";
  std::string m = bind_error(b, {int_arg(1), int_arg(1), other, t});
  EXPECT_CONTAINS(m, "parameter 'x'");
  EXPECT_CONTAINS(m, "got str");
  EXPECT_CONTAINS(bind_error(b, {int_arg(1), int_arg(1), float_arg(1), int_arg(2)}), "expects a bool");
}

TEST(ArgBinder, ScalarParamThatIsADynamicVar) {
  Var n("n");
  PrimFunc f("k", {tensor("A", f32, {n}), Param{"n", n, Buffer()}}, make_nop());
  ArgBinder b(f, Target::parse("cpu"));
  FakeTensor a(f32, {10});
  EXPECT_EQ(bind_error(b, {a.arg, int_arg(10)}), "");
  EXPECT_CONTAINS(bind_error(b, {a.arg, int_arg(11)}), "disagrees with the tensor shapes");
}

TEST(ArgBinder, CudaTargetChecksDeviceAgreement) {
  PrimFunc f("k", {tensor("A", f32, {4}), tensor("B", f32, {4})}, make_nop());
  ArgBinder b(f, Target::parse("cuda"));
  FakeTensor a(f32, {4}), c(f32, {4});
  a.arg.tensor.device_type = kDLCUDA;
  c.arg.tensor.device_type = kDLCUDA;
  c.arg.tensor.device_id = 1;
  std::string m = bind_error(b, {a.arg, c.arg});
  EXPECT_CONTAINS(m, "is on cuda:1 but parameter 'A' is on cuda:0");
  FakeTensor host(f32, {4});
  EXPECT_CONTAINS(bind_error(b, {host.arg, a.arg}), "needs cuda device memory");
}

}  // namespace tl
