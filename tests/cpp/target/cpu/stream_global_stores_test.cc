#include "target/cpu/stream_global_stores.h"

#include <string>

#include "pass_test_util.h"

namespace tl {
namespace {

// The copy-out of an accumulator fragment into C: each row of 512 floats (2 KiB) becomes one
// streaming copy that starts at the row's first element; the fence follows the row loop.
TEST(StreamGlobalStores, LongFragmentRowsToGlobalBecomeStreamingCopies) {
  tl::testing::expect_pass("stream_global_stores", R"(
func @f(C: global float32[1048576]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[], thread_vars=[]) {
    alloc C_l: fragment float32[262144]
    for i0: int32 in serial(0, 512) {
      for i1: int32 in vectorized(0, 512) {
        C[by * 524288 + i0 * 1024 + bx * 512 + i1] = C_l[i0 * 512 + i1]
      }
    }
  }
})", R"(
func @f(C: global float32[1048576]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[], thread_vars=[]) {
    alloc C_l: fragment float32[262144]
    for i0: int32 in serial(0, 512) {
      evaluate tl.cpu.copy_stream<void>(tl.address_of<handle>(C[by * 524288 + i0 * 1024 + bx * 512]), tl.address_of<handle>(C_l[i0 * 512]), 512)
    }
    evaluate tl.cpu.store_fence<void>()
  }
})");
}

// A single loop of at least 512 KiB is streamed too.
TEST(StreamGlobalStores, OneLongRunIsStreamed) {
  tl::testing::expect_pass("stream_global_stores", R"(
func @f(C: global float32[262144]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: fragment float32[131072]
    for i: int32 in vectorized(0, 131072) {
      C[i + 7] = L[i]
    }
  }
})", R"(
func @f(C: global float32[262144]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: fragment float32[131072]
    evaluate tl.cpu.copy_stream<void>(tl.address_of<handle>(C[7]), tl.address_of<handle>(L[0]), 131072)
    evaluate tl.cpu.store_fence<void>()
  }
})");
}

// A float32 accumulator copied into a bfloat16 or float16 C (TileLang's GEMM examples): rows of 512
// elements (1 KiB) and 512 KiB in all count the destination's bytes; the copy is copy_stream's
// converting overload for that dtype (the arguments keep their element types).
TEST(StreamGlobalStores, Float32ToNarrowCopyOutIsStreamed) {
  for (const std::string t : {"bfloat16", "float16"}) {
    SCOPED_TRACE(t);
    tl::testing::expect_pass("stream_global_stores", R"(
func @f(C: global )" + t + R"([1048576]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[], thread_vars=[]) {
    alloc C_l: fragment float32[262144]
    for i0: int32 in serial(0, 512) {
      for i1: int32 in vectorized(0, 512) {
        C[by * 524288 + i0 * 1024 + bx * 512 + i1] = cast<)" + t + R"(>(C_l[i0 * 512 + i1])
      }
    }
  }
})", R"(
func @f(C: global )" + t + R"([1048576]) {
  kernel(grid=[2, 2], blocks=[bx: int32, by: int32], threads=[], thread_vars=[]) {
    alloc C_l: fragment float32[262144]
    for i0: int32 in serial(0, 512) {
      evaluate tl.cpu.copy_stream<void>(tl.address_of<handle>(C[by * 524288 + i0 * 1024 + bx * 512]), tl.address_of<handle>(C_l[i0 * 512]), 512)
    }
    evaluate tl.cpu.store_fence<void>()
  }
})");
  }
}

// Other conversions stay plain stores: bfloat16 from float16 or int32, a float32 rounded twice,
// and bfloat16 rows of 256 elements (512 bytes).
TEST(StreamGlobalStores, LeavesOtherConversions) {
  const char* src = R"(
func @f(C: global bfloat16[524288]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc H: fragment float16[262144]
    alloc I: fragment int32[262144]
    alloc L: fragment float32[262144]
    for i: int32 in vectorized(0, 262144) {
      C[i] = cast<bfloat16>(H[i])
    }
    for i: int32 in vectorized(0, 262144) {
      C[i] = cast<bfloat16>(I[i])
    }
    for i: int32 in vectorized(0, 262144) {
      C[i] = cast<bfloat16>(L[i] * 2.0f32)
    }
    for r: int32 in serial(0, 2048) {
      for i: int32 in vectorized(0, 256) {
        C[r * 256 + i] = cast<bfloat16>(L[r * 128 + i])
      }
    }
  }
})";
  tl::testing::expect_pass("stream_global_stores", src, src);
}

// Loops the rewrite leaves alone: rows below 1 KiB, a copy below 512 KiB in all, a conversion other
// than float32 to bfloat16 / float16, arithmetic on the value, a global source, a stride other than
// one, a trip count known only at run time.
TEST(StreamGlobalStores, LeavesShortSmallConvertingStridedAndGlobalCopies) {
  const char* src = R"(
func @f(C: global float32[524288], H: global int32[524288], G: global float32[524288], n: int32) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: fragment float32[262144]
    for r: int32 in serial(0, 2048) {
      for i: int32 in vectorized(0, 128) {
        C[r * 128 + i] = L[r * 128 + i]
      }
    }
    for r: int32 in serial(0, 16) {
      for i: int32 in vectorized(0, 512) {
        C[r * 1024 + i] = L[r * 512 + i]
      }
    }
    for i: int32 in vectorized(0, 262144) {
      H[i] = cast<int32>(L[i])
    }
    for i: int32 in vectorized(0, 262144) {
      C[i] = L[i] * 2.0f32
    }
    for i: int32 in vectorized(0, 262144) {
      C[i] = G[i]
    }
    for i: int32 in serial(0, 262144) {
      C[i * 2] = L[i]
    }
    for i: int32 in serial(0, n) {
      C[i] = L[i]
    }
  }
})";
  // (the large-output rule off: these copies go to a 2 MiB C, which a host with a smaller L3 would stream)
  tl::testing::expect_pass("stream_global_stores", src, src, "cpu", {{"tl.cpu_stream_min_output_bytes", Attr(int64_t(1) << 40)}});
}

// A kernel without GEMM calls (examples/rms_norm: 4 rows of 1024 floats a block) streams a copy of
// at least 16 KiB into a global buffer of at least tl.cpu_stream_min_output_bytes (default: the
// host's last-level cache), however far below 512 KiB the copy is; an 8 KiB copy, a smaller
// destination and a function that calls tl.cpu.gemm keep their plain stores.
TEST(StreamGlobalStores, LargeOutputsOfKernelsWithoutGemmAreStreamed) {
  const AttrMap small_llc = {{"tl.cpu_stream_min_output_bytes", Attr(int64_t(4) << 20)}};
  tl::testing::expect_pass("stream_global_stores", R"(
func @f(Y: global float32[1048576], Z: global float32[1048576], S: global float32[4096]) {
  kernel(grid=[256], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4096]
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        Y[bx * 4096 + i * 1024 + j] = x[i * 1024 + j]
      }
    }
    for i: int32 in serial(0, 2) {
      for j: int32 in vectorized(0, 1024) {
        Z[bx * 4096 + i * 1024 + j] = x[i * 1024 + j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        S[i * 1024 + j] = x[i * 1024 + j]
      }
    }
  }
})", R"(
func @f(Y: global float32[1048576], Z: global float32[1048576], S: global float32[4096]) {
  kernel(grid=[256], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4096]
    for i: int32 in serial(0, 4) {
      evaluate tl.cpu.copy_stream<void>(tl.address_of<handle>(Y[bx * 4096 + i * 1024]), tl.address_of<handle>(x[i * 1024]), 1024)
    }
    evaluate tl.cpu.store_fence<void>()
    for i: int32 in serial(0, 2) {
      for j: int32 in vectorized(0, 1024) {
        Z[bx * 4096 + i * 1024 + j] = x[i * 1024 + j]
      }
    }
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        S[i * 1024 + j] = x[i * 1024 + j]
      }
    }
  }
})", "cpu", small_llc);
  // The same copy into Y beside a GEMM call: plain stores (the block is compute-bound).
  const char* with_gemm = R"(
func @f(Y: global float32[1048576], A: global float32[4096]) {
  kernel(grid=[256], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc x: fragment float32[4096]
    evaluate tl.cpu.gemm<void>(64, 64, 1, 0, 0, tl.address_of<handle>(A[0]), 64, tl.address_of<handle>(A[0]), 64, tl.address_of<handle>(x[0]), 64, 1)
    for i: int32 in serial(0, 4) {
      for j: int32 in vectorized(0, 1024) {
        Y[bx * 4096 + i * 1024 + j] = x[i * 1024 + j]
      }
    }
  }
})";
  tl::testing::expect_pass("stream_global_stores", with_gemm, with_gemm, "cpu", small_llc);
}

TEST(StreamGlobalStores, TheRuleAndItsThreshold) {
  EXPECT_EQ(stream_min_output_bytes({{"tl.cpu_stream_min_output_bytes", Attr(int64_t(12345))}}), 12345);
  EXPECT_GE(stream_min_output_bytes({}), int64_t(1) << 20);  // the host's L3 (at most 64 MiB), or 32 MiB when sysfs has none
  EXPECT_LE(stream_min_output_bytes({}), int64_t(64) << 20);
  // the default: the last-level cache, capped at 64 MiB (a server socket's shared L3); 32 MiB without one
  EXPECT_EQ(default_stream_min_output_bytes(int64_t(32) << 20), int64_t(32) << 20);
  EXPECT_EQ(default_stream_min_output_bytes(int64_t(8) << 20), int64_t(8) << 20);
  EXPECT_EQ(default_stream_min_output_bytes(int64_t(300) << 20), int64_t(64) << 20);
  EXPECT_EQ(default_stream_min_output_bytes(0), int64_t(32) << 20);
  // rows of at least 1 KiB; 512 KiB in all, or 16 KiB into an output of at least the threshold without GEMMs
  EXPECT_TRUE(stream_copy_wanted(1024, 512 * 1024, 0, false, 1 << 20));
  EXPECT_FALSE(stream_copy_wanted(512, 512 * 1024, 0, true, 1 << 20));
  EXPECT_TRUE(stream_copy_wanted(4096, 16 * 1024, 1 << 20, true, 1 << 20));
  EXPECT_FALSE(stream_copy_wanted(4096, 16 * 1024, 1 << 20, false, 1 << 20));
  EXPECT_FALSE(stream_copy_wanted(4096, 8 * 1024, 1 << 20, true, 1 << 20));
  EXPECT_FALSE(stream_copy_wanted(4096, 16 * 1024, (1 << 20) - 4, true, 1 << 20));
  EXPECT_FALSE(stream_copy_wanted(4096, 16 * 1024, 0, true, 1 << 20));  // a destination of no constant size
}

TEST(StreamGlobalStores, OffWithThePassConfig) {
  const char* src = R"(
func @f(C: global float32[262144]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[], thread_vars=[]) {
    alloc L: fragment float32[262144]
    for i: int32 in vectorized(0, 262144) {
      C[i] = L[i]
    }
  }
})";
  PrimFunc out = tl::testing::run_pass("stream_global_stores", src, "cpu", {{"tl.disable_cpu_stream_stores", true}});
  EXPECT_TRUE(structural_equal(out, parse_func(src, "expected")));
  EXPECT_FALSE(structural_equal(tl::testing::run_pass("stream_global_stores", src), parse_func(src, "expected")));
}

}  // namespace
}  // namespace tl
