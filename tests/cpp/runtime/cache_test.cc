#include "runtime/cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
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
  StagingDir staging = cache.begin_write(key);
  write_text_file(staging.path() + "/kernel.so", payload);
  write_text_file(staging.path() + "/kernel_source.txt", "source of " + payload);
  return cache.commit(key, staging).dir();
}

bool valid(const std::string& entry, const std::string& key, std::string* why = nullptr) {
  return KernelCache::open_entry(entry, key, {"kernel.so"}, why).has_value();
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
  EXPECT_EQ(found->dir(), entry);
  EXPECT_EQ(found->read("kernel.so"), "payload");
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
    ASSERT_TRUE(valid(entry, key));
    c.damage(entry);
    std::string why;
    EXPECT_FALSE(valid(entry, key, &why)) << c.name;
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
  StagingDir staging = cache.begin_write(key_of("x"));
  write_text_file(staging.path() + "/kernel.so", "half");
  cache.abort(staging);
  EXPECT_FALSE(fs::exists(staging.path()));
  commit_entry(cache, key_of("1"), "one");
  commit_entry(cache, key_of("2"), "two");
  EXPECT_EQ(cache.clear(), 2u);
  EXPECT_FALSE(cache.lookup(key_of("1")).has_value());
}

TEST(KernelCache, ManifestMustCoverEveryFile) {
  testing::ScopedCacheDir dir("cover");
  KernelCache cache(dir.path());
  auto drop_line = [](const std::string& e, const std::string& name) {
    std::string m = read_text_file(e + "/MANIFEST"), out;
    std::istringstream is(m);
    for (std::string line; std::getline(is, line);)
      if (line.size() < name.size() || line.compare(line.size() - name.size(), name.size(), name) != 0) out += line + "\n";
    write_text_file(e + "/MANIFEST", out);
  };
  struct Case {
    const char* name;
    std::function<void(const std::string&)> damage;
  };
  std::vector<Case> cases = {
      {"extra file", [](const std::string& e) { write_text_file(e + "/other.so", "another kernel"); }},
      {"line of kernel.so dropped, file kept", [&](const std::string& e) { drop_line(e, " kernel.so"); }},
      {"required file dropped with its line",
       [&](const std::string& e) {
         drop_line(e, " kernel.so");
         fs::remove(e + "/kernel.so");
       }},
      {"subdirectory", [](const std::string& e) { fs::create_directory(e + "/sub"); }},
      {"symlink to another file",
       [](const std::string& e) {
         fs::remove(e + "/kernel.so");
         fs::create_symlink(e + "/kernel_source.txt", e + "/kernel.so");
       }},
  };
  for (auto& c : cases) {
    std::string key = key_of(c.name);
    std::string entry = commit_entry(cache, key, "payload");
    ASSERT_TRUE(valid(entry, key)) << c.name;
    c.damage(entry);
    std::string why;
    EXPECT_FALSE(valid(entry, key, &why)) << c.name;
    EXPECT_FALSE(cache.lookup(key, {"kernel.so"}).has_value()) << c.name;
    EXPECT_FALSE(fs::exists(fs::symlink_status(entry))) << c.name;
    commit_entry(cache, key, "payload");
    EXPECT_TRUE(cache.lookup(key, {"kernel.so"}).has_value()) << c.name;
  }
}

TEST(KernelCache, OnlyEntriesOnlyTheUserCanWriteAreLoaded) {
  testing::ScopedCacheDir dir("owner");
  KernelCache cache(dir.path());
  std::vector<std::pair<const char*, std::function<void(const std::string&)>>> cases = {
      {"world-writable entry", [](const std::string& e) { ::chmod(e.c_str(), 0777); }},
      {"world-writable file", [](const std::string& e) { ::chmod((e + "/kernel.so").c_str(), 0666); }},
      {"world-writable MANIFEST", [](const std::string& e) { ::chmod((e + "/MANIFEST").c_str(), 0646); }},
  };
  if (::geteuid() == 0)  // only root can give a file away: test it where the test can
    cases.push_back({"file owned by another user", [](const std::string& e) {
                       ASSERT_EQ(::chown((e + "/kernel.so").c_str(), 65534, 65534), 0);
                     }});
  for (auto& [name, damage] : cases) {
    std::string key = key_of(name);
    std::string entry = commit_entry(cache, key, "payload");
    damage(entry);
    std::string why;
    EXPECT_FALSE(valid(entry, key, &why)) << name;
    EXPECT_NE(why.find("untrusted"), std::string::npos) << name << ": " << why;
    EXPECT_FALSE(cache.lookup(key).has_value()) << name;
  }
}

TEST(KernelCache, CommittedFilesAreNotWritableByOthersWhateverTheUmask) {
  testing::ScopedCacheDir dir("umask");
  KernelCache cache(dir.path());
  mode_t old = ::umask(0);
  std::string entry = commit_entry(cache, key_of("umask"), "payload");
  ::umask(old);
  struct stat st;
  ASSERT_EQ(::stat((entry + "/kernel.so").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 022, 0u);
  ASSERT_EQ(::stat(entry.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 022, 0u);
  EXPECT_TRUE(cache.lookup(key_of("umask")).has_value());
}

TEST(KernelCache, EntryReplacedByASymlinkLoopIsRebuilt) {
  testing::ScopedCacheDir dir("loop");
  KernelCache cache(dir.path());
  std::string key = key_of("loop");
  std::string entry = commit_entry(cache, key, "payload");
  fs::remove_all(entry);
  fs::create_symlink(entry, entry);  // a loop
  EXPECT_FALSE(cache.lookup(key).has_value());
  EXPECT_EQ(commit_entry(cache, key, "payload"), entry);
  EXPECT_TRUE(cache.lookup(key).has_value());
  // The shard directory replaced by a loop too.
  std::string shard = fs::path(entry).parent_path().string();
  fs::remove_all(shard);
  fs::create_symlink(shard, shard);
  EXPECT_FALSE(cache.lookup(key).has_value());
  EXPECT_EQ(commit_entry(cache, key, "payload"), entry);
  EXPECT_TRUE(cache.lookup(key).has_value());
}

TEST(KernelCache, ClearNeverTouchesABuildInProgress) {
  testing::ScopedCacheDir dir("clear-live");
  KernelCache cache(dir.path());
  commit_entry(cache, key_of("old"), "old");
  StagingDir live = cache.begin_write(key_of("live"));
  write_text_file(live.path() + "/kernel.so", "being built");
  // Even an old-looking build directory stays while its writer holds it.
  struct timespec past[2] = {{1, 0}, {1, 0}};
  ::utimensat(AT_FDCWD, live.path().c_str(), past, 0);
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_TRUE(fs::exists(live.path() + "/kernel.so"));
  write_text_file(live.path() + "/kernel_source.txt", "src");
  EXPECT_EQ(cache.commit(key_of("live"), live).read("kernel.so"), "being built");
  EXPECT_TRUE(cache.lookup(key_of("live")).has_value());
  EXPECT_FALSE(cache.lookup(key_of("old")).has_value());
}

TEST(KernelCache, DebrisOfAKilledWriterIsCollected) {
  testing::ScopedCacheDir dir("debris");
  pid_t pid = fork();
  if (pid == 0) {  // a writer that dies mid-build
    KernelCache cache(dir.path());
    StagingDir s = cache.begin_write(key_of("killed"));
    write_text_file(s.path() + "/kernel.cc", "half written");
    ::_exit(0);  // no destructor, no abort: like a SIGKILL
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::string staging = dir.path() + "/v1/staging";
  std::vector<std::string> left;
  for (auto& e : fs::directory_iterator(staging)) left.push_back(e.path().string());
  ASSERT_EQ(left.size(), 1u);
  KernelCache cache(dir.path());
  EXPECT_EQ(cache.collect_debris(), 0u);  // too fresh: a writer may not have locked it yet
  struct timespec past[2] = {{1, 0}, {1, 0}};
  ::utimensat(AT_FDCWD, left[0].c_str(), past, 0);
  EXPECT_EQ(cache.collect_debris(), 1u);
  EXPECT_FALSE(fs::exists(left[0]));
  // begin_write collects too.
  fs::create_directory(staging + "/trash.leftover");
  StagingDir s = cache.begin_write(key_of("next"));
  EXPECT_FALSE(fs::exists(staging + "/trash.leftover"));
}

TEST(KernelCache, RootIsAbsoluteAndPrivate) {
  KernelCache relative("-looks-like-an-option");
  EXPECT_EQ(relative.root().front(), '/');
  EXPECT_NE(relative.root().find("/-looks-like-an-option"), std::string::npos);
  std::string shared = make_temp_dir("tl-test-shared-root-");
  ::chmod(shared.c_str(), 0777);
  EXPECT_NE(KernelCache(shared).untrusted_root().find("writable by every user"), std::string::npos);
  std::string mine = make_temp_dir("tl-test-private-root-");
  EXPECT_EQ(KernelCache(mine).untrusted_root(), "");
  std::string created = mine + "/new/cache";
  EXPECT_EQ(KernelCache(created).untrusted_root(), "");
  struct stat st;
  ASSERT_EQ(::stat(created.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  remove_tree(shared);
  remove_tree(mine);
}

TEST(KernelCache, NoHomeMeansAPrivateDirectory) {
  std::map<std::string, std::string> saved;
  for (const char* v : {"TILELANG_CACHE_DIR", "XDG_CACHE_HOME", "HOME", "TMPDIR"})
    if (const char* x = std::getenv(v)) saved[v] = x;
  unsetenv("TILELANG_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  std::string tmp = make_temp_dir("tl-test-tmpdir-");
  setenv("TMPDIR", tmp.c_str(), 1);
  std::string root = KernelCache::default_root();
  EXPECT_EQ(root.front(), '/');
  EXPECT_EQ(root.find("/tmp/tilelang-cache-"), std::string::npos);  // never the shared guessable name
  // Someone else's directory under the per-user name is never taken as ours.
  std::string squatted = tmp + "/tilelang-cache-" + std::to_string(::geteuid());
  fs::create_directory(squatted);
  ::chmod(squatted.c_str(), 0777);
  std::string fallback = KernelCache::private_fallback_root();
  EXPECT_NE(fallback, squatted);
  struct stat st;
  ASSERT_EQ(::lstat(fallback.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0);
  for (auto& [k, v] : saved) setenv(k.c_str(), v.c_str(), 1);
  if (!saved.count("TMPDIR")) unsetenv("TMPDIR");
  remove_tree(tmp);
}

TEST(KernelCache, WhatWasHashedIsWhatIsLoaded) {
  testing::ScopedCacheDir dir("same-bytes");
  KernelCache cache(dir.path());
  std::string key = key_of("same-bytes");
  std::string entry = commit_entry(cache, key, "verified payload");
  auto files = cache.lookup(key, {"kernel.so"});
  ASSERT_TRUE(files.has_value());
  // Someone replaces the file after the check: the descriptors still read the verified bytes, and
  // the loader's path resolves to them too.
  write_text_file(entry + "/kernel.so.new", "swapped payload!");
  fs::rename(entry + "/kernel.so.new", entry + "/kernel.so");
  EXPECT_EQ(files->read("kernel.so"), "verified payload");
  ArtifactFiles::LoadPath path = files->load_path("kernel.so");
  EXPECT_EQ(read_text_file(path.path()), "verified payload");
  // Each load path is used once: two loads of descriptors with the same number never share a name.
  ArtifactFiles::LoadPath again = files->load_path("kernel.so");
  EXPECT_NE(path.path(), again.path());
  std::string p = path.path();
  { ArtifactFiles::LoadPath gone = std::move(path); }
  EXPECT_FALSE(fs::exists(fs::symlink_status(p)));
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
