#include "runtime/cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "ir/error.h"
#include "runtime/sha256.h"
#include "runtime_test_util.h"

namespace tl {

namespace testing {
ScopedCacheDir::ScopedCacheDir(const std::string& name) {
  path_ = make_temp_dir("tl-test-" + name + "-");
  if (const char* old = std::getenv("TILELANG_CACHE_DIR")) {
    saved_ = old;
    had_saved_ = true;
  }
  setenv("TILELANG_CACHE_DIR", path_.c_str(), 1);
}
ScopedCacheDir::~ScopedCacheDir() {
  if (had_saved_) setenv("TILELANG_CACHE_DIR", saved_.c_str(), 1);
  else unsetenv("TILELANG_CACHE_DIR");
  remove_tree(path_);
}
}  // namespace testing

namespace {

namespace fs = std::filesystem;

std::string key_of(const std::string& s) { return sha256_hex(s); }

std::string commit_entry(const KernelCache& cache, const std::string& key, const std::string& payload) {
  std::string staging = cache.begin_write(key);
  write_text_file(staging + "/kernel.so", payload);
  write_text_file(staging + "/kernel_source.txt", "source of " + payload);
  return cache.commit(key, staging);
}

}  // namespace

TEST(CacheKey, EveryPartMatters) {
  CacheKeyParts base{"ir", "cpu", "tl.a=1\n", "-O3\n", "g++ 12"};
  std::string k = make_cache_key(base);
  EXPECT_EQ(k.size(), 64u);
  EXPECT_EQ(make_cache_key(base), k);
  std::set<std::string> keys = {k};
  for (int field = 0; field < 5; ++field) {
    CacheKeyParts p = base;
    std::string* parts[] = {&p.ir_text, &p.target, &p.pass_configs, &p.compile_flags, &p.compiler_version};
    *parts[field] += "x";
    keys.insert(make_cache_key(p));
  }
  EXPECT_EQ(keys.size(), 6u);
  // Moving text from one part to the next must change the key (length-prefixed fields).
  CacheKeyParts shifted = base;
  shifted.ir_text = "irc";
  shifted.target = "pu";
  EXPECT_NE(make_cache_key(shifted), k);
}

TEST(KernelCache, CommitThenLookup) {
  testing::ScopedCacheDir dir("cache");
  KernelCache cache(KernelCache::default_root());
  EXPECT_EQ(cache.root(), dir.path());
  std::string key = key_of("a");
  EXPECT_FALSE(cache.lookup(key).has_value());
  std::string entry = commit_entry(cache, key, "payload");
  EXPECT_EQ(entry, cache.entry_dir(key));
  auto found = cache.lookup(key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(read_text_file(*found + "/kernel.so"), "payload");
  // The staging area holds nothing once committed.
  EXPECT_TRUE(fs::is_empty(dir.path() + "/v1/staging"));
}

TEST(KernelCache, CorruptOrTruncatedEntriesAreDiscarded) {
  testing::ScopedCacheDir dir("corrupt");
  KernelCache cache(dir.path());
  struct Case {
    const char* name;
    std::function<void(const std::string&)> damage;
  };
  std::vector<Case> cases = {
      {"flipped byte", [](const std::string& e) { write_text_file(e + "/kernel.so", "paYload"); }},
      {"truncated file", [](const std::string& e) { fs::resize_file(e + "/kernel.so", 3); }},
      {"missing file", [](const std::string& e) { fs::remove(e + "/kernel_source.txt"); }},
      {"truncated manifest",
       [](const std::string& e) {
         std::string m = read_text_file(e + "/MANIFEST");
         write_text_file(e + "/MANIFEST", m.substr(0, m.size() - 4));
       }},
      {"no manifest", [](const std::string& e) { fs::remove(e + "/MANIFEST"); }},
      {"manifest of another key",
       [](const std::string& e) {
         std::string m = read_text_file(e + "/MANIFEST");
         m.replace(m.find("key ") + 4, 4, "0000");
         write_text_file(e + "/MANIFEST", m);
       }},
  };
  for (auto& c : cases) {
    std::string key = key_of(c.name);
    std::string entry = commit_entry(cache, key, "payload");
    ASSERT_TRUE(KernelCache::validate(entry, key));
    c.damage(entry);
    std::string why;
    EXPECT_FALSE(KernelCache::validate(entry, key, &why)) << c.name;
    EXPECT_FALSE(cache.lookup(key).has_value()) << c.name;
    EXPECT_FALSE(fs::exists(entry)) << c.name << ": a corrupt entry must be removed";
    // A rebuild then succeeds.
    commit_entry(cache, key, "payload");
    EXPECT_TRUE(cache.lookup(key).has_value()) << c.name;
  }
}

TEST(KernelCache, ConcurrentWritersOfOneKey) {
  testing::ScopedCacheDir dir("race");
  KernelCache cache(dir.path());
  std::string key = key_of("race");
  std::vector<std::thread> writers;
  std::vector<std::string> results(8);
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&, t] { results[t] = commit_entry(cache, key, "same payload"); });
  for (auto& w : writers) w.join();
  for (auto& r : results) EXPECT_EQ(r, cache.entry_dir(key));
  ASSERT_TRUE(cache.lookup(key).has_value());
  EXPECT_EQ(read_text_file(cache.entry_dir(key) + "/kernel.so"), "same payload");
  // Losers cleaned up after themselves.
  EXPECT_TRUE(fs::is_empty(dir.path() + "/v1/staging"));
}

TEST(KernelCache, ConcurrentWritersInSeparateProcesses) {
  testing::ScopedCacheDir dir("procs");
  std::string key = key_of("procs");
  std::vector<pid_t> kids;
  for (int i = 0; i < 4; ++i) {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        KernelCache cache(dir.path());
        commit_entry(cache, key, "payload from any process");
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
    kids.push_back(pid);
  }
  for (pid_t pid : kids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  KernelCache cache(dir.path());
  EXPECT_TRUE(cache.lookup(key).has_value());
}

TEST(KernelCache, AbortAndClear) {
  testing::ScopedCacheDir dir("clear");
  KernelCache cache(dir.path());
  std::string staging = cache.begin_write(key_of("x"));
  write_text_file(staging + "/kernel.so", "half");
  cache.abort(staging);
  EXPECT_FALSE(fs::exists(staging));
  commit_entry(cache, key_of("1"), "one");
  commit_entry(cache, key_of("2"), "two");
  EXPECT_EQ(cache.clear(), 2u);
  EXPECT_FALSE(cache.lookup(key_of("1")).has_value());
}

TEST(KernelCache, DisabledByEnv) {
  unsetenv("TILELANG_DISABLE_CACHE");
  EXPECT_FALSE(KernelCache::disabled_by_env());
  setenv("TILELANG_DISABLE_CACHE", "1", 1);
  EXPECT_TRUE(KernelCache::disabled_by_env());
  setenv("TILELANG_DISABLE_CACHE", "0", 1);
  EXPECT_FALSE(KernelCache::disabled_by_env());
  unsetenv("TILELANG_DISABLE_CACHE");
}

}  // namespace tl
