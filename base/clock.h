#pragma once
// The agent's time source, an interface: collectors, detectors and the pipeline read time through
// it, so tests and the simulator control it.

#include <chrono>

namespace fabricwatch {

// In the agent it is an AgentClock (base/agent_clock.h): wall time at start advanced by the
// monotonic clock, so that windows never jump with a step of the wall clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
  // What to add to a time of this clock to show it as wall-clock time (display, the state
  // file): zero for a clock that is the wall clock.
  virtual std::chrono::system_clock::duration WallOffset() const { return {}; }
  std::chrono::system_clock::time_point ToWall(std::chrono::system_clock::time_point t) const {
    return t + WallOffset();
  }
};

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now();
  }
};

}  // namespace fabricwatch
