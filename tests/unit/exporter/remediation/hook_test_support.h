#pragma once
// Shared by the hook tests (hook_runner_test.cc, drain_policy_test.cc): a settable clock, a PFC
// storm transition as pfc_storm reports it, a policy configuration and plan printers.

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "collectors/core/collector.h"
#include "exporter/remediation/drain_policy.h"
#include "exporter/remediation/hook_config.h"

namespace fabricwatch::exporter::hook_testing {

using detect::AnomalyTransition;
using detect::Severity;
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

inline const DrainGates kOpen{};
inline const DrainGates kBudgetExhausted{.fleet_budget_exhausted = true, .suspect_peers = {}};

inline const detect::TimePoint kT0 = detect::TimePoint(seconds(1'800'000'000));

class FakeClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void Set(detect::TimePoint t) {
    std::lock_guard lock(mutex_);
    now_ = t;
  }

 private:
  mutable std::mutex mutex_;
  detect::TimePoint now_ = kT0;
};

// A PFC storm on eth2 priority 3, as the pfc_storm detector reports it.
inline AnomalyTransition Storm(std::string role, bool raised, detect::TimePoint time,
                               std::string netdev = "eth2") {
  AnomalyTransition t;
  t.detector = "pfc_storm";
  t.raised = raised;
  t.time = time;
  t.started = time;
  t.finding.severity = Severity::kCritical;
  t.finding.entity = {{"netdev", netdev}, {"priority", "3"}, {"role", role}};
  t.finding.value = 0.97;
  t.finding.evidence = {{"pause_ratio", 0.97}, {"tx_pause_frames_per_second", 151234}};
  t.finding.reason = netdev + " priority 3 sends pause frames 97% of the time (\"source\")";
  t.finding.drain_eligible = role == "source";
  return t;
}

inline HookSpec Hook(std::string name, HookAction action, std::vector<std::string> detectors = {}) {
  HookSpec hook;
  hook.name = std::move(name);
  hook.action = action;
  hook.command = {"/bin/true"};
  hook.detectors = std::move(detectors);
  return hook;
}

inline HookConfig PolicyConfig() {
  HookConfig config;
  config.cooldown = minutes(30);
  config.max_drains_per_hour = 2;
  config.clear_hold_down = minutes(10);
  config.hooks = {Hook("slurm", HookAction::kDrain, {"pfc_storm", "link_flap"}),
                  Hook("webhook", HookAction::kNotify),
                  Hook("optics-only", HookAction::kDrain, {"optical_drift"})};
  return config;
}

inline std::vector<std::string> Runs(const HookPlan& plan, const HookConfig& config) {
  std::vector<std::string> out;
  for (const PlannedRun& run : plan.runs) {
    out.push_back(config.hooks[run.hook].name + ":" + std::string(HookPurposeName(run.purpose)) +
                  ":" + (run.transition.raised ? "raise" : "clear"));
  }
  return out;
}

inline std::vector<std::string> Suppressed(const HookPlan& plan, const HookConfig& config) {
  std::vector<std::string> out;
  for (const Suppression& s : plan.suppressed) {
    out.push_back(config.hooks[s.hook].name + ":" + std::string(s.result));
  }
  return out;
}

using Names = std::vector<std::string>;

}  // namespace fabricwatch::exporter::hook_testing
