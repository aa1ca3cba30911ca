#pragma once
// HoldLatch: one sub-detector's hysteresis (design.md §4: raise and clear thresholds differ).
//
// Inactive → active when the raise condition has held continuously for `raise_for`;
// active → inactive when the clear condition has held continuously for `clear_for` (the
// hold-down). The two conditions come from different thresholds, so a value hovering between
// them keeps the current state. Driven by sample times only (no clock of its own).

#include <chrono>
#include <optional>

namespace fabricwatch::detect {

class HoldLatch {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  using Duration = std::chrono::milliseconds;

  HoldLatch() = default;
  HoldLatch(Duration raise_for, Duration clear_for)
      : raise_for_(raise_for), clear_for_(clear_for) {}

  // Feeds one evaluation at `time`; returns whether the latch is active afterwards.
  bool Update(TimePoint time, bool raise_condition, bool clear_condition) {
    if (!active_) {
      if (!raise_condition) {
        since_.reset();
      } else {
        if (!since_) since_ = time;
        if (time - *since_ >= raise_for_) {
          active_ = true;
          since_.reset();
        }
      }
    } else {
      if (!clear_condition) {
        since_.reset();
      } else {
        if (!since_) since_ = time;
        if (time - *since_ >= clear_for_) {
          active_ = false;
          since_.reset();
        }
      }
    }
    return active_;
  }

  // Back to inactive with no pending condition (a gap in the data, a module swap).
  void Reset() {
    active_ = false;
    since_.reset();
  }
  bool active() const { return active_; }

 private:
  Duration raise_for_{0};
  Duration clear_for_{0};
  bool active_ = false;
  std::optional<TimePoint> since_;  // when the pending (raise or clear) condition began
};

}  // namespace fabricwatch::detect
