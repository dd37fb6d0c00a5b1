// SHA-256 (FIPS 180-4), used for kernel-cache keys and the per-file checksums of cache entries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tl {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes the hash and returns it as 64 lowercase hex digits. The object is reset afterwards.
  std::string hex_digest();

 private:
  void compress(const uint8_t* block);
  void reset();
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);
// Hash of a file's contents; throws tl::Error when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace tl
