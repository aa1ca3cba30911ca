#pragma once
// BasicAuth: HTTP basic authentication (RFC 7617) against basic_auth_users' bcrypt hashes, the
// way exporter-toolkit's web/handler.go does it, with libxcrypt's crypt_rn doing the bcrypt.
//
// A bcrypt check costs ~50 ms at cost 10, so successes are cached: the key is a SHA-256 of the
// user, the stored hash and the password (exporter-toolkit keys its cache on the same three), so
// a changed hash or password never hits an old entry and the cache holds no password. Failures
// are not cached. An unknown user is checked against a dummy setting at the median cost of the
// configured users (exporter-toolkit uses a fixed cost-10 dummy), so the time to a 401 does
// not tell which of the usual user names exist; not at the highest, so one user at cost 14
// (~1 s) does not make every guessed user name cost a bcrypt thread a second (issue 39 item 9).
//
// Thread-safety: all members may be called concurrently.

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace fabricwatch::exporter {

// "Basic <base64(user:password)>" -> user and password; nullopt when malformed (wrong scheme,
// bad base64, no colon, a NUL in the password, which crypt() would cut at).
struct BasicCredentials {
  std::string user;
  std::string password;
};
std::optional<BasicCredentials> ParseBasicAuthorization(std::string_view header);

// bcrypt computations run by every BasicAuth of the process since start (across web-config
// generations): the fabricwatch_http_bcrypt_runs_total self-metric.
uint64_t BcryptRunsTotal();

class BasicAuth {
 public:
  // `users`: user -> bcrypt hash, validated by ValidateBcryptHash (web_config.h).
  explicit BasicAuth(std::map<std::string, std::string, std::less<>> users);

  enum class Cached { kAllowed, kDenied, kUnknown };
  // Never runs bcrypt. kDenied: a missing or malformed header. kUnknown: not in the cache.
  Cached CheckCached(std::string_view authorization_header) const;
  // Runs bcrypt (unless cached) and caches a success.
  bool CheckSlow(std::string_view authorization_header) const;

  uint64_t bcrypt_runs() const { return bcrypt_runs_.load(); }
  // The bcrypt cost an unknown user is checked at: the configured users' median (the lower
  // middle of an even count), at least 4.
  int dummy_cost() const { return dummy_cost_; }
  size_t cached() const {
    std::lock_guard lock(mutex_);
    return cache_.size();
  }

  // How many successes the cache keeps; past it, a tenth is dropped (exporter-toolkit: 100).
  static constexpr size_t kCacheSize = 100;

 private:
  std::string CacheKey(const BasicCredentials& credentials, std::string_view hash) const;
  bool Bcrypt(std::string_view password, std::string_view setting_or_hash) const;

  std::map<std::string, std::string, std::less<>> users_;
  int dummy_cost_ = 4;
  std::string dummy_setting_;  // bcrypt setting for unknown users, at dummy_cost_
  mutable std::mutex mutex_;
  mutable std::unordered_set<std::string> cache_;  // SHA-256 digests of successes
  mutable std::atomic<uint64_t> bcrypt_runs_{0};
};

}  // namespace fabricwatch::exporter
