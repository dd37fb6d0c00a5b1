#include "runtime/artifact_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "ir/error.h"
#include "runtime/sha256.h"

namespace tl {

namespace fs = std::filesystem;

ArtifactFiles::ArtifactFiles(ArtifactFiles&& other) noexcept : dir_(std::move(other.dir_)), fds_(std::move(other.fds_)) {
  other.fds_.clear();
}

ArtifactFiles& ArtifactFiles::operator=(ArtifactFiles&& other) noexcept {
  if (this != &other) {
    for (auto& [name, fd] : fds_) ::close(fd);
    dir_ = std::move(other.dir_);
    fds_ = std::move(other.fds_);
    other.fds_.clear();
  }
  return *this;
}

ArtifactFiles::~ArtifactFiles() {
  for (auto& [name, fd] : fds_) ::close(fd);
}

std::vector<std::string> ArtifactFiles::names() const {
  std::vector<std::string> out;
  for (auto& [name, fd] : fds_) out.push_back(name);
  return out;
}

int ArtifactFiles::fd(const std::string& name) const {
  auto it = fds_.find(name);
  if (it == fds_.end()) throw_error<Error>("kernel artifact '", name, "' is missing from '", dir_, "'");
  return it->second;
}

std::string ArtifactFiles::read(const std::string& name) const {
  int f = fd(name);
  std::string out;
  char chunk[65536];
  for (off_t pos = 0;;) {
    ssize_t got = ::pread(f, chunk, sizeof chunk, pos);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_error<Error>("cannot read kernel artifact '", dir_, "/", name, "': ", std::strerror(errno));
    if (got == 0) break;
    out.append(chunk, static_cast<size_t>(got));
    pos += got;
  }
  return out;
}

std::string ArtifactFiles::sha256(const std::string& name) const {
  int f = fd(name);
  Sha256 h;
  char chunk[65536];
  for (off_t pos = 0;;) {
    ssize_t got = ::pread(f, chunk, sizeof chunk, pos);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw_error<Error>("cannot read kernel artifact '", dir_, "/", name, "': ", std::strerror(errno));
    if (got == 0) break;
    h.update(chunk, static_cast<size_t>(got));
    pos += got;
  }
  return h.hex_digest();
}

ArtifactFiles::LoadPath::~LoadPath() {
  if (!is_link_) return;
  ::unlink(path_.c_str());
  ::rmdir(fs::path(path_).parent_path().c_str());  // the load's private directory: nothing is left behind
}

ArtifactFiles::LoadPath ArtifactFiles::load_path(const std::string& name) const {
  static std::atomic<uint64_t> counter{0};
  int f = fd(name);
  std::string proc = "/proc/self/fd/" + std::to_string(f);
  struct stat by_fd, by_proc;
  bool proc_ok = ::fstat(f, &by_fd) == 0 && ::stat(proc.c_str(), &by_proc) == 0 && by_fd.st_ino == by_proc.st_ino &&
                 by_fd.st_dev == by_proc.st_dev;
  if (proc_ok) {
    // A directory private to this load (mkdtemp: 0700), removed with the link as soon as the library
    // is loaded. The link's name is unique in the process (pid + counter) even if a later mkdtemp
    // reuses the directory's name: glibc matches loaded libraries by name.
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && tmp[0] == '/' ? tmp : "/tmp") + "/tilelang-load-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data())) {
      std::string dir(buf.data());
      std::string link = dir + "/" + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)) + "." + name;
      if (::symlink(proc.c_str(), link.c_str()) == 0) return LoadPath(link, true);
      ::rmdir(dir.c_str());
    }
  }
  return LoadPath(dir_ + "/" + name, false);  // no /proc: the path the descriptor was opened from
}

void ArtifactFiles::add(const std::string& name, int fd) {
  auto it = fds_.find(name);
  if (it != fds_.end()) ::close(it->second);
  fds_[name] = fd;
}

ArtifactFiles ArtifactFiles::open_all(const std::string& dir) {
  ArtifactFiles files(dir);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) throw_error<Error>("cannot open kernel artifact directory '", dir, "': ", std::strerror(errno));
  DIR* d = ::fdopendir(dfd);
  if (!d) {
    ::close(dfd);
    throw_error<Error>("cannot list kernel artifact directory '", dir, "': ", std::strerror(errno));
  }
  std::string error;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    int f = ::openat(dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);  // a FIFO never blocks
    if (f < 0) {
      error = "cannot open kernel artifact '" + dir + "/" + name + "': " + std::strerror(errno);
      break;
    }
    struct stat st;
    if (::fstat(f, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(f);
      continue;  // subdirectories are not artifacts
    }
    files.add(name, f);
  }
  ::closedir(d);
  if (!error.empty()) throw Error(error);
  return files;
}

namespace {

// A group nobody but the current user belongs to (a user-private group): its write bit grants
// nothing to anyone else.
bool group_is_private(gid_t gid) {
  if (gid != ::getegid()) return false;
  struct group gr, *res = nullptr;
  std::vector<char> buf(16384);
  if (::getgrgid_r(gid, &gr, buf.data(), buf.size(), &res) != 0 || !res) return false;
  struct passwd pw, *pres = nullptr;
  std::vector<char> pbuf(16384);
  std::string me;
  if (::getpwuid_r(::geteuid(), &pw, pbuf.data(), pbuf.size(), &pres) == 0 && pres) me = pres->pw_name;
  for (char** m = res->gr_mem; m && *m; ++m)
    if (me.empty() || me != *m) return false;
  return true;
}

std::string mode_text(mode_t m) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

}  // namespace

std::string untrusted_reason(const struct stat& st) {
  if (st.st_uid != ::geteuid())
    return "it is owned by uid " + std::to_string(st.st_uid) + ", not by the current user (uid " +
           std::to_string(::geteuid()) + ")";
  if (st.st_mode & S_IWOTH) return "it is writable by every user (mode " + mode_text(st.st_mode) + ")";
  if ((st.st_mode & S_IWGRP) && !group_is_private(st.st_gid))
    return "it is writable by group " + std::to_string(st.st_gid) + " (mode " + mode_text(st.st_mode) + ")";
  return "";
}

std::string cache_root_problem(const std::string& root) {
  std::error_code ec;
  fs::path real = fs::canonical(root, ec);
  if (ec) return "cannot resolve '" + root + "': " + ec.message();
  struct stat st;
  if (::stat(real.c_str(), &st) != 0) return "cannot stat '" + real.string() + "': " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "'" + real.string() + "' is not a directory";
  if (std::string why = untrusted_reason(st); !why.empty()) return "'" + real.string() + "': " + why;
  for (fs::path p = real.parent_path(); !p.empty(); p = p.parent_path()) {
    if (::stat(p.c_str(), &st) != 0) return "cannot stat '" + p.string() + "': " + std::strerror(errno);
    bool sticky = st.st_mode & S_ISVTX;
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
      return "its parent '" + p.string() + "' is owned by uid " + std::to_string(st.st_uid) +
             ", who could replace the cache";
    if (!sticky && (st.st_mode & S_IWOTH))
      return "its parent '" + p.string() + "' is writable by every user (mode " + mode_text(st.st_mode) + ")";
    if (!sticky && (st.st_mode & S_IWGRP) && !group_is_private(st.st_gid))
      return "its parent '" + p.string() + "' is writable by group " + std::to_string(st.st_gid) + " (mode " +
             mode_text(st.st_mode) + ")";
    if (p == p.root_path()) break;
  }
  return "";
}

}  // namespace tl
