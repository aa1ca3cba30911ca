#pragma once
// Per-source-address bounds of the HTTP server (issue 39 items 3 and 9): the peer key a
// connection is counted under, the connections each key holds, and the failed-login limit.
// Event-loop only: none of this is thread-safe.

#include <sys/socket.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

namespace fabricwatch::exporter {

// The key a peer is counted under: its IPv4 address (an IPv4-mapped IPv6 address counts as the
// IPv4 one), or its IPv6 /64 — one host commonly holds a whole /64 (SLAAC, privacy addresses),
// so a finer key would give one attacker 2^64 quotas. "" for anything else (never limited).
std::string PeerKey(const sockaddr_storage& address, socklen_t length);
// For log lines: "10.0.0.7", "2001:db8:1:2::/64".
std::string PeerKeyText(const std::string& key);

// Open connections per peer key.
class PeerConnections {
 public:
  size_t count(const std::string& key) const;
  void Add(const std::string& key);
  void Remove(const std::string& key);
  size_t keys() const { return counts_.size(); }

 private:
  std::unordered_map<std::string, size_t> counts_;
};

// Failed basic-auth logins per peer key, a token bucket per key: `burst` password checks
// (bcrypt) in a row, then one more per `refill`. A check takes a token when it starts and gives
// it back when the password was right, so only failures (and checks in flight) count, and a
// flood of concurrent wrong passwords cannot run more than `burst` bcrypts before the first
// fails. A key without a token is answered 429 without a check until one refills.
class AuthFailureLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  AuthFailureLimiter(size_t burst, std::chrono::milliseconds refill, size_t max_keys = 16384);

  // Takes a token for a password check of `key`; false (and `retry_after` set) when none is
  // left. `burst` 0 disables the limit (always true).
  bool TryTake(const std::string& key, Clock::time_point now, std::chrono::seconds& retry_after);
  // The check of `key` succeeded: the token goes back.
  void Refund(const std::string& key, Clock::time_point now);
  size_t keys() const { return buckets_.size(); }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point updated;
  };
  void Refill(Bucket& bucket, Clock::time_point now) const;
  void Prune(Clock::time_point now);

  size_t burst_;
  std::chrono::milliseconds refill_;
  size_t max_keys_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace fabricwatch::exporter
