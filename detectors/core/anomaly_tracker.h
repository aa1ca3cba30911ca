#pragma once
// AnomalyTracker: turns each detector's successive Evaluate() results into raise/clear
// transitions and exports the anomaly contract of docs/design.md §5:
//   fabric_anomaly_active{detector,severity,<entity>}                    1 while active
//   fabric_anomaly_value{detector,severity,<entity>}                     the triggering value
//   fabric_anomaly_started_timestamp_seconds{detector,severity,<entity>} start of the state
//   fabric_anomaly_transitions_total{detector,severity,transition="raise|clear"}
// The entity labels are the finding's own (device, port, netdev, priority, lane, role — only
// those that apply), so the families carry varying label sets, as the contract wants.
// Transitions go to every subscribed observer (the structured log line, the hook runner), in
// order, outside the tracker's lock; an observer that throws is logged, never propagated.
//
// Restarts: LoadState() restores the active set with the original start times. A restored
// anomaly that the detector reports again keeps its start time and raises nothing (no second
// hook run); one the detector does not report within `restore_grace` is cleared then. The grace
// covers detectors that need a few samples before they can confirm a state they did not persist.
//
// Thread-safety: all methods may be called concurrently (engine thread vs. HTTP threads).

#include <prometheus/metric_family.h>
#include <spdlog/logger.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

struct ActiveAnomaly {
  std::string detector;
  Finding finding;
  TimePoint started;
  TimePoint updated;      // the last evaluation that reported it
  bool restored = false;  // from the state file, not yet confirmed by the detector
};

using TransitionObserver = std::function<void(const AnomalyTransition&)>;

class AnomalyTracker {
 public:
  // `detectors`: the enabled detectors, whose transition counters are pre-initialised to 0 so
  // alerts never meet an absent series.
  AnomalyTracker(std::vector<std::string> detectors, std::shared_ptr<spdlog::logger> logger,
                 std::chrono::milliseconds restore_grace = std::chrono::seconds(60));

  void Subscribe(TransitionObserver observer);

  // The complete set of findings of `detector` at `now`; returns the transitions it caused
  // (after notifying the observers).
  std::vector<AnomalyTransition> Update(std::string_view detector, TimePoint now,
                                        std::vector<Finding> findings);

  // Sorted by detector, severity (critical first), entity.
  std::vector<ActiveAnomaly> Active() const;
  // `wall_offset` is added to the start times shown (Clock::WallOffset(): detection time is
  // the agent's monotonic clock, the started timestamp is wall time).
  std::vector<prometheus::MetricFamily> Collect(
      std::chrono::system_clock::duration wall_offset = {}) const;

  nlohmann::json SaveState() const;
  // `now`: the restore time, from which restore_grace runs.
  // An anomaly that started after check.now() (a state file from the future) is dropped and
  // counted, never restored (detectors/core/state_check.h).
  Status LoadState(const nlohmann::json& state, StateLoadCheck& check);

  static std::span<const MetricDesc> Metrics();

 private:
  static std::string Key(std::string_view detector, const Finding& finding);
  void Notify(const std::vector<AnomalyTransition>& transitions);

  std::shared_ptr<spdlog::logger> logger_;
  std::chrono::milliseconds restore_grace_;
  std::mutex observers_mutex_;
  std::vector<TransitionObserver> observers_;
  mutable std::mutex mutex_;
  std::map<std::string, ActiveAnomaly> active_;  // by Key()
  // (detector, severity, transition) -> count
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> transitions_;
  TimePoint restored_at_{};
};

// One structured log line per transition: raise at warn, clear at info, e.g.
//   anomaly raised detector=link_flap severity=critical netdev=eth0 value=5 drain_eligible=true
//   reason="..."
TransitionObserver LogTransitions(std::shared_ptr<spdlog::logger> logger);

// The anomaly or transition with every time moved by `wall_offset` (Clock::WallOffset()): what
// the status page, the JSON API and the hooks show, in wall time, of the detection clock's
// times (base/agent_clock.h).
inline ActiveAnomaly ToWall(ActiveAnomaly anomaly,
                            std::chrono::system_clock::duration wall_offset) {
  anomaly.started += wall_offset;
  anomaly.updated += wall_offset;
  for (LogLine& line : anomaly.finding.log) line.time += wall_offset;
  return anomaly;
}
inline AnomalyTransition ToWall(AnomalyTransition t,
                                std::chrono::system_clock::duration wall_offset) {
  t.time += wall_offset;
  t.started += wall_offset;
  for (LogLine& line : t.finding.log) line.time += wall_offset;
  return t;
}

// "netdev=eth0 priority=3" — for logs and the status page.
std::string EntityText(const EntityLabels& entity);

nlohmann::json FindingJson(const Finding& finding);
Result<Finding> FindingFromJson(const nlohmann::json& json);

}  // namespace fabricwatch::detect
