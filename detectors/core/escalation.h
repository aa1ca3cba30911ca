#pragma once
// Escalation after repeated warnings (issue 22 item 3), for every detector at once.
//
// The same entity of one detector (detector + entity labels) raising a WARNING `count` times
// within `window` (default 3 in 1 h) is reported as a CRITICAL finding of that detector and
// entity: a problem that keeps coming back is one problem, and it pages. The detector engine
// applies it to each detector's findings after the cross-detector rules (a suppressed warning is
// no raise) and before the AnomalyTracker:
//   - a raise is the entity's warning present at one evaluation and absent at the previous one;
//   - escalated, the warning is replaced by the critical (one severity per entity): evidence =
//     the warning's own evidence plus escalation_warnings (raises in the window),
//     escalation_window_seconds and escalation_raise_<i>_timestamp_seconds (i = 1 the oldest,
//     at most the last 10); value = the number of raises; the reason names the count, the
//     window, the raise times and the last warning's reason;
//   - it stays while the warning is active, and clears once the warning is clear and `window`
//     has passed since the last raise (a warning that keeps coming back keeps one critical
//     open, not one per return); a critical the detector reports itself for the entity wins;
//   - drain-eligible when the detector's own criticals are (its declaration's criticals_drain,
//     detectors/core/declaration.h; README "Detectors"), never for a PFC storm victim
//     (role=victim).
// `count` 0 disables it. The raise history survives a restart in the state file (SaveState),
// and the warnings active at the save are not counted again when the restarted detectors
// confirm them within `restore_grace`.
//
// Thread-safety: none (the engine's thread).

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

class StateLoadCheck;

struct EscalationOptions {
  uint64_t count = 3;  // warnings in `window` that escalate; 0: off
  std::chrono::milliseconds window = std::chrono::hours(1);
  std::chrono::milliseconds restore_grace = std::chrono::seconds(60);
};

// Whether a critical finding of `detector` on `entity` may drain the node (see above).
bool EscalatedDrainEligible(std::string_view detector, const EntityLabels& entity);

class Escalation {
 public:
  explicit Escalation(EscalationOptions options = {}) : options_(options) {}

  // Pre-initialises the escalation counter of each detector to 0.
  void Track(const std::vector<std::string>& detectors) {
    for (const std::string& d : detectors) started_.try_emplace(d, 0);
  }

  // Records the warnings of `detector` at `now` and replaces escalated entities' warnings with
  // their critical (adding it while the warning is clear but the escalation holds).
  void Apply(std::string_view detector, TimePoint now, std::vector<Finding>& findings);

  nlohmann::json SaveState() const;
  // Restores the raise histories; a raise time after check.now() is dropped and counted.
  Status LoadState(const nlohmann::json& state, StateLoadCheck& check);

  // Escalations started, by detector (fabricwatch_findings_escalated_total).
  const std::map<std::string, uint64_t, std::less<>>& escalations() const { return started_; }
  static std::span<const MetricDesc> Metrics();
  void Export(MetricSink& sink) const;

  const EscalationOptions& options() const { return options_; }

 private:
  struct History {
    std::deque<TimePoint> raises;  // within the window, oldest first
    bool warning_active = false;
    bool escalated = false;
    Finding last_warning;
  };
  Finding Escalated(std::string_view detector, const History& h) const;

  EscalationOptions options_;
  // by detector, then EntityText(entity)
  std::map<std::string, std::map<std::string, History>, std::less<>> histories_;
  std::map<std::string, uint64_t, std::less<>> started_;
  TimePoint restored_until_{};
};

}  // namespace fabricwatch::detect
