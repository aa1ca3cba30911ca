#include "detectors/core/state_check.h"

#include <cmath>

#include "detectors/core/hysteresis.h"

namespace fabricwatch::detect {
namespace {

// 2200-01-01: far beyond any real clock, well inside what system_clock (int64 ns) represents.
constexpr double kLatestEpochSeconds = 7'258'118'400.0;

}  // namespace

std::optional<TimePoint> StateLoadCheck::Checked(const nlohmann::json& epoch_seconds,
                                                 TimePoint latest) {
  if (!epoch_seconds.is_number()) {
    Drop(kInvalidTimestamp);
    return std::nullopt;
  }
  const double seconds = epoch_seconds.get<double>();
  if (!std::isfinite(seconds) || seconds < 0 || seconds > kLatestEpochSeconds) {
    Drop(kInvalidTimestamp);
    return std::nullopt;
  }
  const TimePoint time = FromEpochSeconds(seconds) + shift_;
  if (time > latest) {
    Drop(kFutureTimestamp);
    return std::nullopt;
  }
  return time;
}

std::optional<TimePoint> StateLoadCheck::Past(const nlohmann::json& epoch_seconds) {
  return Checked(epoch_seconds, now_);
}

std::optional<TimePoint> StateLoadCheck::Until(const nlohmann::json& epoch_seconds,
                                               std::chrono::milliseconds horizon) {
  return Checked(epoch_seconds, now_ + horizon);
}

std::optional<double> StateLoadCheck::Number(const nlohmann::json& value, double lo, double hi) {
  if (!value.is_number()) {
    Drop(kOutOfRange);
    return std::nullopt;
  }
  const double v = value.get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    Drop(kOutOfRange);
    return std::nullopt;
  }
  return v;
}

std::optional<uint64_t> StateLoadCheck::Count(const nlohmann::json& value, uint64_t max) {
  // A parsed non-negative integer is number_unsigned, one built from an int number_integer.
  const bool non_negative =
      value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
  if (!non_negative || value.get<uint64_t>() > max) {
    Drop(kOutOfRange);
    return std::nullopt;
  }
  return value.get<uint64_t>();
}

uint64_t StateLoadCheck::total_dropped() const {
  uint64_t total = 0;
  for (const auto& [reason, count] : dropped_) total += count;
  return total;
}

}  // namespace fabricwatch::detect
