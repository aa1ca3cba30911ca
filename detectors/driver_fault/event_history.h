#pragma once
// What driver_fault remembers of one kernel event on one entity: line counts per collection
// (time, count) for windowed counts, the time of the last line, and the newest lines. A flood
// of 10,000 lines per second is one bucket per collection, never one entry per line.

#include <chrono>
#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "base/log_events.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

class StateLoadCheck;

class EventHistory {
 public:
  void Add(const LogEvent& event);
  // Lines with time > since.
  uint64_t CountAfter(TimePoint since) const;
  // Drops buckets at or before `before`; the last time and the lines stay.
  void Prune(TimePoint before);
  TimePoint last() const { return last_; }
  const std::deque<LogLine>& lines() const { return lines_; }
  bool empty() const { return buckets_.empty() && lines_.empty(); }

  nlohmann::json Save() const;
  // Times from the future are dropped (counted by `check`); malformed entries are an error.
  Status Load(const nlohmann::json& state, StateLoadCheck& check);

 private:
  static constexpr size_t kMaxBuckets = 4096;           // 1 h of 1 s collections
  std::deque<std::pair<TimePoint, uint64_t>> buckets_;  // by time
  TimePoint last_{};
  std::deque<LogLine> lines_;  // newest kMaxLogLinesPerEvent, oldest first
};

}  // namespace fabricwatch::detect
