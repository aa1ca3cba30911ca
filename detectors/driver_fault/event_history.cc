#include "detectors/driver_fault/event_history.h"

#include <algorithm>

#include "detectors/core/hysteresis.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect {

void EventHistory::Add(const LogEvent& event) {
  if (!buckets_.empty() && event.last_time < buckets_.back().first) {
    // Out of order (a replay read late): keep the order, count it at the newest bucket.
    buckets_.back().second += event.count;
  } else {
    buckets_.emplace_back(event.last_time, event.count);
  }
  if (buckets_.size() > kMaxBuckets) buckets_.pop_front();
  last_ = std::max(last_, event.last_time);
  for (const LogLine& line : event.lines) {
    lines_.push_back(line);
    if (lines_.size() > kMaxLogLinesPerEvent) lines_.pop_front();
  }
}

uint64_t EventHistory::CountAfter(TimePoint since) const {
  uint64_t count = 0;
  for (auto it = buckets_.rbegin(); it != buckets_.rend() && it->first > since; ++it) {
    count += it->second;
  }
  return count;
}

void EventHistory::Prune(TimePoint before) {
  while (!buckets_.empty() && buckets_.front().first <= before) buckets_.pop_front();
}

nlohmann::json EventHistory::Save() const {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& [time, count] : buckets_) buckets.push_back({EpochSeconds(time), count});
  nlohmann::json lines = nlohmann::json::array();
  for (const LogLine& line : lines_) lines.push_back({EpochSeconds(line.time), line.text});
  return {{"buckets", buckets}, {"last", EpochSeconds(last_)}, {"lines", lines}};
}

Status EventHistory::Load(const nlohmann::json& state, StateLoadCheck& check) {
  if (!state.is_object() || !state.contains("buckets") || !state["buckets"].is_array() ||
      !state.contains("lines") || !state["lines"].is_array() || !state.contains("last")) {
    return Status(StatusCode::kInvalidArgument, "event history: not {buckets, last, lines}");
  }
  *this = EventHistory();
  for (const auto& bucket : state["buckets"]) {
    if (!bucket.is_array() || bucket.size() != 2 || !bucket[1].is_number_unsigned()) {
      return Status(StatusCode::kInvalidArgument, "event history: a bucket is not [time, count]");
    }
    auto time = check.Past(bucket[0]);
    if (!time) continue;
    if (!buckets_.empty() && *time < buckets_.back().first) continue;
    buckets_.emplace_back(*time, bucket[1].get<uint64_t>());
    if (buckets_.size() > kMaxBuckets) buckets_.pop_front();
  }
  if (auto last = check.Past(state["last"])) last_ = *last;
  for (const auto& line : state["lines"]) {
    if (!line.is_array() || line.size() != 2 || !line[1].is_string()) {
      return Status(StatusCode::kInvalidArgument, "event history: a line is not [time, text]");
    }
    auto time = check.Past(line[0]);
    if (!time) continue;
    lines_.push_back({*time, line[1].get<std::string>()});
    if (lines_.size() > kMaxLogLinesPerEvent) lines_.pop_front();
  }
  return Status::Ok();
}

}  // namespace fabricwatch::detect
