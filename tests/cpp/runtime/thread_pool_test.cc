#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace tl {

namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(size_t n) : hits(n) {}
};

void count_body(void* ctx, int64_t i) { static_cast<Counts*>(ctx)->hits[i].fetch_add(1); }

}  // namespace

TEST(ThreadPool, EveryIndexRunsExactlyOnce) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 3, 7, 64, 1000}) {
    Counts c(n);
    pool.parallel_for(n, count_body, &c);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(c.hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, ManyBackToBackLaunches) {
  // Stresses the launch protocol (publish / enter / finish) for races.
  ThreadPool pool(4);
  std::atomic<int64_t> total{0};
  struct Ctx {
    std::atomic<int64_t>* total;
  } ctx{&total};
  auto body = [](void* p, int64_t i) { static_cast<Ctx*>(p)->total->fetch_add(i + 1); };
  for (int rep = 0; rep < 20000; ++rep) pool.parallel_for(5, body, &ctx);
  EXPECT_EQ(total.load(), 20000 * 15);
}

TEST(ThreadPool, SleepingWorkersWakeUp) {
  ThreadPool pool(2);
  for (int rep = 0; rep < 5; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past the spin window
    Counts c(16);
    pool.parallel_for(16, count_body, &c);
    for (auto& h : c.hits) ASSERT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, MaxThreadsIsHonoredAndPoolGrows) {
  ThreadPool pool(2);
  struct Ctx {
    std::mutex mu;
    std::set<pthread_t> threads;
  } ctx;
  auto body = [](void* p, int64_t) {
    auto* c = static_cast<Ctx*>(p);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::lock_guard<std::mutex> lock(c->mu);
    c->threads.insert(pthread_self());
  };
  pool.parallel_for(64, body, &ctx, 1);
  EXPECT_EQ(ctx.threads.size(), 1u);
  ctx.threads.clear();
  pool.parallel_for(64, body, &ctx, 5);
  EXPECT_EQ(pool.num_workers(), 4);  // and the caller
  EXPECT_LE(ctx.threads.size(), 5u);
  EXPECT_GE(ctx.threads.size(), 2u);
}

TEST(ThreadPool, OneBlockRunsInlineOnTheCaller) {
  ThreadPool pool(2);
  pthread_t who{};
  auto body = [](void* p, int64_t) { *static_cast<pthread_t*>(p) = pthread_self(); };
  pool.parallel_for(1, body, &who);
  EXPECT_TRUE(pthread_equal(who, pthread_self()));
}

TEST(ThreadPool, NestedLaunchRunsInline) {
  ThreadPool pool(2);
  struct Ctx {
    ThreadPool* pool;
    std::atomic<int> inner{0};
  } ctx{&pool};
  auto inner = [](void* p, int64_t) { static_cast<Ctx*>(p)->inner.fetch_add(1); };
  static TLParallelBody inner_fn = inner;
  auto outer = [](void* p, int64_t) {
    auto* c = static_cast<Ctx*>(p);
    c->pool->parallel_for(4, inner_fn, c);
  };
  pool.parallel_for(8, outer, &ctx);
  EXPECT_EQ(ctx.inner.load(), 32);
}

TEST(ThreadPool, CancelSkipsRemainingBlocks) {
  ThreadPool pool(2);
  struct Ctx {
    std::atomic<bool> cancel{false};
    std::atomic<int> ran{0};
  } ctx;
  auto body = [](void* p, int64_t i) {
    auto* c = static_cast<Ctx*>(p);
    c->ran.fetch_add(1);
    if (i == 0) c->cancel.store(true);
  };
  pool.parallel_for(100000, body, &ctx, 0, &ctx.cancel);
  EXPECT_LT(ctx.ran.load(), 100000);
}

TEST(ThreadPool, ConcurrentCallersAreSerializedCorrectly) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<int64_t> total{0};
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&] {
      auto body = [](void* p, int64_t) { static_cast<std::atomic<int64_t>*>(p)->fetch_add(1); };
      for (int rep = 0; rep < 500; ++rep) pool.parallel_for(10, body, &total);
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 4 * 500 * 10);
}

TEST(ThreadPool, WorkersHaveLargeStacks) {
  // Blocks that land on workers get a 16 MiB stack; every thread (the caller's 8 MiB one too)
  // holds a 4 MiB block-local array.
  struct Ctx {
    std::atomic<int> sum{0};
    std::atomic<int> on_workers{0};
    std::atomic<int> small_worker_stacks{0};
  } ctx;
  auto body = [](void* p, int64_t i) {
    auto* c = static_cast<Ctx*>(p);
    volatile char big[4 << 20];
    big[0] = static_cast<char>(i);
    big[sizeof(big) - 1] = 1;
    if (ThreadPool::on_worker_thread()) {
      c->on_workers.fetch_add(1);
      pthread_attr_t attr;
      size_t size = 0;
      pthread_getattr_np(pthread_self(), &attr);
      pthread_attr_getstacksize(&attr, &size);
      pthread_attr_destroy(&attr);
      if (size < ThreadPool::kDefaultStackBytes) c->small_worker_stacks.fetch_add(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    c->sum.fetch_add(big[0] + big[sizeof(big) - 1]);
  };
  ThreadPool pool(2);
  pool.parallel_for(8, body, &ctx);
  EXPECT_EQ(ctx.sum.load(), 28 + 8);
  EXPECT_GT(ctx.on_workers.load(), 0);
  EXPECT_EQ(ctx.small_worker_stacks.load(), 0);
}

}  // namespace tl
