// Driver tests that run everywhere: without a GPU they check the failure path (a typed
// RuntimeError that says why); with one, device facts and a round trip through device memory.
// Kernel execution tests are in tests/python/cuda (they need a GPU and run in scripts/gpu_check.sh).
#include "target/cuda/driver.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ir/error.h"

namespace tl {
namespace {

TEST(CudaDriver, FailsWithAReasonWithoutAGpu) {
  std::string why;
  if (cuda_driver_available(&why) && cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(cuda_device_count(), 0);
  try {
    cuda_malloc(16, 0);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cuda_pointer_device(&why), -1);
}

TEST(CudaDriverOnGpu, DeviceFactsAndMemoryRoundTrip) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const CudaDeviceInfo& info = cuda_device_info(0);
  EXPECT_GE(info.cc_major, 8);
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GE(info.max_smem_per_block_optin, info.max_smem_per_block);
  std::vector<float> host(1000), back(1000, 0.f);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f - 3.f;
  void* d = cuda_malloc(host.size() * sizeof(float), 0);
  EXPECT_EQ(cuda_pointer_device(d), 0);
  EXPECT_EQ(cuda_pointer_device(host.data()), -1);
  cuda_memcpy_htod(d, host.data(), host.size() * sizeof(float), 0);
  cuda_memcpy_dtoh(back.data(), d, back.size() * sizeof(float), 0);
  EXPECT_EQ(std::memcmp(host.data(), back.data(), host.size() * sizeof(float)), 0);
  cuda_free(d, 0);
  EXPECT_THROW(cuda_device_info(cuda_device_count() + 3), RuntimeError);
}

TEST(CudaDriver, FormatsDeviceErrors) {
  DeviceErrorRecord r{};
  r.flag = 1;
  r.line = 42;
  r.block[0] = 3;
  r.thread[0] = 17;
  std::strcpy(r.file, "gemm.py");
  std::strcpy(r.message, "K must be a multiple of 32");
  std::string s = format_device_error(r, "main");
  EXPECT_EQ(s,
            "device_assert failed in kernel 'main' at gemm.py:42 (block (3, 0, 0), thread (17, 0, 0)): K must be a "
            "multiple of 32");
}

}  // namespace
}  // namespace tl
