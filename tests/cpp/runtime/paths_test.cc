// The run-time lookup of the device headers (no checkout path compiled in) and the build identity
// that enters every cache key (docs/INSTALL.md).
#include "runtime/paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "runtime/cache.h"

namespace tl {
namespace {

namespace fs = std::filesystem;

// A directory tree with `rel`/tl/cpu/kernel.h under `root`; returns root/rel.
std::string make_headers(const std::string& root, const std::string& rel) {
  fs::path dir = fs::path(root) / rel;
  fs::create_directories(dir / "tl/cpu");
  std::ofstream(dir / "tl/cpu/kernel.h") << "// test\n";
  std::ofstream(dir / "tl/version.h") << "#pragma once\n#define TL_HEADERS_VERSION \"" TL_VERSION "\"\n";
  return fs::weakly_canonical(dir).string();
}

TEST(IncludeDir, InstalledPackageHeadersAreFoundNextToTheLibrary) {
  std::string root = make_temp_dir("tl-paths-");
  // site-packages/tilelang/_core*.so with site-packages/tilelang/include/tl/...
  std::string pkg = make_headers(root, "site-packages/tilelang/include");
  std::string lib = root + "/site-packages/tilelang";
  fs::create_directories(lib);
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", "", lib), pkg);
  // The package's own headers win over a source checkout around it.
  make_headers(root, "include");
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", "", lib), pkg);
  remove_tree(root);
}

TEST(IncludeDir, SourceCheckoutLayoutsAreFound) {
  std::string root = make_temp_dir("tl-paths-");
  std::string inc = make_headers(root, "include");
  // `make`: python/tilelang/_core*.so and build/tl_tests (the binary's directory exists).
  fs::create_directories(root + "/python/tilelang");
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", "", root + "/python/tilelang"), inc);
  fs::create_directories(root + "/build");
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", "", root + "/build"), inc);
  remove_tree(root);
}

TEST(IncludeDir, EnvironmentOverridesComeFirst) {
  std::string root = make_temp_dir("tl-paths-");
  std::string pkg = make_headers(root, "pkg/tilelang/include");
  std::string mine = make_headers(root, "mine");
  std::string src = make_headers(root, "src/include");
  std::string lib = root + "/pkg/tilelang";
  fs::create_directories(lib);
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", mine, root + "/src", lib), mine);
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", root + "/src", lib), src);
  // A TILELANG_SOURCE_DIR without headers falls through to the package.
  EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", root + "/nowhere", lib), pkg);
  // A TILELANG_INCLUDE_DIR without headers is an error naming the variable, not a fall-through.
  try {
    find_include_dir("tl/cpu/kernel.h", root + "/nowhere", "", lib);
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("TILELANG_INCLUDE_DIR="), std::string::npos) << e.what();
  }
  remove_tree(root);
}

TEST(IncludeDir, HeadersOfAnotherVersionAreRefusedByName) {
  std::string root = make_temp_dir("tl-paths-");
  std::string pkg = make_headers(root, "pkg/tilelang/include");
  std::string lib = root + "/pkg/tilelang";
  std::string stale = make_headers(root, "stale");
  std::ofstream(stale + "/tl/version.h") << "#define TL_HEADERS_VERSION \"0.0.1\"\n";
  std::string foreign = make_headers(root, "foreign");
  fs::remove(foreign + "/tl/version.h");
  for (auto& [dir, why] : {std::pair<std::string, std::string>{stale, "tilelang 0.0.1's"}, {foreign, "no tl/version.h"}}) {
    try {
      find_include_dir("tl/cpu/kernel.h", dir, "", lib);
      FAIL() << "expected ValueError for " << dir;
    } catch (const ValueError& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("TILELANG_INCLUDE_DIR='" + dir + "' does not hold this tilelang's headers"), std::string::npos)
          << msg;
      EXPECT_NE(msg.find(why), std::string::npos) << msg;
    }
    // As a TILELANG_SOURCE_DIR, stale headers are skipped for the package's own.
    fs::create_directories(root + "/src_" + fs::path(dir).filename().string());
    fs::rename(dir, root + "/src_" + fs::path(dir).filename().string() + "/include");
    EXPECT_EQ(find_include_dir("tl/cpu/kernel.h", "", root + "/src_" + fs::path(dir).filename().string(), lib), pkg);
  }
  remove_tree(root);
}

TEST(IncludeDir, NoHeadersAnywhereIsATypedErrorNamingWhatWasTried) {
  std::string root = make_temp_dir("tl-paths-");
  try {
    find_include_dir("tl/cpu/kernel.h", "", "", root + "/pkg/tilelang");
    FAIL() << "expected tl::Error";
  } catch (const ValueError&) {
    FAIL() << "a missing installation is not a bad argument";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(root + "/pkg/tilelang/include"), std::string::npos) << msg;
    EXPECT_NE(msg.find("TILELANG_INCLUDE_DIR"), std::string::npos) << msg;
  }
  EXPECT_THROW(find_include_dir("tl/cpu/kernel.h", "", "", ""), Error);
  remove_tree(root);
}

TEST(BuildIdentity, NamesTheVersionAndEntersTheCacheKey) {
  EXPECT_STREQ(tl_version(), TL_VERSION);
  EXPECT_EQ(tl_build_identity().rfind(std::string("tilelang ") + TL_VERSION + " binary /", 0), 0u)
      << tl_build_identity();
  // Same binary, another version: another identity, hence another cache key.
  std::string binary = "/proc/self/exe";
  std::string a = build_identity("0.1.0", binary), b = build_identity("0.1.1", binary);
  EXPECT_NE(a, b);
  CacheKeyParts pa{"ir", "cpu", "", "", a + "\ng++ 12"}, pb = pa;
  pb.compiler_version = b + "\ng++ 12";
  EXPECT_NE(make_cache_key(pa), make_cache_key(pb));
  EXPECT_EQ(make_cache_key(pa), make_cache_key(CacheKeyParts{"ir", "cpu", "", "", a + "\ng++ 12"}));
}

}  // namespace
}  // namespace tl
