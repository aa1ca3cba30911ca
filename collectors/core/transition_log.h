#pragma once
// TransitionLog: log a failing thing once when it starts failing (warn), once when it recovers
// (info), and its repeats only at debug. Keyed by whatever identifies the thing
// ("eth0/carrier_changes"). Used by collectors for per-device errors so that a broken port
// does not produce one warning per second.
//
// "Recovered" means checked and found good: a thing a collector does not check in every
// collection (a module EEPROM read every 30 s by a collector that runs every 5 s, a device whose
// discovery is retried later) is passed to Keep() in the collections that skip it, and stays
// failing without a line. Two more rules keep a bad moment from flooding the log:
//   - EMFILE/ENFILE (the open-file limit) is one state of the process, not of the file: every
//     such failure counts under the one key kFileLimitKey;
//   - at most kMaxLinesPerCollection warnings (and as many recoveries) are logged one by one in
//     a collection; the rest are summed up in one line at EndCollection(), and a thing whose
//     start was not logged has no recovery line either.
// Not thread-safe: owned by one collector.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <spdlog/logger.h>

#include "base/status.h"

namespace fabricwatch {

class TransitionLog {
 public:
  static constexpr std::string_view kFileLimitKey = "open-file limit";
  static constexpr size_t kMaxLinesPerCollection = 10;

  explicit TransitionLog(std::shared_ptr<spdlog::logger> logger) : logger_(std::move(logger)) {}

  // Call once per collection for every key that failed. The status message should carry its
  // own context (path, device); the key only identifies the failing thing.
  void Failed(const std::string& key, const Status& status);
  // The thing `key` (and every key under "key/") was not checked in this collection: a failing
  // one stays failing, with no line. Costs nothing while nothing fails.
  void Keep(std::string_view key);
  // Call at the end of a collection: keys that were failing and were neither reported failing
  // nor kept in this collection are logged as recovered.
  void EndCollection();

  bool IsFailing(const std::string& key) const { return failing_.contains(key); }

 private:
  struct Failing {
    std::string message;  // the last one
    bool announced;       // its start was logged, so its end is too
  };
  std::shared_ptr<spdlog::logger> logger_;
  std::unordered_map<std::string, Failing> failing_;
  std::unordered_set<std::string> failed_this_round_;
  std::string failing_key_;  // kFileLimitKey as a string, for lookups
  size_t warnings_this_round_ = 0;
  size_t warnings_suppressed_ = 0;
};

}  // namespace fabricwatch
