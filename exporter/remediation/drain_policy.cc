#include "exporter/remediation/drain_policy.h"

#include <fmt/format.h>

#include <algorithm>

#include "detectors/core/anomaly_tracker.h"

namespace fabricwatch::exporter {

std::string_view HookPurposeName(HookPurpose purpose) {
  switch (purpose) {
    case HookPurpose::kDrain:
      return "drain";
    case HookPurpose::kResume:
      return "resume";
    case HookPurpose::kNotify:
      return "notify";
  }
  return "notify";
}
std::string FindingKey(const std::string& detector, const detect::Finding& finding) {
  std::string key = detector + "/" + std::string(detect::SeverityName(finding.severity)) + "/";
  for (const auto& [name, value] : finding.entity) key += name + "=" + value + ",";
  return key;
}
// ---------------------------------------------------------------------------------------------
// DrainPolicy

bool DrainPolicy::Matches(const HookSpec& hook, const detect::AnomalyTransition& t) const {
  if (!hook.detectors.empty() &&
      std::find(hook.detectors.begin(), hook.detectors.end(), t.detector) == hook.detectors.end()) {
    return false;
  }
  if (!hook.severities.empty() && std::find(hook.severities.begin(), hook.severities.end(),
                                            t.finding.severity) == hook.severities.end()) {
    return false;
  }
  return true;
}

HookPlan DrainPolicy::OnTransition(const detect::AnomalyTransition& t, detect::TimePoint now,
                                   bool fleet_budget_exhausted) {
  HookPlan plan;
  std::vector<size_t> drain_hooks;
  for (size_t i = 0; i < config_.hooks.size(); ++i) {
    const HookSpec& hook = config_.hooks[i];
    if (!Matches(hook, t)) continue;
    if (hook.action == HookAction::kNotify) {
      if (t.raised ? hook.on_raise : hook.on_clear) {
        plan.runs.push_back({i, HookPurpose::kNotify, t});
      }
    } else if (hook.on_raise) {
      drain_hooks.push_back(i);
    }
  }
  const std::string key = FindingKey(t.detector, t.finding);

  if (!t.raised) {
    // Only the findings that hold the node can lead to a resume; any other clear is not ours.
    if (holding_.erase(key) == 0 || !holding_.empty() || drained_hooks_.empty()) return plan;
    pending_resume_ = PendingResume{t, now + config_.clear_hold_down};
    HookPlan due = OnTimer(now);  // a zero hold-down resumes at once
    plan.runs.insert(plan.runs.end(), due.runs.begin(), due.runs.end());
    return plan;
  }

  if (drain_hooks.empty()) return plan;
  auto suppress_all = [&](std::string_view result, const std::string& why) {
    for (size_t i : drain_hooks) {
      plan.suppressed.push_back(
          {i, result,
           fmt::format("{} {}: {}", t.detector, detect::EntityText(t.finding.entity), why)});
    }
  };
  if (!t.finding.drain_eligible) {
    suppress_all("suppressed_not_eligible",
                 "the finding is not drain-eligible (not node-local, a storm victim or "
                 "maintenance)");
    return plan;
  }
  // From here on the finding holds the node, even when this raise is suppressed: the node must
  // not be resumed while it is active, whoever drained it.
  holding_.insert(key);
  pending_resume_.reset();
  if (fleet_budget_exhausted) {
    suppress_all("suppressed_fleet_budget", "the fleet drain budget is exhausted");
    return plan;
  }
  while (!drains_.empty() && now - drains_.front() >= std::chrono::hours(1)) drains_.pop_front();
  if (last_drain_ && now - *last_drain_ < config_.cooldown) {
    suppress_all(
        "suppressed_cooldown",
        fmt::format("last drain request {}s ago, cooldown {}s",
                    std::chrono::duration_cast<std::chrono::seconds>(now - *last_drain_).count(),
                    std::chrono::duration_cast<std::chrono::seconds>(config_.cooldown).count()));
    return plan;
  }
  if (drains_.size() >= static_cast<size_t>(config_.max_drains_per_hour)) {
    suppress_all("suppressed_rate_limit",
                 fmt::format("{} drain requests in the last hour (max_drains_per_hour {})",
                             drains_.size(), config_.max_drains_per_hour));
    return plan;
  }
  drains_.push_back(now);
  last_drain_ = now;
  for (size_t i : drain_hooks) {
    plan.runs.push_back({i, HookPurpose::kDrain, t});
    drained_hooks_.insert(i);
  }
  // Hooks run in the order the operator listed them.
  std::stable_sort(plan.runs.begin(), plan.runs.end(),
                   [](const PlannedRun& a, const PlannedRun& b) { return a.hook < b.hook; });
  return plan;
}

HookPlan DrainPolicy::OnTimer(detect::TimePoint now) {
  HookPlan plan;
  if (!pending_resume_ || now < pending_resume_->due) return plan;
  for (size_t i : drained_hooks_) {
    // A drain hook without `clear` in `on` leaves the resume to a human.
    if (config_.hooks[i].on_clear) {
      plan.runs.push_back({i, HookPurpose::kResume, pending_resume_->clear});
    }
  }
  drained_hooks_.clear();
  pending_resume_.reset();
  return plan;
}

std::optional<detect::TimePoint> DrainPolicy::next_deadline() const {
  if (!pending_resume_) return std::nullopt;
  return pending_resume_->due;
}

}  // namespace fabricwatch::exporter
