#pragma once
// A PortProber for tests (issue 37): answers each Measure() with the measurement set for the
// port (or a healthy default), records the targets, and can hold a measurement until the test
// releases it, so a test sees what runs while a probe is in flight without any timing.

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "exporter/probe/probe.h"

namespace fabricwatch::testing {

inline probe::ProbeMeasurement OkMeasurement(double bytes_per_second) {
  probe::ProbeMeasurement m;
  m.outcome = probe::ProbeOutcome::kOk;
  m.path = "loopback";
  m.bandwidth_bytes_per_second = bytes_per_second;
  m.latency_median = std::chrono::nanoseconds(2500);
  m.latency_max = std::chrono::nanoseconds(9000);
  return m;
}

inline probe::ProbeMeasurement FailedMeasurement(probe::ProbeOutcome outcome, std::string error) {
  probe::ProbeMeasurement m;
  m.outcome = outcome;
  m.error = std::move(error);
  m.path = "loopback";
  return m;
}

class FakePortProber final : public probe::PortProber {
 public:
  // Shared with the test: the runner owns the prober, the test keeps this.
  struct State {
    std::mutex mutex;
    std::condition_variable cv;
    std::map<probe::PortRef, probe::ProbeMeasurement> answers;
    std::vector<probe::ProbeTarget> targets;
    int in_flight = 0;
    int max_in_flight = 0;
    bool hold = false;  // Measure() waits until Release()

    void Set(const probe::PortRef& port, probe::ProbeMeasurement m) {
      std::lock_guard lock(mutex);
      answers[port] = std::move(m);
    }
    size_t calls() {
      std::lock_guard lock(mutex);
      return targets.size();
    }
    // Waits (bounded, generously) until `n` measurements have started.
    bool WaitStarted(size_t n) {
      std::unique_lock lock(mutex);
      return cv.wait_for(lock, std::chrono::seconds(30), [&] { return targets.size() >= n; });
    }
    void Release() {
      {
        std::lock_guard lock(mutex);
        hold = false;
      }
      cv.notify_all();
    }
  };

  explicit FakePortProber(std::shared_ptr<State> state) : state_(std::move(state)) {}

  probe::ProbeMeasurement Measure(const probe::ProbeTarget& target,
                                  const probe::ProbeOptions&) override {
    std::unique_lock lock(state_->mutex);
    state_->targets.push_back(target);
    state_->max_in_flight = std::max(state_->max_in_flight, ++state_->in_flight);
    state_->cv.notify_all();
    state_->cv.wait(lock, [&] { return !state_->hold; });
    --state_->in_flight;
    auto it = state_->answers.find(target.port);
    return it != state_->answers.end() ? it->second : OkMeasurement(50e9);
  }

 private:
  std::shared_ptr<State> state_;
};

}  // namespace fabricwatch::testing
