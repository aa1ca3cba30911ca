#include "exporter/http/peer_limits.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fabricwatch::exporter {

std::string PeerKey(const sockaddr_storage& address, socklen_t length) {
  if (address.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    return std::string(reinterpret_cast<const char*>(&in->sin_addr), 4);
  }
  if (address.ss_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
    const auto* bytes = reinterpret_cast<const char*>(&in6->sin6_addr);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) return std::string(bytes + 12, 4);
    return std::string(bytes, 8);  // the /64
  }
  return "";
}

std::string PeerKeyText(const std::string& key) {
  char text[INET6_ADDRSTRLEN] = "";
  if (key.size() == 4) {
    inet_ntop(AF_INET, key.data(), text, sizeof(text));
    return text;
  }
  if (key.size() == 8) {
    in6_addr address{};
    std::memcpy(&address, key.data(), 8);
    inet_ntop(AF_INET6, &address, text, sizeof(text));
    return std::string(text) + "/64";
  }
  return "-";
}

size_t PeerConnections::count(const std::string& key) const {
  auto it = counts_.find(key);
  return it == counts_.end() ? 0 : it->second;
}

void PeerConnections::Add(const std::string& key) { ++counts_[key]; }

void PeerConnections::Remove(const std::string& key) {
  auto it = counts_.find(key);
  if (it == counts_.end()) return;
  if (--it->second == 0) counts_.erase(it);
}

AuthFailureLimiter::AuthFailureLimiter(size_t burst, std::chrono::milliseconds refill,
                                       size_t max_keys)
    : burst_(burst),
      refill_(std::max(refill, std::chrono::milliseconds(1))),
      max_keys_(std::max<size_t>(max_keys, 1)) {}

void AuthFailureLimiter::Refill(Bucket& bucket, Clock::time_point now) const {
  if (now <= bucket.updated) return;
  const double gained =
      std::chrono::duration<double>(now - bucket.updated) / std::chrono::duration<double>(refill_);
  bucket.tokens = std::min(static_cast<double>(burst_), bucket.tokens + gained);
  bucket.updated = now;
}

void AuthFailureLimiter::Prune(Clock::time_point now) {
  // Full buckets carry no state worth keeping. If every bucket is in use (an attacker with
  // max_keys addresses), start over: that only resets the limits, it never locks anyone out.
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    Refill(it->second, now);
    it = it->second.tokens >= static_cast<double>(burst_) ? buckets_.erase(it) : std::next(it);
  }
  if (buckets_.size() >= max_keys_) buckets_.clear();
}

bool AuthFailureLimiter::TryTake(const std::string& key, Clock::time_point now,
                                 std::chrono::seconds& retry_after) {
  if (burst_ == 0) return true;
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) Prune(now);
    it = buckets_.emplace(key, Bucket{static_cast<double>(burst_), now}).first;
  }
  Bucket& bucket = it->second;
  Refill(bucket, now);
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return true;
  }
  const double wait_s = (1 - bucket.tokens) * std::chrono::duration<double>(refill_).count();
  retry_after = std::chrono::seconds(static_cast<int64_t>(std::ceil(wait_s)));
  if (retry_after.count() < 1) retry_after = std::chrono::seconds(1);
  return false;
}

void AuthFailureLimiter::Refund(const std::string& key, Clock::time_point now) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return;
  Refill(it->second, now);
  it->second.tokens = std::min(static_cast<double>(burst_), it->second.tokens + 1);
}

}  // namespace fabricwatch::exporter
