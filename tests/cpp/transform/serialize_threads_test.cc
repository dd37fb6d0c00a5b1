#include "transform/serialize_threads.h"

#include "pass_test_util.h"
#include "target/cpu/cpu_kernel_util.h"

namespace tl {
namespace {

using namespace tl::test;

TEST(SerializeThreads, PerThreadCodeRunsForEveryThreadBetweenBarriers) {
  tl::testing::expect_pass("serialize_threads", R"(
func @f(A: global float32[4, 64], B: global float32[4]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc S: shared float32[64]
    alloc t: local float32[2]
    let base: int32 = bx * 64
    t[0] = A[bx, tx] * 2.0f32
    S[tx] = t[0]
    evaluate tl.sync_threads<void>()
    if (tx == 0) {
      B[bx] = S[0] + S[63]
    }
    for i: int32 in parallel(0, 64) {
      S[i] = 0.0f32
    }
  }
})", R"(
func @f(A: global float32[4, 64], B: global float32[4]) {
  kernel(grid=[4], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc S: shared float32[64]
    alloc t: local float32[64, 2]
    let base: int32 = bx * 64
    for tx_1: int32 in serial(0, 64) {
      t[tx_1, 0] = A[bx, tx_1] * 2.0f32
      S[tx_1] = t[tx_1, 0]
    }
    for tx_2: int32 in serial(0, 64) {
      if (tx_2 == 0) {
        B[bx] = S[0] + S[63]
      }
    }
    for i: int32 in parallel(0, 64) {
      S[i] = 0.0f32
    }
  }
})");
}

// Without a T.sync_threads(): where a GPU gets a barrier from insert_thread_sync (shared memory
// written by one thread and read by another), the thread loop is split too, so cpu runs the
// program as TileLang does (threads reading S[63 - tx] saw unwritten memory before). A uniform
// loop that writes shared memory is scheduled inside (one split per iteration).
TEST(SerializeThreads, SplitsWhereAGpuNeedsABarrier) {
  tl::testing::expect_pass("serialize_threads", R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc S: shared float32[64]
    S[tx] = A[tx]
    B[tx] = S[63 - tx]
    for k: int32 in serial(0, 2) {
      S[tx] = B[tx] + 1.0f32
      B[tx] = S[(tx + 1) % 64]
    }
  }
})", R"(
func @f(A: global float32[64], B: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc S: shared float32[64]
    for tx_1: int32 in serial(0, 64) {
      S[tx_1] = A[tx_1]
    }
    for tx_2: int32 in serial(0, 64) {
      B[tx_2] = S[63 - tx_2]
    }
    for k: int32 in serial(0, 2) {
      for tx_3: int32 in serial(0, 64) {
        S[tx_3] = B[tx_3] + 1.0f32
      }
      for tx_4: int32 in serial(0, 64) {
        B[tx_4] = S[(tx_4 + 1) % 64]
      }
    }
  }
})");
}

// A tile op on a per-thread buffer (T.clear of a T.alloc_local, as TileLang's gemv example
// writes) is per-thread code: it runs on each thread's copy.
TEST(SerializeThreads, TileOpOnAPerThreadBufferRunsPerThread) {
  tl::testing::expect_pass("serialize_threads", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc r: local float32[1]
    fill(r[0 :+ 1], 0.0f32)
    r[0] = r[0] + A[tx]
    A[tx] = r[0]
  }
})", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    alloc r: local float32[64, 1]
    for tx_1: int32 in serial(0, 64) {
      fill(r[tx_1 :+ 1, 0 :+ 1], 0.0f32)
      r[tx_1, 0] = r[tx_1, 0] + A[tx_1]
      A[tx_1] = r[tx_1, 0]
    }
  }
})");
}

TEST(SerializeThreads, KernelsWithoutThreadIndexAreUnchanged) {
  const char* text = R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    fill(A[0 :+ 64], 1.0f32)
  }
})";
  tl::testing::expect_pass("serialize_threads", text, text);
}

TEST(SerializeThreads, RejectsWhatItCannotSchedule) {
  tl::testing::expect_pass_error<NotImplemented>("serialize_threads", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    if (tx < 32) {
      A[tx] = 1.0f32
      evaluate tl.sync_threads<void>()
    }
  }
})", "T.sync_threads() inside control flow");
  tl::testing::expect_pass_error<NotImplemented>("serialize_threads", R"(
func @f(A: global float32[64]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    if (tx == 0) {
      fill(A[0 :+ 64], 0.0f32)
    }
  }
})", "a tile op in code that depends on the thread index");
}

// A uniform loop holding tile ops and one per-thread statement (the persistent-GEMM pattern
// `if tx == 0: T.atomic_add(...)`): the thread loop goes around the per-thread statement only.
TEST(SerializeThreads, PerThreadCodeInsideUniformControlAroundTileOps) {
  tl::testing::expect_pass("serialize_threads", R"(
func @f(A: global float32[4, 64], V: global int32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    for w: int32 in serial(0, 4) {
      let tile: int32 = w + bx
      fill(A[tile :+ 1, 0 :+ 64], 1.0f32)
      if (tx == 0) {
        V[tile] = V[tile] + 1
      }
    }
  }
})", R"(
func @f(A: global float32[4, 64], V: global int32[4]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[64], thread_vars=[tx: int32]) {
    for w: int32 in serial(0, 4) {
      let tile: int32 = w + bx
      fill(A[tile :+ 1, 0 :+ 64], 1.0f32)
      for tx_1: int32 in serial(0, 64) {
        if (tx_1 == 0) {
          V[tile] = V[tile] + 1
        }
      }
    }
  }
})");
}

TEST(SerializeThreads, SharedMemoryReductionRunsOnCpu) {
  // Per-thread partial sums into shared memory, a barrier, then thread 0 adds them up.
  const int64_t blocks = 3, threads = 32, per = 4;
  Buffer A = global("A", DataType::Float32(), {c(blocks * threads * per)}), B = global("B", DataType::Float32(), {c(blocks)});
  IRBuilder b;
  Var bx("bx"), tx("tx");
  b.enter_kernel({c(blocks)}, {bx}, {c(threads)}, {tx}, {});
  Buffer S = shared("S", DataType::Float32(), {c(threads)});
  Buffer acc("acc", DataType::Float32(), {c(1)}, MemScope::kLocalVar);
  b.alloc(S);
  b.alloc(acc);
  b.emit(make_store(acc, {c(0)}, make_float(0.0)));
  Var i("i");
  b.enter_for(i, 0, c(per), ForKind::kSerial);
  b.emit(make_store(acc, {c(0)}, make_load(acc, {c(0)}) + make_load(A, {(bx * threads + tx) * per + i})));
  b.exit();
  b.emit(make_store(S, {tx}, make_load(acc, {c(0)})));
  b.emit(make_evaluate(make_call(DataType::Void(), "tl.sync_threads", {})));
  b.enter_if(eq(tx, c(0)));
  Var j("j");
  b.emit(make_store(B, {bx}, make_float(0.0)));
  b.enter_for(j, 0, c(threads), ForKind::kSerial);
  b.emit(make_store(B, {bx}, make_load(B, {bx}) + make_load(S, {j})));
  b.exit();
  b.exit();
  b.exit();
  CpuKernel k;
  k.build(b.finish_func("block_sum", {tensor_param(A), tensor_param(B)}));
  ASSERT_TRUE(k.ok());
  auto a = random_floats(blocks * threads * per, 17);
  std::vector<float> out(blocks, -1.0f);
  TestRuntime rt(2);
  ASSERT_EQ(k.run({ptr_arg(a.data()), ptr_arg(out.data())}, rt), 0);
  for (int64_t bb = 0; bb < blocks; ++bb) {
    double ref = 0;
    for (int64_t t = 0; t < threads * per; ++t) ref += a[bb * threads * per + t];
    EXPECT_NEAR(out[bb], ref, 1e-4) << bb;
  }
}

}  // namespace
}  // namespace tl
