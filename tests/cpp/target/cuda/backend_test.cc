// CudaKernelModule's launch plan, checked without a device: the module loads its image on the
// first launch that reaches the driver, and everything below fails (or returns) before that.
#include "target/cuda/backend.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tl {
namespace {

CudaLaunchInfo launch_info(std::vector<std::string> grid, std::vector<CudaLaunchInfo::Param> params) {
  CudaLaunchInfo info;
  info.kernel_name = "k";
  info.grid = std::move(grid);
  info.block = {128, 1, 1};
  info.params = std::move(params);
  return info;
}

TEST(CudaKernelModule, RejectsACorruptParameterSource) {
  EXPECT_THROW(CudaKernelModule("", launch_info({"1", "1", "1"}, {{"ptr", "A", "param:x"}}), 1, 0), ValueError);
  EXPECT_THROW(CudaKernelModule("", launch_info({"1", "1", "1"}, {{"ptr", "A", "arg:0"}}), 1, 0), ValueError);
  // Out of range: param:1 of a kernel with one parameter, dyn:1 with one dynamic variable.
  EXPECT_THROW(CudaKernelModule("", launch_info({"1", "1", "1"}, {{"ptr", "A", "param:1"}}), 1, 1), ValueError);
  EXPECT_THROW(CudaKernelModule("", launch_info({"1", "1", "1"}, {{"i32", "m", "dyn:1"}}), 1, 1), ValueError);
  EXPECT_NO_THROW(CudaKernelModule("", launch_info({"1", "1", "1"}, {{"ptr", "A", "param:0"}, {"i32", "m", "dyn:0"}}),
                                   1, 1));
}

TEST(CudaKernelModule, EmptyGridsLaunchNothing) {
  // Static and argument-dependent grids with a zero extent return before touching the device.
  CudaKernelModule fixed("", launch_info({"4", "0", "1"}, {{"ptr", "A", "param:0"}}), 1, 0);
  std::vector<TLArg> args(1);
  EXPECT_NO_THROW(fixed.launch(args, LaunchEnv{}));

  CudaKernelModule dynamic("", launch_info({"floordiv(dyn_0 + 63, 64)", "1", "1"}, {{"ptr", "A", "param:0"},
                                                                                    {"i64", "m", "dyn:0"}}),
                           1, 1);
  args.resize(2);
  args[1].i64 = 0;
  EXPECT_NO_THROW(dynamic.launch(args, LaunchEnv{}));
}

TEST(CudaKernelModule, ChecksGridsAndArgumentsBeforeTheDevice) {
  std::vector<TLArg> args(2);
  CudaKernelModule dynamic("", launch_info({"1", "dyn_0", "1"}, {{"i64", "m", "dyn:0"}}), 1, 1);
  args[1].i64 = 70000;  // grid.y is limited to 65535
  EXPECT_THROW(dynamic.launch(args, LaunchEnv{}), ArgumentError);

  alignas(16) static float data[8];
  CudaKernelModule misaligned("", launch_info({"1", "1", "1"}, {{"ptr", "A", "param:0"}}), 1, 0);
  args[0].ptr = reinterpret_cast<char*>(data) + 4;
  EXPECT_THROW(misaligned.launch(args, LaunchEnv{}), ArgumentError);

  CudaKernelModule half_scalar("", launch_info({"1", "1", "1"}, {{"f16", "x", "param:0"}}), 1, 0);
  EXPECT_THROW(half_scalar.launch(args, LaunchEnv{}), NotImplemented);
}

// A function with several T.Kernel blocks: the launch description lists them in order ("then")
// and survives the round trip through kernel.meta; a kernel with an empty grid is skipped.
TEST(CudaKernelModule, SeveralKernelsLaunchInOrder) {
  CudaLaunchInfo info = launch_info({"4", "1", "1"}, {{"ptr", "A", "param:0"}, {"i64", "m", "dyn:0"}});
  CudaLaunchInfo second = launch_info({"dyn_0", "1", "1"}, {{"ptr", "A", "param:0"}, {"i64", "m", "dyn:0"}});
  second.kernel_name = "k_1";
  second.dyn_smem_bytes = 1024;
  CudaLaunchInfo third = second;
  third.kernel_name = "k_2";
  info.then = {second, third};
  CudaLaunchInfo back = CudaLaunchInfo::parse(info.serialize());
  ASSERT_EQ(back.then.size(), 2u);
  EXPECT_EQ(back.kernel_name, "k");
  EXPECT_EQ(back.then[0].kernel_name, "k_1");
  EXPECT_EQ(back.then[0].grid[0], "dyn_0");
  EXPECT_EQ(back.then[0].dyn_smem_bytes, 1024);
  EXPECT_EQ(back.then[1].kernel_name, "k_2");
  EXPECT_TRUE(back.then[0].then.empty());
  EXPECT_EQ(back.serialize(), info.serialize());

  // Empty grids (the first one always, the others for m = 0): nothing reaches the device.
  CudaKernelModule m("", back, 1, 1);
  EXPECT_EQ(m.info().at("num_kernels").as_int(), 3);
  std::vector<TLArg> args(2);
  info.grid = {"0", "1", "1"};
  CudaKernelModule empty("", CudaLaunchInfo::parse(info.serialize()), 1, 1);
  args[1].i64 = 0;
  EXPECT_NO_THROW(empty.launch(args, LaunchEnv{}));
}

}  // namespace
}  // namespace tl
