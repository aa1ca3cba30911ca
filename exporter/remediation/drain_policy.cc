#include "exporter/remediation/drain_policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/value_parse.h"
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
std::set<std::string, std::less<>> ParseSuspectPeers(std::string_view text) {
  std::set<std::string, std::less<>> peers;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    line = TrimSpace(line.substr(0, line.find('#')));
    if (!line.empty()) peers.emplace(line);
    pos = end + 1;
  }
  return peers;
}

const std::string* SuspectPeerOf(std::string_view peer,
                                 const std::set<std::string, std::less<>>& suspects) {
  // "name port": a name may itself hold spaces (an LLDP system name), so match it as a prefix.
  for (const std::string& name : suspects) {
    if (!name.empty() && peer.starts_with(name) &&
        (peer.size() == name.size() || peer[name.size()] == ' ')) {
      return &name;
    }
  }
  return nullptr;
}

std::string FindingKey(const std::string& detector, const detect::Finding& finding) {
  std::string key = detector + "/" + std::string(detect::SeverityName(finding.severity)) + "/";
  for (const auto& [name, value] : finding.entity) key += name + "=" + value + ",";
  return key;
}
std::optional<probe::PortRef> ProbePortOf(const detect::Finding& finding) {
  const std::string* device = nullptr;
  const std::string* port = nullptr;
  for (const auto& [name, value] : finding.entity) {
    if (name == "device") device = &value;
    if (name == "port") port = &value;
  }
  if (device == nullptr || port == nullptr) return std::nullopt;
  return probe::ParsePortText(*device + "/" + *port);
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
                                   const DrainGates& gates) {
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
    held_.erase(key);            // a held drain of a finding that is gone is not wanted any more
    awaiting_probe_.erase(key);  // nor one waiting for a probe: its answer plans nothing
    // Only the findings that hold the node can lead to a resume; any other clear is not ours.
    if (holding_.erase(key) == 0 || !holding_.empty() || drained_hooks_.empty()) return plan;
    pending_resume_ = PendingResume{t, now + config_.clear_hold_down};
    HookPlan due = OnTimer(now, gates);  // a zero hold-down resumes at once
    plan.runs.insert(plan.runs.end(), due.runs.begin(), due.runs.end());
    plan.suppressed.insert(plan.suppressed.end(), due.suppressed.begin(), due.suppressed.end());
    return plan;
  }

  if (drain_hooks.empty()) return plan;
  if (!t.finding.drain_eligible) {
    for (size_t i : drain_hooks) {
      plan.suppressed.push_back({i, "suppressed_not_eligible",
                                 fmt::format("{} {}: the finding is not drain-eligible (not "
                                             "node-local, a storm victim or maintenance)",
                                             t.detector, detect::EntityText(t.finding.entity))});
    }
    return plan;
  }
  // From here on the finding holds the node, even when this raise is suppressed or held: the
  // node must not be resumed while it is active, whoever drained it.
  holding_.insert(key);
  pending_resume_.reset();
  // A warning is worth a job's life less than a critical finding is (issue 24): with
  // hold_drain_while_jobs, a non-critical finding on a device that jobs hold open waits for
  // them. Critical findings never wait.
  if (config_.hold_drain_while_jobs && t.finding.severity != detect::Severity::kCritical &&
      !t.finding.jobs.empty()) {
    held_[key] = HeldDrain{t, drain_hooks, now};
    for (size_t i : drain_hooks) {
      plan.suppressed.push_back(
          {i, "held_for_jobs",
           fmt::format(
               "{} {}: {} finding, jobs {} run on the device; the drain waits for them "
               "(hooks.hold_drain_while_jobs{})",
               t.detector, detect::EntityText(t.finding.entity),
               detect::SeverityName(t.finding.severity), fmt::join(t.finding.jobs, ","),
               config_.max_drain_hold.count() > 0
                   ? fmt::format(", at most {}s", std::chrono::duration_cast<std::chrono::seconds>(
                                                      config_.max_drain_hold)
                                                      .count())
                   : std::string())});
    }
    return plan;
  }
  PlanOrConfirm(t, drain_hooks, now, gates, plan);
  // Hooks run in the order the operator listed them.
  std::stable_sort(plan.runs.begin(), plan.runs.end(),
                   [](const PlannedRun& a, const PlannedRun& b) { return a.hook < b.hook; });
  return plan;
}

void DrainPolicy::PlanDrain(const detect::AnomalyTransition& t,
                            const std::vector<size_t>& drain_hooks, detect::TimePoint now,
                            const DrainGates& gates, HookPlan& plan) {
  auto suppress_all = [&](std::string_view result, const std::string& why) {
    for (size_t i : drain_hooks) {
      plan.suppressed.push_back(
          {i, result,
           fmt::format("{} {}: {}", t.detector, detect::EntityText(t.finding.entity), why)});
    }
  };
  if (gates.fleet_budget_exhausted) {
    suppress_all("suppressed_fleet_budget", "the fleet drain budget is exhausted");
    return;
  }
  // The switch gate (issue 24: "a node whose ports face one bad switch is not drain-eligible"):
  // the fleet rules name the suspect switch (FabricwatchDrainPeerSuspect), the receiver lists it
  // in hooks.suspect_peers_file. Only findings on ports facing it wait; another port's fault
  // still drains.
  if (SuspectPeerOf(t.finding.peer, gates.suspect_peers) != nullptr) {
    suppress_all("suppressed_peer_suspect",
                 fmt::format("the port faces {}, a switch the fleet rules hold suspect ({})",
                             t.finding.peer, config_.suspect_peers_file));
    return;
  }
  while (!drains_.empty() && now - drains_.front() >= std::chrono::hours(1)) drains_.pop_front();
  if (last_drain_ && now - *last_drain_ < config_.cooldown) {
    suppress_all(
        "suppressed_cooldown",
        fmt::format("last drain request {}s ago, cooldown {}s",
                    std::chrono::duration_cast<std::chrono::seconds>(now - *last_drain_).count(),
                    std::chrono::duration_cast<std::chrono::seconds>(config_.cooldown).count()));
    return;
  }
  if (drains_.size() >= static_cast<size_t>(config_.max_drains_per_hour)) {
    suppress_all("suppressed_rate_limit",
                 fmt::format("{} drain requests in the last hour (max_drains_per_hour {})",
                             drains_.size(), config_.max_drains_per_hour));
    return;
  }
  drains_.push_back(now);
  last_drain_ = now;
  for (size_t i : drain_hooks) {
    plan.runs.push_back({i, HookPurpose::kDrain, t});
    drained_hooks_.insert(i);
  }
}

void DrainPolicy::PlanOrConfirm(const detect::AnomalyTransition& t,
                                const std::vector<size_t>& drain_hooks, detect::TimePoint now,
                                const DrainGates& gates, HookPlan& plan,
                                std::optional<detect::TimePoint> held_since) {
  // Issue 37: the policy "may require a failed or degraded probe before a non-critical drain".
  // A critical finding (an escalated warning among them: escalation makes it critical) drains
  // as before: waiting would cost the next job more than the probe could save it.
  if (!config_.confirm_with_probe || t.finding.severity == detect::Severity::kCritical) {
    PlanDrain(t, drain_hooks, now, gates, plan);
    return;
  }
  const std::string entity = detect::EntityText(t.finding.entity);
  const std::optional<probe::PortRef> port = ProbePortOf(t.finding);
  if (!port) {
    plan.notes.push_back(fmt::format(
        "{} {}: no RDMA port to probe (hooks.confirm_with_probe); the drain goes on unconfirmed",
        t.detector, entity));
    PlanDrain(t, drain_hooks, now, gates, plan);
    return;
  }
  const std::string key = FindingKey(t.detector, t.finding);
  // A second raise of a finding whose probe is on its way waits for the same answer, and no
  // longer than the first did.
  if (auto it = awaiting_probe_.find(key); it != awaiting_probe_.end()) {
    it->second.raise = t;
    it->second.drain_hooks = drain_hooks;
    return;
  }
  // The queue bound: the probes awaited and not yet started may all run before this one, each
  // within probe_answer_wait_ (the runner runs one at a time); its own start resets the wait
  // (OnProbeStarted).
  size_t ahead = 0;
  for (const auto& [other, waiting] : awaiting_probe_) ahead += waiting.started ? 0 : 1;
  HeldDrain waiting{t, drain_hooks, now, held_since};
  waiting.seq = ++next_seq_;
  waiting.deadline = now + probe_answer_wait_ * static_cast<int64_t>(ahead + 1);
  awaiting_probe_[key] = std::move(waiting);
  plan.probes.push_back({key, *port,
                         fmt::format("drain confirmation: {} {} {}", t.detector,
                                     detect::SeverityName(t.finding.severity), entity),
                         next_seq_});
  plan.notes.push_back(
      fmt::format("{} {}: drain held until a probe of {} confirms it "
                  "(hooks.confirm_with_probe)",
                  t.detector, entity, probe::PortText(*port)));
}

void DrainPolicy::OnProbeStarted(const std::string& key, uint64_t seq, detect::TimePoint now) {
  auto it = awaiting_probe_.find(key);
  // Another request's start (expired, then raised again), or a finding that cleared: nothing.
  if (it == awaiting_probe_.end() || it->second.seq != seq || it->second.started) return;
  it->second.started = true;
  it->second.deadline = now + probe_answer_wait_;
}

HookPlan DrainPolicy::OnProbeResult(const std::string& key, uint64_t seq,
                                    const probe::ProbeReport& report, detect::TimePoint now,
                                    const DrainGates& gates) {
  HookPlan plan;
  auto it = awaiting_probe_.find(key);
  if (it == awaiting_probe_.end() || it->second.seq != seq) {
    // Cleared meanwhile, answered already, or the answer to an earlier request that expired
    // (the finding was raised again since): it must not decide the drain now awaited.
    plan.notes.push_back(fmt::format(
        "{}: ignored the answer of probe request {} of {} ({}): {}", key, seq,
        probe::PortText(report.port), report.refused.empty() ? "measured" : report.refused,
        it == awaiting_probe_.end()
            ? std::string("no drain waits for it")
            : fmt::format("the drain now waits for request {}", it->second.seq)));
    return plan;
  }
  if (now >= it->second.deadline) {
    // Past its deadline the drain no longer waits: it expires (suppressed_probe_unconfirmed),
    // whatever the late answer says.
    plan.notes.push_back(
        fmt::format("{}: ignored the answer of probe request {} of {}: it came "
                    "after the drain stopped waiting",
                    key, seq, probe::PortText(report.port)));
    ExpireProbes(now, plan);
    return plan;
  }
  HeldDrain waiting = std::move(it->second);
  awaiting_probe_.erase(it);
  detect::AnomalyTransition& t = waiting.raise;
  const std::string what = fmt::format("{} {}", t.detector, detect::EntityText(t.finding.entity));
  auto suppress_all = [&](std::string_view result, const std::string& why) {
    for (size_t i : waiting.drain_hooks) {
      plan.suppressed.push_back({i, result, fmt::format("{}: {}", what, why)});
    }
  };
  const std::string port = probe::PortText(report.port);
  if (report.refused == "jobs_running") {
    // Jobs run on the probed path: the probe waits for them, as a drain does with
    // hold_drain_while_jobs, instead of the drain being lost (design §5.11). A drain held
    // before keeps its start (max_drain_hold) and is not counted as held again.
    const bool counted = waiting.held_since.has_value();
    HeldDrain held{t, waiting.drain_hooks, waiting.held_since.value_or(now)};
    held.probe_refused_for_jobs = true;
    held.retry_after = now + kProbeRetryAfterJobs;
    held_[key] = std::move(held);
    const std::string why = fmt::format(
        "the probe of {} was refused ({}); the drain waits for the jobs to end and is probed "
        "then{}",
        port, report.detail,
        config_.max_drain_hold.count() > 0
            ? fmt::format(
                  ", drained without a probe after max_drain_hold ({}s)",
                  std::chrono::duration_cast<std::chrono::seconds>(config_.max_drain_hold).count())
            : std::string());
    if (counted) {
      plan.notes.push_back(fmt::format("{}: still held for jobs: {}", what, why));
    } else {
      suppress_all("held_for_jobs", why);
    }
    return plan;
  }
  if (!report.measured()) {
    suppress_all("suppressed_probe_unconfirmed",
                 fmt::format("the probe of {} was refused ({}: {}); a non-critical drain needs a "
                             "failed or degraded probe",
                             port, report.refused, report.detail));
    return plan;
  }
  switch (report.verdict) {
    case probe::ProbeVerdict::kHealthy:
      // The path says what "healthy" covers: a loopback probe turns around inside the HCA and
      // says nothing about the cable (design §5.11).
      suppress_all(
          "suppressed_probe_healthy",
          fmt::format(
              "the probe of {} is healthy on the {} path ({:.1f} Gb/s{}{}){}", port,
              report.measurement.path.empty() ? "unknown" : report.measurement.path,
              report.measurement.bandwidth_bytes_per_second * 8 / 1e9,
              report.cached ? ", the port's last result" : "",
              report.expected_bits_per_second > 0
                  ? fmt::format(", expected {:.0f} Gb/s", report.expected_bits_per_second / 1e9)
                  : std::string(),
              report.measurement.path == "loopback"
                  ? "; a loopback probe does not cover the cable (probe.partners)"
                  : ""));
      return plan;
    case probe::ProbeVerdict::kUnavailable:
      suppress_all("suppressed_probe_unconfirmed",
                   fmt::format("the probe of {} could not measure ({}: {})", port,
                               probe::ProbeOutcomeName(report.measurement.outcome),
                               report.measurement.error));
      return plan;
    case probe::ProbeVerdict::kDegraded:
    case probe::ProbeVerdict::kFailed:
      break;
  }
  // Confirmed: the drain goes out with this probe's values as evidence (FABRICWATCH_EVIDENCE),
  // in place of an earlier probe's that the engine attached to the finding.
  std::erase_if(t.finding.evidence,
                [](const detect::Evidence& e) { return e.name.starts_with("probe_"); });
  for (const probe::ProbeEvidenceValue& e : probe::ProbeEvidence(report)) {
    t.finding.evidence.push_back({std::string(e.name), e.value});
  }
  t.time = now;
  const size_t first = plan.runs.size();
  PlanDrain(t, waiting.drain_hooks, now, gates, plan);
  for (size_t i = first; i < plan.runs.size(); ++i) plan.runs[i].probe = report;
  std::stable_sort(plan.runs.begin(), plan.runs.end(),
                   [](const PlannedRun& a, const PlannedRun& b) { return a.hook < b.hook; });
  return plan;
}

HookPlan DrainPolicy::ReleaseHeld(detect::TimePoint now, const DrainGates& gates) {
  HookPlan plan;
  for (auto it = held_.begin(); it != held_.end();) {
    HeldDrain& held = it->second;
    std::optional<std::vector<std::string>> jobs;
    if (current_jobs_) {
      jobs = current_jobs_(held.raise);
      if (!jobs) {  // no longer active: its clear is on its way, and erases the hold
        ++it;
        continue;
      }
    }
    const bool expired =
        config_.max_drain_hold.count() > 0 && now - held.since >= config_.max_drain_hold;
    // Jobs still run: the finding's own (unknown counts as running), or the probe was refused
    // for jobs on its path (the engine's attribution may not see the partner's device).
    const bool jobs_run = !jobs || !jobs->empty() || held.probe_refused_for_jobs;
    // The drain goes out with the finding as it is now (no jobs, or the ones still running
    // when max_drain_hold ran out), so the hook's FABRICWATCH_JOBS tells the truth.
    detect::AnomalyTransition raise = held.raise;
    if (jobs) raise.finding.jobs = *jobs;
    raise.time = now;
    if (expired && jobs_run) {
      // max_drain_hold is the operator's bound on waiting for jobs: a probe now would be refused
      // for the same jobs, and the drain would be lost (design §5.11).
      if (config_.confirm_with_probe) {
        plan.notes.push_back(fmt::format(
            "{} {}: max_drain_hold passed while jobs still run; drained without a probe",
            raise.detector, detect::EntityText(raise.finding.entity)));
      }
      PlanDrain(raise, held.drain_hooks, now, gates, plan);
      it = held_.erase(it);
      continue;
    }
    // Refused for jobs: asked again once the finding's jobs ended (or are unknown) and the
    // retry time has come; a refusal costs nothing, a probe stream would.
    const bool release = held.probe_refused_for_jobs
                             ? now >= held.retry_after && (!jobs || jobs->empty())
                             : jobs && jobs->empty();
    if (!release && held.probe_refused_for_jobs && now >= held.retry_after) {
      // The retry time came and the jobs still run: the next look is a retry interval away
      // (a deadline left in the past would have the caller's timer fire at once, for ever).
      held.retry_after = now + kProbeRetryAfterJobs;
    }
    if (!release) {
      ++it;
      continue;
    }
    const detect::TimePoint held_since = held.since;
    const std::vector<size_t> drain_hooks = held.drain_hooks;
    it = held_.erase(it);
    PlanOrConfirm(raise, drain_hooks, now, gates, plan, held_since);
  }
  return plan;
}

void DrainPolicy::ExpireProbes(detect::TimePoint now, HookPlan& plan) {
  for (auto it = awaiting_probe_.begin(); it != awaiting_probe_.end();) {
    if (now < it->second.deadline) {
      ++it;
      continue;
    }
    const detect::AnomalyTransition& t = it->second.raise;
    for (size_t i : it->second.drain_hooks) {
      plan.suppressed.push_back(
          {i, "suppressed_probe_unconfirmed",
           fmt::format(
               "{} {}: {}; a non-critical drain needs a failed or degraded probe", t.detector,
               detect::EntityText(t.finding.entity),
               it->second.started
                   ? fmt::format(
                         "no probe answer within {}s of the probe's start "
                         "(probe.timeout, twice, plus the process margin)",
                         std::chrono::duration_cast<std::chrono::seconds>(probe_answer_wait_)
                             .count())
                   : fmt::format(
                         "no probe answer within {}s: the probe did not start (it "
                         "may wait {}s for each probe awaited ahead of it, and its own)",
                         std::chrono::duration_cast<std::chrono::seconds>(it->second.deadline -
                                                                          it->second.since)
                             .count(),
                         std::chrono::duration_cast<std::chrono::seconds>(probe_answer_wait_)
                             .count()))});
    }
    it = awaiting_probe_.erase(it);
  }
}

HookPlan DrainPolicy::OnTimer(detect::TimePoint now, const DrainGates& gates) {
  last_timer_ = now;
  HookPlan plan = ReleaseHeld(now, gates);
  ExpireProbes(now, plan);
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
  std::optional<detect::TimePoint> next;
  auto consider = [this, &next](detect::TimePoint t) {
    // OnTimer() at last_timer_ did what was due then; an entry whose time had come and that is
    // still there waits for jobs or a clear (a held drain whose finding is leaving the engine,
    // max_drain_hold passed): not a deadline, or the caller would wake at once, for ever.
    if (last_timer_ && t <= *last_timer_) return;
    if (!next || t < *next) next = t;
  };
  if (pending_resume_) consider(pending_resume_->due);
  for (const auto& [key, waiting] : awaiting_probe_) consider(waiting.deadline);
  for (const auto& [key, held] : held_) {
    if (config_.max_drain_hold.count() > 0) consider(held.since + config_.max_drain_hold);
    if (held.probe_refused_for_jobs) consider(held.retry_after);
  }
  return next;
}

}  // namespace fabricwatch::exporter
