#include "runtime/cache.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/error.h"
#include "runtime/sha256.h"

namespace tl {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLayoutVersion = "v1";
constexpr const char* kManifestName = "MANIFEST";
constexpr const char* kManifestHeader = "tilelang-kernel-cache 1";

bool env_true(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return false;
  std::string s(v);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

std::string unique_suffix() {
  static std::atomic<uint64_t> counter{0};
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  std::ostringstream os;
  os << ::getpid() << "." << counter.fetch_add(1) << "." << std::hex << (static_cast<uint64_t>(now) & 0xffffffff);
  return os.str();
}

bool is_hex_key(const std::string& key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Filesystem helpers

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw_error<Error>("cannot write '", path, "': ", std::strerror(errno));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) throw_error<Error>("error while writing '", path, "' (disk full?)");
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error<Error>("cannot read '", path, "': ", std::strerror(errno));
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
}

void make_dirs(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec && !fs::is_directory(path))
    throw_error<Error>("cannot create directory '", path, "': ", ec.message(),
                       ". Set TILELANG_CACHE_DIR to a writable directory or TILELANG_DISABLE_CACHE=1");
}

std::string make_temp_dir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp ? tmp : "/tmp";
  std::string templ = base + "/" + prefix + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) throw_error<Error>("cannot create a temporary directory in '", base, "': ", std::strerror(errno));
  return std::string(buf.data());
}

// ---------------------------------------------------------------------------------------------
// Keys

std::string make_cache_key(const CacheKeyParts& parts) {
  Sha256 h;
  auto field = [&](const char* name, const std::string& value) {
    std::string head = std::string(name) + ":" + std::to_string(value.size()) + ":";
    h.update(head);
    h.update(value);
    h.update("\n", 1);
  };
  field("tilelang-cache-key", "1");
  field("ir", parts.ir_text);
  field("target", parts.target);
  field("pass_configs", parts.pass_configs);
  field("compile_flags", parts.compile_flags);
  field("compiler", parts.compiler_version);
  return h.hex_digest();
}

// ---------------------------------------------------------------------------------------------
// KernelCache

KernelCache::KernelCache(std::string root) : root_(std::move(root)) {}

std::string KernelCache::default_root() {
  const char* dir = std::getenv("TILELANG_CACHE_DIR");
  if (dir && *dir) return dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/tilelang";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/tilelang";
  return "/tmp/tilelang-cache-" + std::to_string(::getuid());
}

bool KernelCache::disabled_by_env() { return env_true("TILELANG_DISABLE_CACHE"); }

std::string KernelCache::entry_dir(const std::string& key) const {
  return root_ + "/" + kLayoutVersion + "/" + key.substr(0, 2) + "/" + key;
}

bool KernelCache::validate(const std::string& dir, const std::string& key, std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    return false;
  };
  std::ifstream in(dir + "/" + kManifestName);
  if (!in) return fail("no MANIFEST");
  std::string line;
  if (!std::getline(in, line) || line != kManifestHeader) return fail("bad MANIFEST header");
  if (!std::getline(in, line) || line != "key " + key) return fail("MANIFEST is for another key");
  bool ended = false;
  int files = 0;
  while (std::getline(in, line)) {
    if (line == "end") {
      ended = true;
      break;
    }
    // file <sha256> <size> <name>
    std::istringstream ls(line);
    std::string tag, digest, name;
    uint64_t size = 0;
    if (!(ls >> tag >> digest >> size) || tag != "file") return fail("malformed MANIFEST line '" + line + "'");
    std::getline(ls >> std::ws, name);
    if (name.empty() || name.find('/') != std::string::npos) return fail("bad file name in MANIFEST");
    std::string path = dir + "/" + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return fail("missing file '" + name + "'");
    if (static_cast<uint64_t>(st.st_size) != size)
      return fail("file '" + name + "' has " + std::to_string(st.st_size) + " bytes, expected " + std::to_string(size));
    std::string actual;
    try {
      actual = sha256_file(path);
    } catch (const Error& e) {
      return fail(e.what());
    }
    if (actual != digest) return fail("checksum mismatch for '" + name + "'");
    ++files;
  }
  if (!ended) return fail("MANIFEST is truncated");
  if (files == 0) return fail("empty entry");
  return true;
}

void KernelCache::discard(const std::string& dir) const {
  // Move aside first (atomic), so a concurrent reader never sees a half-deleted entry.
  std::string trash = root_ + "/" + kLayoutVersion + "/staging/trash." + unique_suffix();
  make_dirs(root_ + "/" + kLayoutVersion + "/staging");
  if (::rename(dir.c_str(), trash.c_str()) == 0) remove_tree(trash);
  else remove_tree(dir);
}

std::optional<std::string> KernelCache::lookup(const std::string& key) const {
  if (!is_hex_key(key)) throw_error<Error>("internal error: malformed cache key '", key, "'");
  std::string dir = entry_dir(key);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return std::nullopt;
  std::string why;
  if (validate(dir, key, &why)) return dir;
  if (std::getenv("TL_CACHE_VERBOSE"))
    std::fprintf(stderr, "[tilelang] discarding corrupt cache entry %s: %s\n", dir.c_str(), why.c_str());
  discard(dir);
  return std::nullopt;
}

std::string KernelCache::begin_write(const std::string& key) const {
  std::string staging_root = root_ + "/" + kLayoutVersion + "/staging";
  make_dirs(staging_root);
  std::string dir = staging_root + "/" + key.substr(0, 16) + "." + unique_suffix();
  if (::mkdir(dir.c_str(), 0755) != 0)
    throw_error<Error>("cannot create cache staging directory '", dir, "': ", std::strerror(errno));
  return dir;
}

std::string KernelCache::commit(const std::string& key, const std::string& staging) const {
  // The MANIFEST lists every regular file, sorted, and is written last.
  std::vector<std::string> names;
  for (auto& e : fs::directory_iterator(staging))
    if (e.is_regular_file() && e.path().filename() != kManifestName) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::ostringstream manifest;
  manifest << kManifestHeader << "\nkey " << key << "\n";
  for (auto& n : names) {
    std::string path = staging + "/" + n;
    manifest << "file " << sha256_file(path) << " " << fs::file_size(path) << " " << n << "\n";
  }
  manifest << "end\n";
  write_text_file(staging + "/" + kManifestName, manifest.str());

  std::string final_dir = entry_dir(key);
  make_dirs(fs::path(final_dir).parent_path().string());
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (::rename(staging.c_str(), final_dir.c_str()) == 0) return final_dir;
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST)
      throw_error<Error>("cannot move cache entry into '", final_dir, "': ", std::strerror(err));
    // Another writer got there first: use its entry when valid, else replace it.
    if (validate(final_dir, key)) {
      remove_tree(staging);
      return final_dir;
    }
    discard(final_dir);
  }
  throw_error<Error>("cannot commit cache entry '", final_dir, "' (concurrent writers keep replacing it)");
}

void KernelCache::abort(const std::string& staging) const { remove_tree(staging); }

size_t KernelCache::clear() const {
  std::string base = root_ + "/" + kLayoutVersion;
  size_t removed = 0;
  std::error_code ec;
  if (!fs::is_directory(base, ec)) return 0;
  for (auto& shard : fs::directory_iterator(base, ec)) {
    if (!shard.is_directory()) continue;
    if (shard.path().filename() == "staging") {
      remove_tree(shard.path().string());
      continue;
    }
    for (auto& entry : fs::directory_iterator(shard.path(), ec)) {
      discard(entry.path().string());
      ++removed;
    }
  }
  return removed;
}

}  // namespace tl
