// The on-disk kernel cache.
//
// Layout under the root ($TILELANG_CACHE_DIR, default ~/.cache/tilelang):
//     v1/<key[0:2]>/<key>/          one entry: artifact files + MANIFEST
//     v1/staging/<key>.<pid>.<n>/   entries being written (each locked by its writer: flock)
//     v1/staging/trash.*            entries being deleted
// An entry is built in a staging directory, its MANIFEST (per-file size and SHA-256) is written
// last, and the directory is renamed into place: readers see a whole entry or none. Concurrent
// writers of the same key race on the rename; the loser discards its copy and uses the winner's.
//
// Trust (docs/SECURITY.md): the cache is used only when its root is private to the current user
// (cache_root_problem); an entry is used only when it is a real directory the user owns and only it
// can write, its MANIFEST lists exactly the files present (no more, no fewer, the backend's
// required artifacts among them), and every file — a regular file the user owns — matches its
// size and hash. The files are hashed through descriptors that are then handed to the loader
// (ArtifactFiles), so what was checked is what runs. Anything else is discarded and rebuilt.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/artifact_files.h"

namespace tl {

// The parts of a cache key. Each is hashed length-prefixed, so no two different part lists
// give the same key.
struct CacheKeyParts {
  std::string ir_text;           // canonical (alpha-renamed) text of the input PrimFunc
  std::string target;            // Target::str()
  std::string pass_configs;      // normalized "key=value" lines
  std::string compile_flags;     // user compile flags, one per line
  std::string compiler_version;  // tilelang build identity + the system/device compiler's version
};
std::string make_cache_key(const CacheKeyParts& parts);

// A staging directory being written, locked (flock) by this process for as long as the object
// lives, so that no other process collects it as debris.
class StagingDir {
 public:
  StagingDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  StagingDir(StagingDir&& o) noexcept : path_(std::move(o.path_)), lock_fd_(o.lock_fd_) { o.lock_fd_ = -1; }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  ~StagingDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int lock_fd_ = -1;
};

class KernelCache {
 public:
  // `root` is made absolute (a relative root never reaches a compiler command line as an option).
  explicit KernelCache(std::string root);
  // The root from the environment: $TILELANG_CACHE_DIR, else $XDG_CACHE_HOME/tilelang, else
  // $HOME/.cache/tilelang, else the password database's home directory, else a directory private
  // to the user under $TMPDIR or /tmp (created 0700 and checked; a fresh mkdtemp one when the
  // per-user name is taken by someone else).
  static std::string default_root();
  // The root when no home directory is known: $TMPDIR (or /tmp)/tilelang-cache-<uid>, created 0700
  // and used only when it is a real directory the user owns that nobody else can enter; otherwise
  // (someone else took the name first) a fresh mkdtemp directory, private but not shared between
  // processes.
  static std::string private_fallback_root();
  // True when TILELANG_DISABLE_CACHE is set to a true value (1, true, yes, on).
  static bool disabled_by_env();

  const std::string& root() const { return root_; }
  std::string entry_dir(const std::string& key) const;

  // Why this cache must not be used ("" when it may): the root (created 0700 when missing) is not
  // private to the current user. Checked once per root and process. A root that cannot be created
  // or is not a directory is a tl::Error naming TILELANG_CACHE_DIR.
  std::string untrusted_root() const;

  // The verified files of the entry for `key` (see the trust rules above), `required` among them;
  // nullopt when there is none. An invalid entry is discarded.
  std::optional<ArtifactFiles> lookup(const std::string& key, const std::vector<std::string>& required = {}) const;

  // Creates a fresh, empty, locked staging directory for `key`. Collects debris of dead writers.
  StagingDir begin_write(const std::string& key) const;
  // Writes the MANIFEST over every file of `staging` (hashed through the descriptors it returns),
  // makes the files read-only to others and moves the directory into place. Returns the committed
  // entry's files: ours, or those of a valid entry another writer committed first.
  ArtifactFiles commit(const std::string& key, StagingDir& staging,
                       const std::vector<std::string>& required = {}) const;
  // Removes a staging directory after a failed build.
  void abort(StagingDir& staging) const;

  // Removes every entry and the staging debris of dead writers; staging directories of builds in
  // progress (in any process) are left alone. Returns the number of entries removed.
  size_t clear() const;
  // Removes staging directories no live writer holds (a process killed mid-compile) and trash.
  // Returns how many were removed.
  size_t collect_debris() const;

  // Opens and checks the entry directory `dir` for `key` against its MANIFEST. On failure, `why`
  // says what is wrong and nullopt is returned.
  static std::optional<ArtifactFiles> open_entry(const std::string& dir, const std::string& key,
                                                 const std::vector<std::string>& required = {},
                                                 std::string* why = nullptr);

 private:
  void discard(const std::string& dir) const;
  std::string ensure_dir(const std::string& path) const;  // a real, private directory (fixed or moved aside)
  std::string root_;
};

// Filesystem helpers shared with the backends.
void write_text_file(const std::string& path, const std::string& text);
std::string read_text_file(const std::string& path);
void remove_tree(const std::string& path);  // rm -rf, best effort
void make_dirs(const std::string& path);    // mkdir -p; throws tl::Error on failure
// A new private temporary directory (mkdtemp under $TMPDIR or /tmp).
std::string make_temp_dir(const std::string& prefix);

}  // namespace tl
