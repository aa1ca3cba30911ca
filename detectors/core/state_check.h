#pragma once
// StateLoadCheck: what every value read back from the state file must pass (issue 19). A file
// whose timestamps lie ahead of the clock (the clock stepped back, a file copied from another
// node) or whose numbers are corrupt must never make a finding: two real flaps plus "future"
// ones in the hard window raised a critical, drain-eligible hard-flapping finding, and a huge
// stored penalty gave "flap penalty inf".
//
// The rules (docs/detection.md §0.2 "State from the future"):
//   - a past instant (an event, a start, a last sample) later than `now`, or not a finite time
//     between 1970 and 2200, is dropped with the entry it belongs to: clamping it to `now` would
//     still count it as a fresh event;
//   - an instant ahead by design (a maintenance window's end, a hold's `until`) may lie at most
//     its own configured length after `now`; beyond that it is dropped;
//   - a number must be finite and within the detector's own bounds (a penalty within the
//     ceiling, a count not negative); otherwise the entry is dropped.
// Each drop is counted by reason; the detector engine exports the counts as
// fabricwatch_state_entries_dropped_total{reason} and logs them once per load.
//
// Thread-safety: none (one load at a time).

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

class StateLoadCheck {
 public:
  // The reasons (the `reason` label).
  static constexpr std::string_view kFutureTimestamp = "future_timestamp";
  static constexpr std::string_view kInvalidTimestamp = "invalid_timestamp";
  static constexpr std::string_view kOutOfRange = "out_of_range";

  // `shift` is added to every instant read: the wall clock minus the saving agent's clock at
  // the save (its WallOffset(), base/agent_clock.h, kept by the engine under
  // "_clock"): that agent measured on the monotonic clock, so after a step of the wall clock
  // during its run its times are rebased to wall time here, not dropped as "from the future".
  explicit StateLoadCheck(TimePoint now, std::chrono::system_clock::duration shift = {})
      : now_(now), shift_(shift) {}
  TimePoint now() const { return now_; }
  std::chrono::system_clock::duration shift() const { return shift_; }

  // A past instant in Unix seconds: a JSON number, finite, in range, not after now().
  // nullopt (counted) otherwise.
  std::optional<TimePoint> Past(const nlohmann::json& epoch_seconds);
  // An instant that lies ahead by design: at most `horizon` after now().
  std::optional<TimePoint> Until(const nlohmann::json& epoch_seconds,
                                 std::chrono::milliseconds horizon);
  // A JSON number, finite, in [lo, hi]. nullopt (counted kOutOfRange) otherwise.
  std::optional<double> Number(const nlohmann::json& value, double lo, double hi);
  // A non-negative JSON integer no larger than `max`.
  std::optional<uint64_t> Count(const nlohmann::json& value, uint64_t max);

  void Drop(std::string_view reason) { ++dropped_[std::string(reason)]; }
  const std::map<std::string, uint64_t, std::less<>>& dropped() const { return dropped_; }
  uint64_t total_dropped() const;

 private:
  std::optional<TimePoint> Checked(const nlohmann::json& epoch_seconds, TimePoint latest);

  TimePoint now_;
  std::chrono::system_clock::duration shift_;
  std::map<std::string, uint64_t, std::less<>> dropped_;
};

}  // namespace fabricwatch::detect
