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

namespace {

std::string library_dir() {
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&tl_build_identity), &info) || !info.dli_fname) return "";
  std::error_code ec;
  fs::path p = fs::canonical(info.dli_fname, ec);
  return ec ? "" : p.parent_path().string();
}

std::string absolute_dir(const std::string& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  return ec ? dir : p.lexically_normal().string();
}

}  // namespace

std::string tl_include_dir(const std::string& probe) {
  std::error_code ec;
  if (const char* d = std::getenv("TILELANG_INCLUDE_DIR"); d && *d) {
    if (fs::exists(std::string(d) + "/" + probe, ec)) return absolute_dir(d);
    throw_error<ValueError>("TILELANG_INCLUDE_DIR='", d, "' does not contain ", probe,
                            "; point it at the 'include' directory of tilelang-cpp, or unset it");
  }
  std::vector<std::string> tried;
  if (const char* s = std::getenv("TILELANG_SOURCE_DIR"); s && *s) tried.push_back(std::string(s) + "/include");
  if (*TL_SOURCE_DIR) tried.push_back(std::string(TL_SOURCE_DIR) + "/include");
  if (std::string self = library_dir(); !self.empty())
    for (const char* rel : {"/include", "/../include", "/../../include"}) tried.push_back(self + rel);
  for (const std::string& dir : tried)
    if (fs::exists(dir + "/" + probe, ec)) return absolute_dir(dir);
  std::string list;
  for (auto& t : tried) list += " '" + t + "'";
  throw_error<Error>("cannot find tilelang's device headers (", probe, "); tried:", list,
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
