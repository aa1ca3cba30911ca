#include "detectors/core/counter.h"

#include <limits>

namespace fabricwatch::detect {
namespace {

// The all-ones value of a counter `width` bits wide.
uint64_t Ceiling(unsigned width) {
  return width >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << width) - 1;
}

}  // namespace

CounterStep CounterTracker::Update(uint64_t value, std::chrono::system_clock::time_point time) {
  CounterStep step;
  step.saturated =
      spec_.behaviour == CounterBehaviour::kSaturating && value == Ceiling(spec_.width);
  if (!last_) {
    last_ = Last{value, time};
    return step;  // first sample (or first after Forget): no delta
  }
  const double seconds = std::chrono::duration<double>(time - last_->time).count();
  if (seconds <= 0) {
    // The same or an older sample again (a re-delivered snapshot): no new information, and the
    // baseline stays where it was so the next real sample measures the true Δt.
    return step;
  }
  const uint64_t previous = last_->value;
  last_ = Last{value, time};
  step.seconds = seconds;
  if (step.saturated) return step;  // detection.md §0.2: the ceiling means "unknown", not zero

  if (value >= previous) {
    step.delta = value - previous;
    step.valid = true;
    return step;
  }
  if (spec_.behaviour == CounterBehaviour::kWrapping32) {
    // A wrap only when both values fit the width and the implied rate is physically possible;
    // anything else is a reset (driver reload, admin clear) — detection.md §0.2.
    const unsigned width = spec_.width == 0 || spec_.width > 64 ? 32 : spec_.width;
    const uint64_t ceiling = Ceiling(width);
    if (previous <= ceiling && value <= ceiling) {
      const uint64_t wrapped = (ceiling - previous) + value + 1;
      if (static_cast<double>(wrapped) / seconds <= spec_.max_rate_per_second) {
        step.delta = wrapped;
        step.wrapped = true;
        step.valid = true;
        return step;
      }
    }
  }
  // NVSentinel's reset rule: the current value is what accumulated since the reset.
  step.delta = value;
  step.reset = true;
  step.valid = true;
  return step;
}

}  // namespace fabricwatch::detect
