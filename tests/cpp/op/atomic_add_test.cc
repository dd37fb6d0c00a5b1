#include "op/op_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;
const DataType f32 = DataType::Float32();

TEST(AtomicAddOp, ChecksAccessAndLoopForm) {
  Buffer G = global("G", f32, {c(16)}), S = shared("S", f32, {c(16)}), T = shared("T", f32, {c(8)});
  expect_check_ok(op_at(1, "atomic_add", {full(G), full(S)}));
  expect_check_ok(op_at(1, "atomic_add", {full(G), make_float(1.0)}));
  expect_check_error<ValueError>(op_at(3, "atomic_add", {full(G), full(T)}), {"kernel.py:3:5: T.atomic_add: ", "[16] and [8]"});
  Buffer B = global("B", DataType::Bool(), {c(16)});
  expect_check_error<TypeError>(op_at(3, "atomic_add", {full(B), make_int(1)}), {"dst buffer 'B' has dtype bool"});
  auto acc = get_tile_op("atomic_add").effects(as_op(op_at(1, "atomic_add", {full(G), full(S)})));
  EXPECT_EQ(names(acc.reads), (std::vector<std::string>{"G", "S"}));
  EXPECT_EQ(names(acc.writes), std::vector<std::string>{"G"});
  EXPECT_EQ(print_stmt(lower(op_at(1, "atomic_add", {full(G), full(S)}))),
            "for i0: int32 in parallel(0, 16) {\n"
            "  evaluate tl.atomic_add_scalar(G[i0], S[i0])\n"
            "}\n");
}

}  // namespace
}  // namespace tl
