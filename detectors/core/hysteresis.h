#pragma once
// Hysteresis, hold-down and decay helpers shared by the detectors (docs/detection.md §5).
//
//   HoldDown        a state that raises only after its raise condition held for `raise_after`
//                   and clears only after its clear condition held for `clear_after` (SONiC's
//                   detection/restoration timers, §1.3; the run-length rule of §5); counter
//                   samples cover an interval (from, to], gauge reads a point in time;
//   DecayingPenalty the AIED / BGP-dampening penalty: +amount per event, exponential decay with a
//                   half-life, capped at a ceiling (§2.2, §5);
//   EventWindow     timestamps of events for sliding-window counts ("5 in 10 s", "2 in 6 h").
// All take the sample time as an argument: no clock of their own, so tests compress time.

#include <chrono>
#include <cstddef>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

using Duration = std::chrono::milliseconds;

double Seconds(TimePoint::duration duration);
// Seconds since the epoch, as exported in *_timestamp_seconds and the state file.
double EpochSeconds(TimePoint time);
TimePoint FromEpochSeconds(double seconds);

class HoldDown {
 public:
  HoldDown() = default;
  HoldDown(Duration raise_after, Duration clear_after)
      : raise_after_(raise_after), clear_after_(clear_after) {}

  // One observation covering the interval (from, to]: a counter sample covers the time since
  // the previous sample, so three 1 s samples over a threshold make a 3 s streak. A sample that
  // satisfies neither condition (between the raise and clear thresholds) restarts both streaks:
  // only uninterrupted runs count. Returns active().
  bool Update(bool raise_condition, bool clear_condition, TimePoint from, TimePoint to);
  // One point observation at `at`: a gauge read at an instant (a DOM read, a PCIe link state,
  // a windowed BER) says nothing about the time before it, so a streak starts at the first
  // sample that satisfies its condition and `raise_after` is measured between samples.
  bool Update(bool raise_condition, bool clear_condition, TimePoint at) {
    return Update(raise_condition, clear_condition, at, at);
  }
  // No information for a while (a missing sample, a counter gap): streaks restart, the state
  // is kept.
  void Interrupt() { raise_since_.reset(), clear_since_.reset(); }
  void Reset() { *this = HoldDown(raise_after_, clear_after_); }

  bool active() const { return active_; }
  // Length of the current raise streak at `to`, 0 if none.
  double raise_streak_seconds(TimePoint to) const {
    return raise_since_ ? Seconds(to - *raise_since_) : 0;
  }
  TimePoint active_since() const { return active_since_; }
  // For restarts: a restored active state still needs `clear_after` of clear samples.
  void Restore(bool active, TimePoint since) {
    active_ = active;
    active_since_ = since;
  }

 private:
  Duration raise_after_{0};
  Duration clear_after_{0};
  bool active_ = false;
  TimePoint active_since_{};
  std::optional<TimePoint> raise_since_;
  std::optional<TimePoint> clear_since_;
};

class DecayingPenalty {
 public:
  DecayingPenalty() = default;
  DecayingPenalty(Duration half_life, double ceiling) : half_life_(half_life), ceiling_(ceiling) {}

  // Adds `amount` for an event at `time`; an event older than the last one is decayed to the
  // last update time first, so out-of-order sources (a counter seen after a netlink event)
  // give the same penalty.
  void Add(double amount, TimePoint time);
  // Removes an event's contribution (an event reclassified as maintenance).
  void Remove(double amount, TimePoint event_time);
  double At(TimePoint time) const;

  nlohmann::json Save() const;
  // A value outside [0, ceiling] or a time after now() restores no penalty (counted).
  void Load(const nlohmann::json& state, StateLoadCheck& check);

 private:
  double DecayFactor(TimePoint::duration elapsed) const;

  Duration half_life_{1};
  double ceiling_ = 0;
  double value_ = 0;
  TimePoint at_{};
};

class EventWindow {
 public:
  explicit EventWindow(size_t capacity = 256) : capacity_(capacity) {}
  void Add(TimePoint time);
  // Events with time > since.
  size_t CountAfter(TimePoint since) const;
  // Drops events at or before `before`.
  void Prune(TimePoint before);
  // Removes the events in [from, to]; returns how many, with their times.
  std::vector<TimePoint> RemoveBetween(TimePoint from, TimePoint to);
  const std::deque<TimePoint>& times() const { return times_; }
  bool empty() const { return times_.empty(); }

  nlohmann::json Save() const;
  // Times after now() are dropped (counted); at most `capacity` are kept.
  void Load(const nlohmann::json& state, StateLoadCheck& check);

 private:
  size_t capacity_;
  std::deque<TimePoint> times_;  // sorted
};

}  // namespace fabricwatch::detect
