#include "runtime/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
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
#include <map>
#include <mutex>
#include <set>
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

StagingDir::~StagingDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the flock
}

KernelCache::KernelCache(std::string root) {
  std::error_code ec;
  fs::path abs = fs::absolute(root, ec);
  root_ = ec ? root : abs.lexically_normal().string();
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

namespace {

}  // namespace

std::string KernelCache::private_fallback_root() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp && tmp[0] == '/' ? tmp : "/tmp";
  std::string dir = base + "/tilelang-cache-" + std::to_string(::geteuid());
  ::mkdir(dir.c_str(), 0700);
  struct stat st;
  if (::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 077) == 0)
    return dir;
  static const std::string fallback = make_temp_dir("tilelang-cache-" + std::to_string(::geteuid()) + "-");
  return fallback;
}

namespace {

std::string home_from_passwd() {
  struct passwd pw, *res = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &res) == 0 && res && res->pw_dir && res->pw_dir[0] == '/')
    return res->pw_dir;
  return "";
}

}  // namespace

std::string KernelCache::default_root() {
  if (const char* dir = std::getenv("TILELANG_CACHE_DIR"); dir && *dir) return KernelCache(dir).root();
  // XDG: relative paths in these variables are invalid and ignored.
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/') return std::string(xdg) + "/tilelang";
  if (const char* home = std::getenv("HOME"); home && home[0] == '/') return std::string(home) + "/.cache/tilelang";
  if (std::string home = home_from_passwd(); !home.empty()) return home + "/.cache/tilelang";
  return private_fallback_root();
}

bool KernelCache::disabled_by_env() { return env_true("TILELANG_DISABLE_CACHE"); }

std::string KernelCache::entry_dir(const std::string& key) const {
  return root_ + "/" + kLayoutVersion + "/" + key.substr(0, 2) + "/" + key;
}

std::string KernelCache::untrusted_root() const {
  static std::mutex mu;
  static std::map<std::string, std::string> checked;
  std::lock_guard<std::mutex> lock(mu);
  auto it = checked.find(root_);
  if (it != checked.end()) return it->second;
  struct stat st;
  if (::stat(root_.c_str(), &st) != 0) {
    // Created private; its parents as the user's umask says (they are checked below).
    std::error_code ec;
    fs::create_directories(fs::path(root_).parent_path(), ec);
    if (::mkdir(root_.c_str(), 0700) != 0 && errno != EEXIST)
      throw_error<Error>("cannot create the kernel cache directory '", root_, "': ", std::strerror(errno),
                         ". Set TILELANG_CACHE_DIR to a writable directory or TILELANG_DISABLE_CACHE=1");
  }
  if (::stat(root_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw_error<Error>("the kernel cache directory '", root_, "' is not a directory. Set TILELANG_CACHE_DIR to a "
                       "writable directory or TILELANG_DISABLE_CACHE=1");
  std::string why = cache_root_problem(root_);
  checked[root_] = why;
  return why;
}

std::string KernelCache::ensure_dir(const std::string& path) const {
  for (int attempt = 0; attempt < 3; ++attempt) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
      if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST)
        throw_error<Error>("cannot create cache directory '", path, "': ", std::strerror(errno),
                           ". Set TILELANG_CACHE_DIR to a writable directory or TILELANG_DISABLE_CACHE=1");
      continue;
    }
    if (S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
      if (!untrusted_reason(st).empty()) ::chmod(path.c_str(), 0755);  // ours, but left group/world-writable
      return path;
    }
    // A symbolic link, a file, or a directory of another user where our directory belongs: moved aside.
    std::string aside = path + ".untrusted." + unique_suffix();
    if (::rename(path.c_str(), aside.c_str()) != 0)
      throw_error<Error>("cannot move aside '", path, "' (not a directory of the current user): ", std::strerror(errno));
    if (std::getenv("TL_CACHE_VERBOSE"))
      std::fprintf(stderr, "[tilelang] moved aside %s: not a directory owned by the current user\n", path.c_str());
    remove_tree(aside);
  }
  throw_error<Error>("cannot create cache directory '", path, "' (it keeps being replaced)");
}

std::optional<ArtifactFiles> KernelCache::open_entry(const std::string& dir, const std::string& key,
                                                     const std::vector<std::string>& required, std::string* why) {
  auto fail = [&](const std::string& reason) -> std::optional<ArtifactFiles> {
    if (why) *why = reason;
    return std::nullopt;
  };
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (dfd < 0) return fail(std::string("cannot open the entry directory: ") + std::strerror(errno));
  ArtifactFiles files(dir);
  struct DirCloser {
    int fd;
    ~DirCloser() { ::close(fd); }
  } closer{dfd};
  struct stat st;
  if (::fstat(dfd, &st) != 0) return fail("cannot stat the entry directory");
  if (std::string u = untrusted_reason(st); !u.empty()) return fail("the entry directory is untrusted: " + u);

  // The MANIFEST, read through a descriptor like every file.
  // O_NONBLOCK: opening a FIFO (or a device) planted in the entry must not block; fstat then
  // refuses anything that is not a regular file.
  int mfd = ::openat(dfd, kManifestName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (mfd < 0) return fail("no MANIFEST");
  files.add(kManifestName, mfd);
  if (::fstat(mfd, &st) != 0 || !S_ISREG(st.st_mode)) return fail("MANIFEST is not a regular file");
  if (std::string u = untrusted_reason(st); !u.empty()) return fail("MANIFEST is untrusted: " + u);
  std::istringstream in(files.read(kManifestName));
  std::string line;
  if (!std::getline(in, line) || line != kManifestHeader) return fail("bad MANIFEST header");
  if (!std::getline(in, line) || line != "key " + key) return fail("MANIFEST is for another key");
  bool ended = false;
  std::set<std::string> listed;
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
    if (name.empty() || name == "." || name == ".." || name == kManifestName || name.find('/') != std::string::npos ||
        !listed.insert(name).second)
      return fail("bad file name in MANIFEST");
    int fd = ::openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return fail("missing file '" + name + "'");
    files.add(name, fd);
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return fail("'" + name + "' is not a regular file");
    if (std::string u = untrusted_reason(st); !u.empty()) return fail("'" + name + "' is untrusted: " + u);
    if (static_cast<uint64_t>(st.st_size) != size)
      return fail("file '" + name + "' has " + std::to_string(st.st_size) + " bytes, expected " + std::to_string(size));
    try {
      if (files.sha256(name) != digest) return fail("checksum mismatch for '" + name + "'");
    } catch (const Error& e) {
      return fail(e.what());
    }
  }
  if (!ended) return fail("MANIFEST is truncated");
  if (std::getline(in, line) || !in.eof()) return fail("MANIFEST has text after its 'end' line");
  if (listed.empty()) return fail("empty entry");
  for (const std::string& r : required)
    if (!listed.count(r)) return fail("MANIFEST does not list the required file '" + r + "'");
  // Nothing may be in the directory that the MANIFEST does not cover.
  int lfd = ::dup(dfd);
  DIR* d = lfd >= 0 ? ::fdopendir(lfd) : nullptr;
  if (!d) {
    if (lfd >= 0) ::close(lfd);
    return fail("cannot list the entry directory");
  }
  std::string extra;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == ".." || name == kManifestName || listed.count(name)) continue;
    extra = name;
    break;
  }
  ::closedir(d);
  if (!extra.empty()) return fail("'" + extra + "' is in the entry but not in its MANIFEST");
  return files;
}

void KernelCache::discard(const std::string& dir) const {
  // Move aside first (atomic), so a concurrent reader never sees a half-deleted entry.
  std::string staging = root_ + "/" + kLayoutVersion + "/staging";
  std::string trash = staging + "/trash." + unique_suffix();
  try {
    ensure_dir(root_ + "/" + kLayoutVersion);
    ensure_dir(staging);
  } catch (const Error&) {
  }
  if (::rename(dir.c_str(), trash.c_str()) == 0) remove_tree(trash);
  else remove_tree(dir);
}

std::optional<ArtifactFiles> KernelCache::lookup(const std::string& key, const std::vector<std::string>& required) const {
  if (!is_hex_key(key)) throw_error<Error>("internal error: malformed cache key '", key, "'");
  std::string dir = entry_dir(key);
  struct stat st;
  // Every directory between the (checked) root and the entry, top down: a real directory (not a
  // symbolic link) that the user owns and nobody else can write. Otherwise someone else could have
  // replaced what lies below it: the directory is moved aside (with every entry in it) and rebuilt.
  const std::string chain[] = {root_ + "/" + kLayoutVersion, root_ + "/" + kLayoutVersion + "/" + key.substr(0, 2)};
  for (const std::string& d : chain) {
    if (::lstat(d.c_str(), &st) != 0) return std::nullopt;
    std::string why = S_ISLNK(st.st_mode) ? "it is a symbolic link"
                      : !S_ISDIR(st.st_mode) ? "it is not a directory"
                                             : untrusted_reason(st);
    if (why.empty()) continue;
    if (std::getenv("TL_CACHE_VERBOSE"))
      std::fprintf(stderr, "[tilelang] moving aside cache directory %s: %s\n", d.c_str(), why.c_str());
    std::string aside = d + ".untrusted." + unique_suffix();
    if (::rename(d.c_str(), aside.c_str()) == 0) remove_tree(aside);  // a link: only the link goes
    return std::nullopt;
  }
  if (::lstat(dir.c_str(), &st) != 0) return std::nullopt;
  std::string why;
  if (auto files = open_entry(dir, key, required, &why)) return files;
  if (std::getenv("TL_CACHE_VERBOSE"))
    std::fprintf(stderr, "[tilelang] discarding invalid cache entry %s: %s\n", dir.c_str(), why.c_str());
  discard(dir);
  return std::nullopt;
}

StagingDir KernelCache::begin_write(const std::string& key) const {
  ensure_dir(root_ + "/" + kLayoutVersion);
  std::string staging_root = ensure_dir(root_ + "/" + kLayoutVersion + "/staging");
  collect_debris();
  std::string dir = staging_root + "/" + key.substr(0, 16) + "." + unique_suffix();
  if (::mkdir(dir.c_str(), 0700) != 0)
    throw_error<Error>("cannot create cache staging directory '", dir, "': ", std::strerror(errno));
  int lock = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (lock < 0 || ::flock(lock, LOCK_EX) != 0) {
    int err = errno;
    if (lock >= 0) ::close(lock);
    remove_tree(dir);
    throw_error<Error>("cannot lock cache staging directory '", dir, "': ", std::strerror(err));
  }
  return StagingDir(dir, lock);
}

ArtifactFiles KernelCache::commit(const std::string& key, StagingDir& staging,
                                  const std::vector<std::string>& required) const {
  // The MANIFEST lists every file, sorted, hashed through the descriptors the caller then loads.
  ArtifactFiles files = ArtifactFiles::open_all(staging.path());
  std::vector<std::string> names = files.names();
  names.erase(std::remove(names.begin(), names.end(), kManifestName), names.end());
  for (const std::string& r : required)
    if (!files.has(r)) throw_error<Error>("internal error: the build did not write '", r, "' into ", staging.path());
  std::ostringstream manifest;
  manifest << kManifestHeader << "\nkey " << key << "\n";
  for (auto& n : names) {
    struct stat st;
    if (::fstat(files.fd(n), &st) != 0) throw_error<Error>("cannot stat '", staging.path(), "/", n, "'");
    ::fchmod(files.fd(n), 0644);  // whatever the umask or the compiler gave it: only we may write
    manifest << "file " << files.sha256(n) << " " << st.st_size << " " << n << "\n";
  }
  manifest << "end\n";
  write_text_file(staging.path() + "/" + kManifestName, manifest.str());
  ::chmod((staging.path() + "/" + kManifestName).c_str(), 0644);
  ::chmod(staging.path().c_str(), 0755);

  std::string final_dir = entry_dir(key);
  ensure_dir(fs::path(final_dir).parent_path().string());
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (::rename(staging.path().c_str(), final_dir.c_str()) == 0) {
      files.set_dir(final_dir);
      return files;
    }
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST && err != ENOTDIR && err != EISDIR)
      throw_error<Error>("cannot move cache entry into '", final_dir, "': ", std::strerror(err));
    // Another writer got there first: use its entry when valid, else replace it (whatever it is).
    if (auto winner = open_entry(final_dir, key, required)) {
      remove_tree(staging.path());
      return std::move(*winner);
    }
    discard(final_dir);
  }
  throw_error<Error>("cannot commit cache entry '", final_dir, "' (concurrent writers keep replacing it)");
}

void KernelCache::abort(StagingDir& staging) const { remove_tree(staging.path()); }

size_t KernelCache::collect_debris() const {
  std::string staging = root_ + "/" + kLayoutVersion + "/staging";
  std::error_code ec;
  struct stat st;
  if (::lstat(staging.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  size_t removed = 0;
  const auto now = std::chrono::system_clock::now();
  std::vector<std::string> names;
  for (auto it = fs::directory_iterator(staging, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    names.push_back(it->path().filename().string());
  for (const std::string& name : names) {
    std::string path = staging + "/" + name;
    if (name.rfind("trash.", 0) == 0) {  // moved aside to be deleted: whoever deletes it, it goes
      remove_tree(path);
      ++removed;
      continue;
    }
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {  // not a directory: nothing of ours writes here
      remove_tree(path);
      ++removed;
      continue;
    }
    // A writer holds its staging directory's lock until commit or abort; the age test covers the
    // moment between its mkdir and its flock.
    bool stale = ::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::fstat(fd, &st) == 0 &&
                 now - std::chrono::system_clock::from_time_t(st.st_mtime) > std::chrono::seconds(10);
    if (stale) {
      remove_tree(path);
      ++removed;
    }
    ::close(fd);
  }
  return removed;
}

size_t KernelCache::clear() const {
  std::string base = root_ + "/" + kLayoutVersion;
  size_t removed = 0;
  std::error_code ec;
  struct stat st;
  if (::lstat(base.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  std::vector<std::string> shards;
  for (auto it = fs::directory_iterator(base, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name != "staging") shards.push_back(it->path().string());
  }
  for (const std::string& shard : shards) {
    if (::lstat(shard.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      discard(shard);
      continue;
    }
    std::vector<std::string> entries;
    for (auto it = fs::directory_iterator(shard, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
      entries.push_back(it->path().string());
    for (const std::string& e : entries) {
      discard(e);
      ++removed;
    }
  }
  collect_debris();
  return removed;
}

}  // namespace tl
