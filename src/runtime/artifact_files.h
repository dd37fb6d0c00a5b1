// The files of a compiled kernel, opened once and used only through their descriptors, and the
// ownership rules of the kernel cache.
//
// A cache entry is hashed from the same descriptors the loader then reads (dlopen of
// /proc/self/fd/N, pread of a cubin): nobody can swap a file between the check and the use. Only
// files and directories the current user owns and only it can write are trusted (docs/SECURITY.md).
#pragma once

#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

namespace tl {

class ArtifactFiles {
 public:
  ArtifactFiles() = default;
  explicit ArtifactFiles(std::string dir) : dir_(std::move(dir)) {}
  ArtifactFiles(ArtifactFiles&& other) noexcept;
  ArtifactFiles& operator=(ArtifactFiles&& other) noexcept;
  ArtifactFiles(const ArtifactFiles&) = delete;
  ArtifactFiles& operator=(const ArtifactFiles&) = delete;
  ~ArtifactFiles();

  // Where the files were opened (for messages and Kernel.artifact_dir; never reopened by path).
  const std::string& dir() const { return dir_; }
  bool has(const std::string& name) const { return fds_.count(name) != 0; }
  std::vector<std::string> names() const;
  // The descriptor of `name`; tl::Error naming the file when it is not part of the set.
  int fd(const std::string& name) const;
  // The whole file, read through its descriptor.
  std::string read(const std::string& name) const;
  // A path for the dynamic loader that resolves to exactly this descriptor's file: a symbolic link
  // to /proc/self/fd/N, under a name used once in the process, in a directory private to this load
  // (glibc's dlopen returns an already loaded library whose *name* matches, so /proc/self/fd/N
  // itself — descriptor numbers are reused — could hand back another kernel). Where /proc is not
  // mounted, the file's own path. The link and its directory are removed when the object is
  // destroyed (right after the load), so no process leaves a directory behind.
  class LoadPath {
   public:
    explicit LoadPath(std::string path, bool is_link) : path_(std::move(path)), is_link_(is_link) {}
    LoadPath(LoadPath&& o) noexcept : path_(std::move(o.path_)), is_link_(o.is_link_) { o.is_link_ = false; }
    LoadPath(const LoadPath&) = delete;
    ~LoadPath();
    const std::string& path() const { return path_; }

   private:
    std::string path_;
    bool is_link_;
  };
  LoadPath load_path(const std::string& name) const;
  // SHA-256 of the file's contents, read through its descriptor.
  std::string sha256(const std::string& name) const;

  // The directory the files now live in (after the directory was renamed).
  void set_dir(std::string dir) { dir_ = std::move(dir); }
  // Takes ownership of `fd` as file `name`.
  void add(const std::string& name, int fd);
  // Opens every regular file directly in `dir` (not following symbolic links): the artifacts a
  // build just wrote into a directory this process created.
  static ArtifactFiles open_all(const std::string& dir);

 private:
  std::string dir_;
  std::map<std::string, int> fds_;
};

// Why `st` must not be trusted as the current user's own file or directory, or "" when it may:
// owned by the effective user and writable by nobody else (group write is accepted only for a
// group with no other members, such as a user-private group).
std::string untrusted_reason(const struct stat& st);

// Why the cache root `root` (an existing directory) is not private to the current user, or "": the
// root must be owned by the user and writable by nobody else; every directory above it must be owned
// by the user or by root and writable by nobody else unless it is sticky (like /tmp).
std::string cache_root_problem(const std::string& root);

}  // namespace tl
