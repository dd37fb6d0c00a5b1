// The on-disk kernel cache.
//
// Layout under the root ($TILELANG_CACHE_DIR, default ~/.cache/tilelang):
//     v1/<key[0:2]>/<key>/          one entry: artifact files + MANIFEST
//     v1/staging/<key>.<pid>.<n>/   entries being written
// An entry is built in a staging directory, its MANIFEST (per-file size and SHA-256) is written
// last, and the directory is renamed into place: readers see a whole entry or none. A reader
// re-hashes every file against the MANIFEST before using an entry; a corrupt or truncated entry
// is moved aside and deleted, and the caller rebuilds it. Concurrent writers of the same key
// race on the rename; the loser discards its copy and uses the winner's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

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

class KernelCache {
 public:
  explicit KernelCache(std::string root);
  // The root from the environment: $TILELANG_CACHE_DIR, else $HOME/.cache/tilelang.
  static std::string default_root();
  // True when TILELANG_DISABLE_CACHE is set to a true value (1, true, yes, on).
  static bool disabled_by_env();

  const std::string& root() const { return root_; }
  std::string entry_dir(const std::string& key) const;

  // The directory of a valid entry for `key`, or nullopt. An invalid entry is discarded.
  std::optional<std::string> lookup(const std::string& key) const;

  // Creates a fresh, empty staging directory for `key` and returns its path.
  std::string begin_write(const std::string& key) const;
  // Writes the MANIFEST over every regular file in `staging` and moves it into place.
  // Returns the entry directory (ours, or an identical valid entry another writer committed first).
  std::string commit(const std::string& key, const std::string& staging) const;
  // Removes a staging directory after a failed build.
  void abort(const std::string& staging) const;

  // Removes every entry (and staging leftovers). Returns the number of entries removed.
  size_t clear() const;

  // Checks an entry directory against its MANIFEST. On failure, `why` says what is wrong.
  static bool validate(const std::string& dir, const std::string& key, std::string* why = nullptr);

 private:
  void discard(const std::string& dir) const;
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
