// insert_thread_sync: barriers under conditions on per-thread buffers that are the same in every
// thread (transform/thread_uniformity.h), and SyncError where they are not.
#include "pass_test_util.h"

namespace tl {
namespace {

// TileLang's block-sparse attention: `if block_mask[k] != 0:` on a fragment copied whole from
// one row of the global mask. Every thread holds the same mask, so the barriers go inside the
// branch (this raised SyncError when every per-thread buffer counted as thread-dependent).
TEST(InsertThreadSync, UniformMaskConditionHoldsBarriers) {
  testing::expect_pass("insert_thread_sync", R"(
func @main(Mask: global bool[4], A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc mask: local bool[4]
      evaluate cuda.copy_vec<void>(cuda.address_of<handle>(mask[0], 2), cuda.address_of<handle>(Mask[0], 1), 4)
      for k: int32 in serial(0, 4) {
        if (mask[k] != false) {
          S[tx] = A[tx]
          A[tx] = S[127 - tx]
        }
      }
    }
  }
})", R"(
func @main(Mask: global bool[4], A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc mask: local bool[4]
      evaluate cuda.copy_vec<void>(cuda.address_of<handle>(mask[0], 2), cuda.address_of<handle>(Mask[0], 1), 4)
      for k: int32 in serial(0, 4) {
        if (mask[k] != false) {
          evaluate tl.sync_threads()
          S[tx] = A[tx]
          evaluate tl.sync_threads()
          A[tx] = S[127 - tx]
        }
      }
    }
  }
})", "cuda");
}

// A T.alloc_var set from uniform values (a loop counter, a global element) is uniform too.
TEST(InsertThreadSync, UniformVarConditionHoldsBarriers) {
  testing::expect_pass("insert_thread_sync", R"(
func @main(N: global int32[1], A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc v: local.var int32[1]
      v[0] = N[0]
      for k: int32 in serial(0, 4) {
        v[0] = v[0] + k
        if (v[0] > 2) {
          S[tx] = A[tx]
          A[tx] = S[127 - tx]
        }
      }
    }
  }
})", R"(
func @main(N: global int32[1], A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc v: local.var int32[1]
      v[0] = N[0]
      for k: int32 in serial(0, 4) {
        v[0] = v[0] + k
        if (v[0] > 2) {
          evaluate tl.sync_threads()
          S[tx] = A[tx]
          evaluate tl.sync_threads()
          A[tx] = S[127 - tx]
        }
      }
    }
  }
})", "cuda");
}

// A scalar atomic on shared memory writes its element: the reads after it wait for every
// thread's atomic (TileLang's split-K gemv: T.atomic_add(C_shared[tn], acc) then C[...] = C_shared[tn]).
TEST(InsertThreadSync, SharedAtomicsAreWrites) {
  testing::expect_pass("insert_thread_sync", R"(
func @main(A: global float32[128], C: global float32[32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[32]
      evaluate tl.atomic_add_scalar<float32>(S[tx % 32], A[tx])
      C[tx % 32] = S[tx % 32]
    }
  }
})", R"(
func @main(A: global float32[128], C: global float32[32]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[32]
      evaluate tl.atomic_add_scalar<float32>(S[tx % 32], A[tx])
      evaluate tl.sync_threads()
      C[tx % 32] = S[tx % 32]
    }
  }
})", "cuda");
}

// Global memory between tile ops: TileLang's split-K pattern adds with T.atomic_add(C[...], acc)
// in one T.Parallel and a later T.Parallel (another thread mapping) reads the sums. Without the
// barrier a thread read elements other threads had not added yet (seen on an H100).
TEST(InsertThreadSync, GlobalAtomicThenReadInAnotherTileOp) {
  testing::expect_pass("insert_thread_sync", R"(
func @main(A: global float32[128], C: global float32[128], Old: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "cuda.group" = 0 {
      evaluate tl.atomic_add_scalar<float32>(C[tx], A[tx])
    }
    attr "cuda.group" = 1 {
      Old[127 - tx] = C[127 - tx]
    }
  }
})", R"(
func @main(A: global float32[128], C: global float32[128], Old: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "cuda.group" = 0 {
      evaluate tl.atomic_add_scalar<float32>(C[tx], A[tx])
    }
    attr "cuda.group" = 1 {
      evaluate tl.sync_threads()
      Old[127 - tx] = C[127 - tx]
    }
  }
})", "cuda");
}

// Within one tile op each thread owns its elements (no barrier inside an in-place update), and
// stores after stores of global memory are not ordered (a persistent loop stores a new tile per
// iteration: no barrier in the loop); the read of A by another mapping waits for the update.
TEST(InsertThreadSync, GlobalBarrierOnlyBetweenTileOpsThatShareData) {
  const char* src = R"(
func @main(A: global float32[128], C: global float32[512]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "cuda.group" = 0 {
      A[tx] = A[tx] * 2.0f32
    }
    for t: int32 in serial(0, 4) {
      attr "cuda.group" = 1 {
        C[t * 128 + tx] = A[127 - tx]
      }
    }
  }
})";
  testing::expect_pass("insert_thread_sync", src, R"(
func @main(A: global float32[128], C: global float32[512]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "cuda.group" = 0 {
      A[tx] = A[tx] * 2.0f32
    }
    evaluate tl.sync_threads()
    for t: int32 in serial(0, 4) {
      attr "cuda.group" = 1 {
        C[t * 128 + tx] = A[127 - tx]
      }
    }
  }
})", "cuda");
}

// A mask element written from a thread's own data differs between threads: no barrier can go
// inside the branch.
TEST(InsertThreadSync, PerThreadMaskIsThreadDependent) {
  testing::expect_pass_error<SyncError>("insert_thread_sync", R"(
func @main(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc mask: local bool[1]
      mask[0] = A[tx] > 0.0f32
      if (mask[0]) {
        S[tx] = A[tx]
        A[tx] = S[127 - tx]
      }
    }
  }
})", "depends on the thread", "cuda");
}

// A uniform value stored under a thread-dependent condition leaves the buffer thread-dependent.
TEST(InsertThreadSync, StoreUnderThreadConditionIsThreadDependent) {
  testing::expect_pass_error<SyncError>("insert_thread_sync", R"(
func @main(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc flag: local.var int32[1]
      flag[0] = 0
      if (tx < 64) {
        flag[0] = 1
      }
      if (flag[0] == 1) {
        S[tx] = A[tx]
        A[tx] = S[127 - tx]
      }
    }
  }
})", "depends on the thread", "cuda");
}

// The condition reads the buffer before the (thread-dependent) write that follows it in the loop
// body: the next iteration sees the written value, so the condition depends on the thread.
TEST(InsertThreadSync, LaterWriteInLoopMakesConditionThreadDependent) {
  testing::expect_pass_error<SyncError>("insert_thread_sync", R"(
func @main(A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc flag: local.var int32[1]
      flag[0] = 1
      for k: int32 in serial(0, 4) {
        if (flag[0] == 1) {
          S[tx] = A[tx]
          A[tx] = S[127 - tx]
        }
        flag[0] = tx % 2
      }
    }
  }
})", "depends on the thread", "cuda");
}

// A tile copied from a per-thread address (a fragment row owned by the thread) is thread-dependent.
TEST(InsertThreadSync, CopyFromThreadAddressIsThreadDependent) {
  testing::expect_pass_error<SyncError>("insert_thread_sync", R"(
func @main(Mask: global bool[128, 4], A: global float32[128]) {
  kernel(grid=[1], blocks=[bx: int32], threads=[128], thread_vars=[tx: int32]) {
    attr "smem_offset" = 0 {
      alloc S: shared float32[128]
      alloc mask: local bool[4]
      evaluate cuda.copy_vec<void>(cuda.address_of<handle>(mask[0], 2), cuda.address_of<handle>(Mask[tx, 0], 1), 4)
      if (mask[1]) {
        S[tx] = A[tx]
        A[tx] = S[127 - tx]
      }
    }
  }
})", "depends on the thread", "cuda");
}

}  // namespace
}  // namespace tl
