#include "runtime/sha256.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "ir/error.h"

namespace tl {

// FIPS 180-4 / NIST example vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                       "mnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Padding boundaries: lengths around 55/56/64 bytes take different padding paths.
TEST(Sha256, IncrementalMatchesOneShotAtEverySplit) {
  std::string msg;
  for (int i = 0; i < 200; ++i) msg.push_back(static_cast<char>((i * 37 + 11) & 0xff));
  for (size_t len : {0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 128, 200}) {
    std::string m = msg.substr(0, len);
    std::string whole = sha256_hex(m);
    for (size_t split = 0; split <= len; split += 7) {
      Sha256 h;
      h.update(m.substr(0, split));
      h.update(m.substr(split));
      EXPECT_EQ(h.hex_digest(), whole) << "len " << len << " split " << split;
    }
  }
  // Reuse after hex_digest starts over.
  Sha256 h;
  h.update("junk");
  h.hex_digest();
  h.update("abc");
  EXPECT_EQ(h.hex_digest(), sha256_hex("abc"));
}

TEST(Sha256, File) {
  std::string path = ::testing::TempDir() + "/tl_sha_file.bin";
  {
    std::ofstream out(path, std::ios::binary);
    out << std::string(100000, 'x');
  }
  EXPECT_EQ(sha256_file(path), sha256_hex(std::string(100000, 'x')));
  std::remove(path.c_str());
  EXPECT_THROW(sha256_file(path), Error);
}

}  // namespace tl
