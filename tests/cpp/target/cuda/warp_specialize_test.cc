// warp_specialize: the Before/Expected form of a pipelined GEMM, and the cases left alone.
#include "target/cuda/warp_specialize.h"

#include "pass_test_util.h"

namespace tl {
namespace {

// The README GEMM (128x128x64 tiles, 2 stages, 256 threads) as the frontend produces it.
const char* kGemm = R"(
func @main(b0: global float16[256, 128], b1: global float16[128, 256], b2: global float16[256, 256]) {global_symbol = "main"} {
  kernel(grid=[2, 2], blocks=[v0: int32, v1: int32], threads=[256], thread_vars=[v2: int32]) {
    alloc b3: shared float16[128, 64]
    alloc b4: shared float16[64, 128]
    alloc b5: fragment float32[128, 128]
    fill(b5[0 :+ 128, 0 :+ 128], 0.0f32)
    for v3: int32 in pipelined(0, 2) {cross_interval = 1, num_stages = 2} {
      copy(b0[v1 * 128 :+ 128, v3 * 64 :+ 64], b3[0 :+ 128, 0 :+ 64])
      copy(b1[v3 * 64 :+ 64, v0 * 128 :+ 128], b4[0 :+ 64, 0 :+ 128])
      gemm(b3[0 :+ 128, 0 :+ 64], b4[0 :+ 64, 0 :+ 128], b5[0 :+ 128, 0 :+ 128]) {clear_accum = e:(false), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false}
    }
    copy(b5[0 :+ 128, 0 :+ 128], b2[v1 * 128 :+ 128, v0 * 128 :+ 128])
  }
}
)";

TEST(WarpSpecialize, GemmGetsATmaProducerWarpgroup) {
  // Two stages of A and B (one producer group: both are first used by the GEMM), mbarriers full[2]
  // (1 arrival + 32768 bytes) and empty[2] (256 arrivals); the GEMM stays in flight for one
  // iteration and releases the stage read one iteration before, the last one after the loop.
  // Persistent: a 1-D grid of the 4 tiles, each CTA looping over tiles cta, cta + num_ctas, ...
  // (the stages and phases continue across tiles: iteration tile_iter * 2 + k). The epilogue is a
  // TMA store (ws_tma_store.h): the tile staged in a 128-byte-swizzled shared buffer of its own,
  // after thread 0 waited for the previous tile's store to read it, and thread 0 waits for the last
  // store after the tile loop.
  tl::testing::expect_pass("warp_specialize", kGemm, R"(
func @main(b0: global float16[256, 128], b1: global float16[128, 256], b2: global float16[256, 256]) {global_symbol = "main"} {
  kernel(grid=[4], blocks=[v0: int32], threads=[256], thread_vars=[v1: int32]) {cuda.persistent = true, cuda.producer_threads = 128} {
    alloc b3: shared float16[2, 128, 64]
    alloc b4: shared float16[2, 64, 128]
    alloc b5: fragment float32[128, 128]
    alloc b6: shared float16[128, 128]
    alloc b7: shared uint64[4]
    if (v1 == 0) {
      for v2: int32 in unrolled(0, 2) {
        evaluate cuda.mbarrier_init<void>(cuda.address_of<handle>(b7[v2], 3), 1)
        evaluate cuda.mbarrier_init<void>(cuda.address_of<handle>(b7[2 + v2], 3), 8)
      }
      evaluate cuda.fence_barrier_init()
    }
    evaluate cuda.sync_all()
    attr "cuda.warp_specialize" = 256 {
      if (v1 < 256) {
        attr "cuda.warp_role" = "consumer" {
          evaluate cuda.setmaxnreg_inc<void>(232)
          for v3: int32 in serial(0, floordiv(4 - v0 + cuda.num_ctas<int32>() - 1, cuda.num_ctas<int32>())) {
            let v4: int32 = v0 + v3 * cuda.num_ctas<int32>()
            let v5: int32 = floormod(floormod(v4, 4), 2)
            let v6: int32 = floordiv(floormod(v4, 4), 2)
            fill(b5[0 :+ 128, 0 :+ 128], 0.0f32)
            for v7: int32 in serial(0, 2) {cuda.async_mma = true} {
              evaluate cuda.mbarrier_wait<void>(cuda.address_of<handle>(b7[floormod(v3 * 2 + v7, 2)], 3), floormod(floordiv(v3 * 2 + v7, 2), 2))
              gemm(b3[floormod(v3 * 2 + v7, 2) :+ 1, 0 :+ 128, 0 :+ 64], b4[floormod(v3 * 2 + v7, 2) :+ 1, 0 :+ 64, 0 :+ 128], b5[0 :+ 128, 0 :+ 128]) {async_proxy_operands = true, clear_accum = e:(false), k_pack = 1, policy = "Square", transpose_A = false, transpose_B = false, wgmma_async = true}
              if (v7 > 0) {
                evaluate cuda.mbarrier_arrive_warp<void>(cuda.address_of<handle>(b7[2 + floormod(v3 * 2 + v7 - 1, 2)], 3))
              }
            }
            if (true) {
              evaluate cuda.mbarrier_arrive_warp<void>(cuda.address_of<handle>(b7[2 + floormod(v3 * 2 + 1, 2)], 3))
            }
            annotate_layout(b6[0 :+ 128, 0 :+ 128]) {kind = "gmma", swizzle_bytes = 128}
            if (v1 == 0) {
              evaluate cuda.tma_store_wait<void>(0)
            }
            evaluate tl.sync_threads()
            copy(b5[0 :+ 128, 0 :+ 128], b6[0 :+ 128, 0 :+ 128])
            copy(b6[0 :+ 128, 0 :+ 128], b2[v6 * 128 :+ 128, v5 * 128 :+ 128]) {swizzle = 128, tma_store = true}
          }
          if (v1 == 0) {
            evaluate cuda.tma_store_wait<void>(0)
          }
        }
      } else {
        attr "cuda.warp_role" = "producer" {
          evaluate cuda.setmaxnreg_dec<void>(40)
          if (v1 == 256) {
            for v8: int32 in serial(0, floordiv(4 - v0 + cuda.num_ctas<int32>() - 1, cuda.num_ctas<int32>())) {
              let v9: int32 = v0 + v8 * cuda.num_ctas<int32>()
              let v10: int32 = floormod(floormod(v9, 4), 2)
              let v11: int32 = floordiv(floormod(v9, 4), 2)
              for v12: int32 in serial(0, 2) {
                evaluate cuda.mbarrier_wait<void>(cuda.address_of<handle>(b7[2 + floormod(v8 * 2 + v12, 2)], 3), 1 - floormod(floordiv(v8 * 2 + v12, 2), 2))
                evaluate cuda.mbarrier_expect_tx<void>(cuda.address_of<handle>(b7[floormod(v8 * 2 + v12, 2)], 3), 32768)
                copy(b0[v11 * 128 :+ 128, v12 * 64 :+ 64], b3[floormod(v8 * 2 + v12, 2) :+ 1, 0 :+ 128, 0 :+ 64]) {mbarrier = e:(cuda.address_of<handle>(b7[floormod(v8 * 2 + v12, 2)], 3)), tma = true}
                copy(b1[v12 * 64 :+ 64, v10 * 128 :+ 128], b4[floormod(v8 * 2 + v12, 2) :+ 1, 0 :+ 64, 0 :+ 128]) {mbarrier = e:(cuda.address_of<handle>(b7[floormod(v8 * 2 + v12, 2)], 3)), tma = true}
              }
            }
          }
        }
      }
    }
  }
}
)", "cuda -arch=sm_90a");
}

TEST(WarpSpecialize, OffBelowHopperAndWhenDisabled) {
  tl::testing::expect_pass("warp_specialize", kGemm, kGemm, "cuda -arch=sm_80");
  for (const char* key : {"tl.disable_warp_specialized", "tl.disable_tma_lower", "tl.disable_wgmma"})
    tl::testing::expect_pass("warp_specialize", kGemm, kGemm, "cuda -arch=sm_90a", {{key, Attr(true)}});
}

TEST(WarpSpecialize, OneCtaPerTileWithDisablePersistent) {
  PrimFunc out = tl::testing::run_pass("warp_specialize", kGemm, "cuda -arch=sm_90a",
                                       {{"tl.disable_persistent", Attr(true)}});
  const auto* k = out.body().as<KernelLaunchNode>();
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->attrs.count("cuda.persistent"), 0u);
  EXPECT_EQ(attr_int(k->attrs, "cuda.producer_threads", 0), 128);
  EXPECT_EQ(k->grid.size(), 2u);
}

TEST(WarpSpecialize, ReasonRecordedWhenACopyCannotUseTma) {
  std::string src = kGemm;
  const std::string copy = "copy(b0[v1 * 128 :+ 128, v3 * 64 :+ 64], b3[0 :+ 128, 0 :+ 64])";
  src.replace(src.find(copy), copy.size(), copy + " {disable_tma = true}");
  PrimFunc out = tl::testing::run_pass("warp_specialize", src, "cuda -arch=sm_90a");
  const auto* k = out.body().as<KernelLaunchNode>();
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->attrs.count("cuda.producer_threads"), 0u);
  EXPECT_EQ(attr_str(k->attrs, "cuda.why_not_warp_specialized", ""), "a producer copy has disable_tma");
}

TEST(WarpSpecialize, ThreadsMustBeWholeWarpgroups) {
  std::string src = kGemm;
  src.replace(src.find("threads=[256]"), 13, "threads=[192]");
  PrimFunc out = tl::testing::run_pass("warp_specialize", src, "cuda -arch=sm_90a");
  const auto* k = out.body().as<KernelLaunchNode>();
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->attrs.count("cuda.producer_threads"), 0u);
  EXPECT_NE(attr_str(k->attrs, "cuda.why_not_warp_specialized", "").find("whole warpgroups"), std::string::npos);
}

}  // namespace
}  // namespace tl
