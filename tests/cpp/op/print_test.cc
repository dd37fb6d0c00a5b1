#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

TEST(PrintOp, LowersToPrintfPerElement) {
  Buffer S = shared("S%", DataType::Float(16), {c(2), c(2)});
  expect_check_ok(op_at(1, "print", {full(S)}, {{"msg", Attr("hi")}}));
  expect_check_error<TypeError>(op_at(1, "print", {make_int(1)}), {"T.print: argument 'buffer' must be a buffer"});
  EXPECT_EQ(print_stmt(lower(op_at(1, "print", {full(S)}, {{"msg", Attr("50%")}}))),
            "for i0: int32 in serial(0, 2) {\n"
            "  for i1: int32 in serial(0, 2) {\n"
            "    evaluate tl.printf<void>(\"msg='50%%' buffer=S%% index=[%lld, %lld] dtype=float16 value=%.9g\\n\", "
            "cast<int64>(i0), cast<int64>(i1), cast<float64>(S_[i0, i1]))\n"
            "  }\n"
            "}\n");
  auto acc = get_tile_op("print").effects(as_op(op_at(1, "print", {full(S)})));
  EXPECT_EQ(names(acc.reads), std::vector<std::string>{"S%"});
  EXPECT_TRUE(acc.writes.empty());
}

TEST(DumpTensorOp, PrintsTheFirstElements) {
  Buffer S = shared("S", DataType::Int32(), {c(4)});
  expect_check_error<ValueError>(op_at(1, "dump_tensor", {full(S)}, {{"size", Attr(int64_t(-1))}}), {"size must be non-negative"});
  EXPECT_EQ(print_stmt(lower(op_at(1, "dump_tensor", {full(S)}, {{"desc", Attr(int64_t(5))}, {"size", Attr(int64_t(2))}}))),
            "for f: int64 in serial(0i64, 2i64) {\n"
            "  evaluate tl.printf<void>(\"dump_tensor desc=5 buffer=S index=%lld dtype=int32 value=%lld\\n\", f, "
            "cast<int64>(S[cast<int32>(f)]))\n"
            "}\n");
}

TEST(AnnotateOps, AreNoOpsWithChecks) {
  Buffer S = shared("S", DataType::Float32(), {c(4)});
  expect_check_ok(op_at(1, "annotate_layout", {full(S)}, {{"kind", Attr("swizzled")}}));
  expect_check_error<TypeError>(op_at(1, "annotate_layout", {full(S)}, {{"kind", Attr("custom")}}), {"forward map"});
  expect_check_error<ValueError>(op_at(1, "annotate_layout", {full(S)}, {{"kind", Attr("diagonal")}}), {"unknown kind"});
  Var i("i");
  expect_check_ok(op_at(1, "annotate_layout", {full(S)},
                        {{"kind", Attr("fragment")}, {"vars", Attr(std::vector<Expr>{i})}, {"exprs", Attr(std::vector<Expr>{i})},
                         {"thread", Attr(Expr(i))}, {"replicate", Attr(int64_t(1))}}));
  expect_check_error<TypeError>(op_at(1, "annotate_layout", {full(S)},
                                      {{"kind", Attr("fragment")}, {"vars", Attr(std::vector<Expr>{i})},
                                       {"exprs", Attr(std::vector<Expr>{i})}}),
                                {"needs its thread map"});
  expect_check_ok(op_at(1, "annotate_address", {full(S), make_int(256)}));
  expect_check_error<ValueError>(op_at(1, "annotate_address", {full(S), make_int(-4)}), {"must be non-negative"});
  EXPECT_TRUE(is_nop(lower(op_at(1, "annotate_address", {full(S), make_int(256)}))));
  EXPECT_TRUE(get_tile_op("annotate_layout").effects(as_op(op_at(1, "annotate_layout", {full(S)}, {{"kind", Attr("zn")}}))).writes.empty());
}

TEST(TileOpRegistry, EveryOpOfTheContractIsRegistered) {
  for (const char* op : {"copy", "gemm", "fill", "reduce", "cumsum", "atomic_add", "tile.exp", "tile.ln", "tile.log",
                         "tile.abs", "tile.reciprocal", "tile.sqrt", "tile.rsqrt", "tile.relu", "tile.sigmoid",
                         "tile.silu", "tile.sin", "tile.cos", "tile.neg", "tile.exp2", "tile.tanh", "tile.add",
                         "tile.sub", "tile.mul", "tile.div", "tile.max", "tile.min", "tile.pow", "tile.axpy",
                         "tile.cast", "tile.compare", "tile.select", "tile.transpose", "tile.broadcast", "tile.sort",
                         "tile.topk", "tile.reduce_sum", "tile.reduce_max", "tile.reduce_min", "tile.fill", "gemm_v0",
                         "mma", "print", "dump_tensor", "annotate_layout", "annotate_address"}) {
    const TileOp* def = find_tile_op(op);
    ASSERT_NE(def, nullptr) << op;
    EXPECT_EQ(def->name(), op);
  }
}

}  // namespace
}  // namespace tl
