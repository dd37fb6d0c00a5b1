#include "runtime/paths.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "ir/error.h"
#include "runtime/sha256.h"

#ifndef TL_SOURCE_DIR
#define TL_SOURCE_DIR ""
#endif

namespace tl {

namespace fs = std::filesystem;

static constexpr const char* kVersion = "0.1.0";

std::string tl_include_dir() {
  std::vector<std::string> tried;
  auto ok = [&](const std::string& dir) {
    tried.push_back(dir);
    std::error_code ec;
    return !dir.empty() && fs::exists(dir + "/tl/cpu/abi.h", ec);
  };
  if (const char* d = std::getenv("TILELANG_INCLUDE_DIR"); d && *d && ok(d)) return d;
  if (const char* s = std::getenv("TILELANG_SOURCE_DIR"); s && *s && ok(std::string(s) + "/include"))
    return std::string(s) + "/include";
  if (ok(std::string(TL_SOURCE_DIR) + "/include")) return std::string(TL_SOURCE_DIR) + "/include";
  std::string list;
  for (auto& t : tried) list += " '" + t + "'";
  throw_error<Error>("cannot find tilelang's device headers (tl/cpu/abi.h); tried:", list,
                     ". Set TILELANG_INCLUDE_DIR to the 'include' directory of tilelang-cpp");
}

const std::string& tl_build_identity() {
  static const std::string identity = [] {
    std::string id = std::string("tilelang ") + kVersion;
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&tl_include_dir), &info) && info.dli_fname) {
      struct stat st;
      if (::stat(info.dli_fname, &st) == 0) {
        id += " binary " + std::string(info.dli_fname) + " size " + std::to_string(st.st_size) + " mtime " +
              std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
      }
    }
    return id;
  }();
  return identity;
}

std::string hash_directory(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "";
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file()) files.push_back(fs::relative(it->path(), dir).string());
  std::sort(files.begin(), files.end());
  Sha256 h;
  for (auto& f : files) {
    h.update(f);
    h.update(":", 1);
    h.update(sha256_file(dir + "/" + f));
    h.update("\n", 1);
  }
  return h.hex_digest();
}

}  // namespace tl
