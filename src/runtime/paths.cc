#include "runtime/paths.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "ir/error.h"
#include "runtime/sha256.h"

#ifndef TL_VERSION
#error "TL_VERSION must be defined by the build (CMakeLists.txt: project VERSION)"
#endif

namespace tl {

namespace fs = std::filesystem;

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

// Why the headers under `dir` are not this tilelang's ("" when they are): tl/version.h missing or
// naming another version.
std::string headers_version_problem(const std::string& dir) {
  std::ifstream in(dir + "/tl/version.h");
  if (!in) return "it has no tl/version.h (headers of another program, or of a tilelang older than the marker)";
  const std::string key = "#define TL_HEADERS_VERSION \"";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::string v = line.substr(key.size());
    v = v.substr(0, v.find('"'));
    if (v == TL_VERSION) return "";
    return "its headers are tilelang " + v + "'s (tl/version.h), but this is tilelang " TL_VERSION;
  }
  return "its tl/version.h defines no TL_HEADERS_VERSION";
}

}  // namespace

const char* tl_version() { return TL_VERSION; }

std::string find_include_dir(const std::string& probe, const std::string& env_include,
                             const std::string& env_source, const std::string& library_dir) {
  std::error_code ec;
  if (!env_include.empty()) {
    if (!fs::exists(env_include + "/" + probe, ec))
      throw_error<ValueError>("TILELANG_INCLUDE_DIR='", env_include, "' does not contain ", probe,
                              "; point it at the 'include' directory of tilelang-cpp, or unset it");
    if (std::string why = headers_version_problem(env_include); !why.empty())
      throw_error<ValueError>("TILELANG_INCLUDE_DIR='", env_include, "' does not hold this tilelang's headers: ", why,
                              "; point it at the 'include' directory of tilelang-cpp " TL_VERSION ", or unset it");
    return absolute_dir(env_include);
  }
  std::vector<std::string> tried;
  if (!env_source.empty()) tried.push_back(env_source + "/include");
  if (!library_dir.empty())  // the installed package first, then a source checkout
    for (const char* rel : {"/include", "/../../include", "/../include"}) tried.push_back(library_dir + rel);
  std::string stale;  // candidates holding another version's headers: skipped, named in the error
  for (const std::string& dir : tried) {
    if (!fs::exists(dir + "/" + probe, ec)) continue;
    if (std::string why = headers_version_problem(dir); !why.empty()) {
      stale += " '" + dir + "' (" + why + ")";
      continue;
    }
    return absolute_dir(dir);
  }
  std::string list;
  for (auto& t : tried) list += " '" + t + "'";
  if (!stale.empty()) list += "; skipped as not this tilelang's:" + stale;
  if (tried.empty()) list = " nothing (the location of the tilelang library is unknown)";
  throw_error<Error>("cannot find tilelang's device headers (", probe, "); tried:", list,
                     ". Reinstall tilelang (pip install .), or set TILELANG_INCLUDE_DIR to the 'include' "
                     "directory of tilelang-cpp");
}

std::string tl_include_dir(const std::string& probe) {
  const char* inc = std::getenv("TILELANG_INCLUDE_DIR");
  const char* src = std::getenv("TILELANG_SOURCE_DIR");
  return find_include_dir(probe, inc ? inc : "", src ? src : "", library_dir());
}

std::string build_identity(const std::string& version, const std::string& binary_path) {
  std::string id = "tilelang " + version;
  struct stat st;
  if (!binary_path.empty() && ::stat(binary_path.c_str(), &st) == 0) {
    id += " binary " + binary_path + " size " + std::to_string(st.st_size) + " mtime " +
          std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  }
  return id;
}

const std::string& tl_build_identity() {
  static const std::string identity = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void*>(&tl_include_dir), &info) || !info.dli_fname)
      return build_identity(tl_version(), "");
    std::error_code ec;
    fs::path binary = fs::canonical(info.dli_fname, ec);  // an executable's name may be relative
    return build_identity(tl_version(), ec ? std::string(info.dli_fname) : binary.string());
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
