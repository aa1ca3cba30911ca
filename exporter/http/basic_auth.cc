#include "exporter/http/basic_auth.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "exporter/http/web_config.h"

namespace fabricwatch::exporter {
namespace {

// Strict standard base64 (RFC 4648 §4, with padding), as Go's base64.StdEncoding that
// net/http's Request.BasicAuth uses.
std::optional<std::string> DecodeBase64(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    const int pad = last ? (in[i + 3] == '=') + (in[i + 2] == '=') : 0;
    if (pad == 1 && in[i + 2] == '=') return std::nullopt;  // "x=y=" is not padding
    uint32_t bits = 0;
    for (int k = 0; k < 4 - pad; ++k) {
      const int v = value(in[i + k]);
      if (v < 0) return std::nullopt;
      bits |= static_cast<uint32_t>(v) << (18 - 6 * k);
    }
    out.push_back(static_cast<char>(bits >> 16));
    if (pad < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

std::atomic<uint64_t> bcrypt_runs_total{0};

}  // namespace

uint64_t BcryptRunsTotal() { return bcrypt_runs_total.load(); }

std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header) {
  // The scheme is case-insensitive (RFC 7617 §2; Go compares with EqualFold).
  constexpr std::string_view kScheme = "basic ";
  if (header.size() < kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(header[i])) != kScheme[i]) return std::nullopt;
  }
  auto decoded = DecodeBase64(header.substr(kScheme.size()));
  if (!decoded) return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  BasicCredentials credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
  // crypt() takes a C string: a NUL would end the password early and let a prefix match.
  if (credentials.password.find('\0') != std::string::npos) return std::nullopt;
  return credentials;
}

BasicAuth::BasicAuth(std::map<std::string, std::string, std::less<>> users)
    : users_(std::move(users)) {
  // The median configured cost (basic_auth.h): an unknown user costs what a typical known one
  // does (exporter-toolkit's dummy hash is always cost 10). The lower middle of an even count,
  // so the bound never exceeds the median.
  std::vector<int> costs;
  for (const auto& [user, hash] : users_) costs.push_back(BcryptCost(hash));
  if (!costs.empty()) {
    std::nth_element(costs.begin(), costs.begin() + (costs.size() - 1) / 2, costs.end());
    dummy_cost_ = std::max(4, costs[(costs.size() - 1) / 2]);
  }
  const int cost = dummy_cost_;
  // A fixed salt: the dummy result is never compared with anything, only its cost matters.
  dummy_setting_ =
      "$2b$" + std::string(cost < 10 ? "0" : "") + std::to_string(cost) + "$fabricwatchdummysalt..";
}

std::string BasicAuth::CacheKey(const BasicCredentials& credentials, std::string_view hash) const {
  // Length-prefixed fields, so ("ab", "c") and ("a", "bc") differ.
  std::string input;
  for (std::string_view part :
       {std::string_view(credentials.user), hash, std::string_view(credentials.password)}) {
    input += std::to_string(part.size()) + ":";
    input += part;
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_Digest(input.data(), input.size(), digest.data(), &length, EVP_sha256(), nullptr);
  OPENSSL_cleanse(input.data(), input.size());
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

bool BasicAuth::Bcrypt(std::string_view password, std::string_view setting_or_hash) const {
  bcrypt_runs_.fetch_add(1);
  bcrypt_runs_total.fetch_add(1);
  // crypt_data is ~32 KB: on the heap, one per call, so concurrent checks share nothing.
  auto data = std::make_unique<crypt_data>();
  const std::string pw(password), setting(setting_or_hash);
  const char* out = crypt_rn(pw.c_str(), setting.c_str(), data.get(), sizeof(*data));
  const bool match = out != nullptr && std::string_view(out).size() == setting.size() &&
                     CRYPTO_memcmp(out, setting.data(), setting.size()) == 0;
  OPENSSL_cleanse(data.get(), sizeof(*data));
  return match;
}

BasicAuth::Cached BasicAuth::CheckCached(std::string_view authorization_header) const {
  auto credentials = ParseBasicAuthorization(authorization_header);
  if (!credentials) return Cached::kDenied;
  auto user = users_.find(credentials->user);
  if (user == users_.end()) return Cached::kUnknown;  // CheckSlow pays the dummy bcrypt
  const std::string key = CacheKey(*credentials, user->second);
  std::lock_guard lock(mutex_);
  return cache_.contains(key) ? Cached::kAllowed : Cached::kUnknown;
}

bool BasicAuth::CheckSlow(std::string_view authorization_header) const {
  auto credentials = ParseBasicAuthorization(authorization_header);
  if (!credentials) return false;
  auto user = users_.find(credentials->user);
  if (user == users_.end()) {
    Bcrypt(credentials->password, dummy_setting_);
    return false;
  }
  const std::string key = CacheKey(*credentials, user->second);
  {
    std::lock_guard lock(mutex_);
    if (cache_.contains(key)) return true;
  }
  if (!Bcrypt(credentials->password, user->second)) return false;
  std::lock_guard lock(mutex_);
  if (cache_.size() >= kCacheSize) {
    // Drop a tenth (exporter-toolkit web/cache.go makeRoom); which ones does not matter.
    for (size_t n = std::max<size_t>(cache_.size() / 10, 1); n > 0 && !cache_.empty(); --n) {
      cache_.erase(cache_.begin());
    }
  }
  cache_.insert(key);
  return true;
}

}  // namespace fabricwatch::exporter
