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

}  // namespace
}  // namespace tl
