#pragma once
// SHA-256 (FIPS 180-4 §6.2) and base64 (RFC 4648 §4) as constexpr functions, so that the status
// page's Content-Security-Policy hashes (status_assets.h) are computed by the compiler: the agent
// then calls no OpenSSL at start (issue 40 item 2), and the hashes cannot drift from the bytes
// they allow, because they are computed from the same constants. Tests compare with OpenSSL's
// SHA256 and the FIPS 180-4 examples (tests/unit/exporter/pages/csp_hash_test.cc).
//
// Not for anything secret or large: a plain, byte-at-a-time implementation.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace fabricwatch::exporter::status {

inline constexpr size_t kSha256Bytes = 32;
using Sha256Digest = std::array<uint8_t, kSha256Bytes>;

namespace csp_detail {

inline constexpr std::array<uint32_t, 64> kRoundConstants = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t Rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into `h` (FIPS 180-4 §6.2.2).
constexpr void Compress(std::array<uint32_t, 8>& h, const std::array<uint8_t, 64>& block) {
  std::array<uint32_t, 64> w{};
  for (int t = 0; t < 16; ++t) {
    w[t] = uint32_t{block[4 * t]} << 24 | uint32_t{block[4 * t + 1]} << 16 |
           uint32_t{block[4 * t + 2]} << 8 | uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    const uint32_t s0 = Rotr(w[t - 15], 7) ^ Rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    const uint32_t s1 = Rotr(w[t - 2], 17) ^ Rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  std::array<uint32_t, 8> v = h;
  for (int t = 0; t < 64; ++t) {
    const uint32_t e = v[4], a = v[0];
    const uint32_t t1 = v[7] + (Rotr(e, 6) ^ Rotr(e, 11) ^ Rotr(e, 25)) +
                        ((e & v[5]) ^ (~e & v[6])) + kRoundConstants[t] + w[t];
    const uint32_t t2 =
        (Rotr(a, 2) ^ Rotr(a, 13) ^ Rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
    v = {t1 + t2, a, v[1], v[2], v[3] + t1, e, v[5], v[6]};
  }
  for (int i = 0; i < 8; ++i) h[i] += v[i];
}

}  // namespace csp_detail

constexpr Sha256Digest Sha256(std::string_view text) {
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<uint8_t, 64> block{};
  size_t used = 0;
  auto push = [&](uint8_t byte) {
    block[used++] = byte;
    if (used == block.size()) {
      csp_detail::Compress(h, block);
      used = 0;
    }
  };
  for (const char c : text) push(static_cast<uint8_t>(c));
  // Padding (§5.1.1): 0x80, zeros up to 56 mod 64, the length in bits as 64-bit big-endian.
  push(0x80);
  while (used != 56) push(0);
  const uint64_t bits = uint64_t{text.size()} * 8;
  for (int shift = 56; shift >= 0; shift -= 8) push(static_cast<uint8_t>(bits >> shift));
  Sha256Digest digest{};
  for (size_t i = 0; i < 8; ++i) {
    for (size_t j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<uint8_t>(h[i] >> (24 - 8 * j));
  }
  return digest;
}

// Base64 of a digest: 44 characters, one '=' of padding (32 bytes = 10 groups of 3 and 2 left).
inline constexpr size_t kSha256Base64Chars = 4 * ((kSha256Bytes + 2) / 3);
using Sha256Base64 = std::array<char, kSha256Base64Chars>;

constexpr Sha256Base64 Base64(const Sha256Digest& digest) {
  constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  Sha256Base64 out{};
  size_t o = 0;
  for (size_t i = 0; i < digest.size(); i += 3) {
    const size_t left = digest.size() - i;
    const uint32_t group = uint32_t{digest[i]} << 16 |
                           (left > 1 ? uint32_t{digest[i + 1]} << 8 : 0) |
                           (left > 2 ? uint32_t{digest[i + 2]} : 0);
    out[o++] = kAlphabet[(group >> 18) & 63];
    out[o++] = kAlphabet[(group >> 12) & 63];
    out[o++] = left > 1 ? kAlphabet[(group >> 6) & 63] : '=';
    out[o++] = left > 2 ? kAlphabet[group & 63] : '=';
  }
  return out;
}

}  // namespace fabricwatch::exporter::status
