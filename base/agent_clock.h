#pragma once
// AgentClock: the time the agent detects with (issue 39 item 7, docs/design.md §2 "Time").
//
// Now() is a wall-clock reading taken once, at construction, advanced by CLOCK_MONOTONIC
// (steady_clock) since: it never steps. Every window, hold, hysteresis and rate of the
// collectors and detectors is measured on it, so an NTP step of the wall clock neither freezes
// a finding (a step back: an event "from the future" never left its window) nor expires
// everything at once (a step forward). CLOCK_MONOTONIC is slewed by NTP like the wall clock,
// only never stepped, so the two stay apart by a constant but for steps.
//
// Wall time is only for display and the state file: WallOffset() is the wall clock minus
// Now(), measured on every call and adopted when it moved by more than `threshold` from the
// offset adopted last (a step; smaller moves are the jitter of two readings and would make
// displayed start times wobble between scrapes). Clock::ToWall(t) shows an agent time as wall
// time: after a step back by 1 h, a finding raised before it shows its true start, 1 h
// earlier than the agent's own time says.
//
// Thread-safety: every member may be called from any thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include "base/clock.h"

namespace fabricwatch {

class AgentClock final : public Clock {
 public:
  using WallSource = std::function<std::chrono::system_clock::time_point()>;
  using MonotonicSource = std::function<std::chrono::steady_clock::time_point()>;
  // A step is a move of the measured offset by more than this: far above the microseconds
  // between two readings, far below a step worth correcting (NTP steps at 128 ms by default,
  // but a step of under a second changes no finding).
  static constexpr std::chrono::milliseconds kDefaultThreshold{1000};

  // The real clocks by default; tests inject both sources.
  explicit AgentClock(WallSource wall = {}, MonotonicSource monotonic = {},
                      std::chrono::milliseconds threshold = kDefaultThreshold)
      : wall_(wall ? std::move(wall) : WallSource(&std::chrono::system_clock::now)),
        monotonic_(monotonic ? std::move(monotonic)
                             : MonotonicSource(&std::chrono::steady_clock::now)),
        threshold_(threshold),
        anchor_wall_(wall_()),
        anchor_monotonic_(monotonic_()) {}

  std::chrono::system_clock::time_point Now() const override {
    return anchor_wall_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                              monotonic_() - anchor_monotonic_);
  }

  // The adopted wall-minus-agent offset, after measuring it once more.
  std::chrono::system_clock::duration WallOffset() const override {
    Measure();
    return std::chrono::system_clock::duration(offset_.load(std::memory_order_relaxed));
  }

  // Steps adopted so far, and the adopted offset in seconds (fabricwatch_clock_* self-metrics).
  uint64_t steps() const {
    Measure();
    return steps_.load(std::memory_order_relaxed);
  }
  double offset_seconds() const { return std::chrono::duration<double>(WallOffset()).count(); }

 private:
  void Measure() const {
    std::lock_guard lock(mutex_);
    const auto measured = (wall_() - Now()).count();
    const auto adopted = offset_.load(std::memory_order_relaxed);
    const auto moved = measured > adopted ? measured - adopted : adopted - measured;
    if (std::chrono::system_clock::duration(moved) <= threshold_) return;
    offset_.store(measured, std::memory_order_relaxed);
    steps_.fetch_add(1, std::memory_order_relaxed);
  }

  WallSource wall_;
  MonotonicSource monotonic_;
  std::chrono::milliseconds threshold_;
  std::chrono::system_clock::time_point anchor_wall_;
  std::chrono::steady_clock::time_point anchor_monotonic_;
  mutable std::mutex mutex_;  // one Measure() at a time: a step is adopted and counted once
  mutable std::atomic<std::chrono::system_clock::rep> offset_{0};
  mutable std::atomic<uint64_t> steps_{0};
};

}  // namespace fabricwatch
