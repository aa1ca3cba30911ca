// The constexpr SHA-256 and base64 of the status page's CSP hashes (exporter/pages/csp_hash.h):
// the FIPS 180-4 examples, at compile time and at run time, and OpenSSL's SHA256 on every length
// around the block and padding boundaries.

#include "exporter/pages/csp_hash.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <string>

#include "exporter/pages/status_assets.h"

namespace fabricwatch::exporter::status {
namespace {

std::string Hex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::string B64(std::string_view text) {
  const Sha256Base64 b = Base64(Sha256(text));
  return std::string(b.data(), b.size());
}

// FIPS 180-4 / NIST CSHS example "abc", checked by the compiler.
static_assert(Sha256("abc")[0] == 0xba && Sha256("abc")[31] == 0xad);

TEST(CspHash, fips_examples) {
  EXPECT_EQ(Hex(Sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Hex(Sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(B64(""), "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

TEST(CspHash, agrees_with_openssl_on_every_length_up_to_three_blocks) {
  std::string text;
  for (size_t n = 0; n <= 200; ++n) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
    unsigned char base64[4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
    const int len = EVP_EncodeBlock(base64, digest, SHA256_DIGEST_LENGTH);
    EXPECT_EQ(B64(text), std::string(reinterpret_cast<const char*>(base64), len)) << "length " << n;
    text += static_cast<char>('a' + n % 26 + (n % 7 == 0 ? 128 : 0));  // high bytes too
  }
}

TEST(CspHash, the_policy_carries_the_hashes_of_the_shipped_style_and_script) {
  const std::string policy = StatusPagePolicy();
  EXPECT_NE(policy.find("style-src 'sha256-" + B64(kStatusStyle) + "'"), std::string::npos);
  EXPECT_NE(policy.find("script-src 'sha256-" + B64(kStatusScript) + "'"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::exporter::status
