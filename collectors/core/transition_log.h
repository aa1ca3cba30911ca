#pragma once
// TransitionLog: log a failing thing once when it starts failing (warn), once when it recovers
// (info), and its repeats only at debug. Keyed by whatever identifies the thing
// ("eth0/carrier_changes"). Used by collectors for per-device errors so that a broken port
// does not produce one warning per second.
// Not thread-safe: owned by one collector.

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/logger.h>

#include "collectors/core/status.h"

namespace fabricwatch {

class TransitionLog {
 public:
  explicit TransitionLog(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {}

  // Call once per collection for every key that failed. The status message should carry its
  // own context (path, device); the key only identifies the failing thing.
  void Failed(const std::string& key, const Status& status);
  // Call at the end of a collection: keys that were failing and were not reported failing in
  // this collection are logged as recovered.
  void EndCollection();

  bool IsFailing(const std::string& key) const { return failing_.contains(key); }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::unordered_map<std::string, std::string> failing_;  // key -> last message
  std::unordered_set<std::string> failed_this_round_;
};

}  // namespace fabricwatch
