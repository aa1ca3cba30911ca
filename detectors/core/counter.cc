#include "detectors/core/counter.h"

#include <cmath>
#include <limits>

namespace fabricwatch::detect {
namespace {

uint64_t Ceiling(unsigned width) {
  return width >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << width) - 1;
}

}  // namespace

CounterSpec SpecFor(const MetricDesc& desc, double max_rate_per_second) {
  switch (desc.range.overflow) {
    case CounterOverflow::kWraps:
      // Only 32-bit wraps exist among the collectors' counters (kernel atomic_t, mlx5 32-bit).
      return {CounterBehaviour::kWrapping32, 32, max_rate_per_second};
    case CounterOverflow::kSaturates:
      return {CounterBehaviour::kSaturating, desc.range.bits, max_rate_per_second};
    case CounterOverflow::kNone:
      break;
  }
  return {CounterBehaviour::kMonotonic64, 64, max_rate_per_second};
}

CounterStep CounterTracker::Update(uint64_t value, std::chrono::system_clock::time_point time) {
  CounterStep step;
  if (spec_.behaviour == CounterBehaviour::kSaturating && value >= Ceiling(spec_.width)) {
    // docs/detection.md §0.2: an IB PMA counter at 2^w − 1 has stopped counting; any delta computed
    // from it would read as "no errors" forever. Keep the sample as the new baseline so that a
    // PMA clear (back to small values) is treated as a reset, not as a huge delta.
    step.saturated = true;
    last_ = Last{value, time};
    return step;
  }
  if (!last_) {
    last_ = Last{value, time};
    return step;  // first sample (or first after a gap): no delta
  }
  const Last previous = *last_;
  step.seconds = std::chrono::duration<double>(time - previous.time).count();
  if (step.seconds <= 0) {
    // Same or older timestamp (a replayed or duplicated snapshot): no rate can be derived, and
    // the baseline stays, so the next sample's delta is measured over a real Δt.
    step.seconds = 0;
    return step;
  }
  last_ = Last{value, time};
  step.valid = true;
  if (value >= previous.value) {
    step.delta = value - previous.value;
    return step;
  }
  if (spec_.behaviour == CounterBehaviour::kWrapping32 && previous.value <= 0xffffffffULL &&
      value <= 0xffffffffULL) {
    const uint64_t wrapped = (uint64_t{1} << 32) - previous.value + value;
    // §0.2: add 2^w only when the implied rate is physically plausible; otherwise the counter
    // was reset (a netdev re-created, a driver reload) and the reset rule applies.
    if (static_cast<double>(wrapped) / step.seconds <= spec_.max_rate_per_second) {
      step.delta = wrapped;
      step.wrapped = true;
      return step;
    }
  }
  // §0.2 reset rule (NVSentinel): current < previous → current is the delta since the reset.
  step.delta = value;
  step.reset = true;
  return step;
}

}  // namespace fabricwatch::detect
