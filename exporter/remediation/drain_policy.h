#pragma once
// DrainPolicy: which node-drain hooks run, and which are suppressed, as a pure function of the
// anomaly transitions, the time and the fleet-budget toggle (the safety model is in
// hook_runner.h and README "Remediation: node-drain hooks"). HookRunner's worker owns one.
//
// Thread-safety: none.

#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "detectors/core/detector.h"
#include "exporter/remediation/hook_config.h"

namespace fabricwatch::exporter {

// The values of the `result` label of fabricwatch_hook_runs_total.
inline constexpr std::string_view kHookResults[] = {
    "success",                  // exited 0
    "failure",                  // exited non-zero or killed by a signal
    "timeout",                  // killed at the deadline
    "cancelled",                // killed because the agent stopped (HookRunner::Stop)
    "spawn_error",              // could not be started (missing, not executable)
    "dry_run",                  // ran in dry-run mode and exited 0
    "suppressed_not_eligible",  // the finding may not drain (victim, not node-local)
    "suppressed_cooldown",      // a drain was requested less than `cooldown` ago
    "suppressed_rate_limit",    // max_drains_per_hour reached
    "suppressed_fleet_budget",  // the fleet-budget file says the partition's budget is spent
};

enum class HookPurpose { kDrain, kResume, kNotify };
std::string_view HookPurposeName(HookPurpose purpose);

struct PlannedRun {
  size_t hook = 0;  // index into HookConfig::hooks
  HookPurpose purpose = HookPurpose::kNotify;
  detect::AnomalyTransition transition;
};

struct Suppression {
  size_t hook = 0;
  std::string_view result;  // one of kHookResults (suppressed_*)
  std::string why;
};

struct HookPlan {
  std::vector<PlannedRun> runs;
  std::vector<Suppression> suppressed;
};

// "pfc_storm/critical/netdev=eth2,priority=3,role=source": a finding's identity.
std::string FindingKey(const std::string& detector, const detect::Finding& finding);

class DrainPolicy {
 public:
  explicit DrainPolicy(const HookConfig& config) : config_(config) {}

  HookPlan OnTransition(const detect::AnomalyTransition& transition, detect::TimePoint now,
                        bool fleet_budget_exhausted);
  // The resume that is due at `now`, if any.
  HookPlan OnTimer(detect::TimePoint now);
  // When OnTimer() next has something to do.
  std::optional<detect::TimePoint> next_deadline() const;
  // A drain was requested (or dry-run) and not yet resumed.
  bool drain_requested() const { return !drained_hooks_.empty(); }

 private:
  bool Matches(const HookSpec& hook, const detect::AnomalyTransition& t) const;

  const HookConfig& config_;
  std::set<std::string> holding_;         // eligible findings that keep the node drained
  std::deque<detect::TimePoint> drains_;  // drain requests of the last hour
  std::optional<detect::TimePoint> last_drain_;
  std::set<size_t> drained_hooks_;  // hooks that ran a drain since the last resume
  struct PendingResume {
    detect::AnomalyTransition clear;
    detect::TimePoint due;
  };
  std::optional<PendingResume> pending_resume_;
};

}  // namespace fabricwatch::exporter
