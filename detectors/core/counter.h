#pragma once
// CounterTracker: the one place counter arithmetic happens (docs/detection.md §0.2).
//
// Every detector turns raw counter samples into deltas through this helper, so none of them
// raises a false alarm on
//   - a reset (driver reload, admin clear): current < previous and no plausible wrap → the
//     current value is the delta since the reset (NVSentinel's rule), flagged `reset`;
//   - a true wrap of a counter of known width (mlx5 32-bit counters): 2^w is added only when the
//     implied rate is physically plausible (≤ max_rate_per_second), flagged `wrapped`;
//   - a saturating IB PMA counter (16-bit symbol_error, 8-bit link_downed, ...): a value of
//     2^w − 1 is "saturated/unknown" — the delta is not trusted, flagged `saturated`;
//   - a gap: the first sample, or a series that disappeared and came back, gives no delta.
// Deltas are over the measured Δt of the samples, never the nominal interval.

#include <chrono>
#include <cstdint>
#include <optional>

#include "base/metric_sink.h"

namespace fabricwatch::detect {

enum class CounterBehaviour {
  kMonotonic64,   // 64-bit, never wraps in practice: current < previous is a reset
  kWrapping32,    // wraps at 2^32
  kSaturating,    // IB PMA: stops at 2^width − 1
};

struct CounterSpec {
  CounterBehaviour behaviour = CounterBehaviour::kMonotonic64;
  unsigned width = 64;  // bits, for kWrapping32 (32) and kSaturating (8, 16, 32, 64)
  // Upper bound on a believable rate; a wrap that implies more is treated as a reset.
  double max_rate_per_second = 1e15;
};

struct CounterStep {
  bool valid = false;      // a delta is available (false on the first sample or when saturated)
  uint64_t delta = 0;
  double seconds = 0;      // measured Δt between the two samples
  bool reset = false;
  bool wrapped = false;
  bool saturated = false;  // the current value sits at the saturation ceiling
  double rate() const { return valid && seconds > 0 ? static_cast<double>(delta) / seconds : 0; }
};

// The spec of a counter family as its collector declares it (MetricDesc::range): a 32-bit
// wrapping kernel counter, a saturating IB PMA counter, or a plain 64-bit one.
CounterSpec SpecFor(const MetricDesc& desc, double max_rate_per_second = 1e15);

class CounterTracker {
 public:
  CounterTracker() = default;
  explicit CounterTracker(CounterSpec spec) : spec_(spec) {}
  CounterStep Update(uint64_t value, std::chrono::system_clock::time_point time);
  void Forget() { last_.reset(); }
  const CounterSpec& spec() const { return spec_; }

 private:
  struct Last {
    uint64_t value;
    std::chrono::system_clock::time_point time;
  };
  CounterSpec spec_;
  std::optional<Last> last_;
};

}  // namespace fabricwatch::detect
