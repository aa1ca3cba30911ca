#pragma once
// DrainPolicy: which node-drain hooks run, and which are suppressed, as a pure function of the
// anomaly transitions, the time and the fleet-budget toggle (the safety model is in
// hook_runner.h and README "Remediation: node-drain hooks"). HookRunner's worker owns one.
//
// Thread-safety: none.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "detectors/core/detector.h"
#include "exporter/probe/probe_policy.h"
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
    "suppressed_peer_suspect",  // the finding's port faces a switch listed as suspect
    "held_for_jobs",            // not critical and jobs run on the device: drain when they end
    // hooks.confirm_with_probe: a non-critical drain waits for a probe of the finding's port.
    "suppressed_probe_healthy",  // the probe found the port healthy: no drain
    // The probe could not say (unavailable, refused other than for jobs, or no answer within
    // ProbeAnswerWait): no drain. A probe refused because jobs run is held_for_jobs instead.
    "suppressed_probe_unconfirmed",
};

// A drain whose probe was refused because jobs run asks again no sooner than this after the
// refusal (and only once the finding's own jobs have ended, when the engine says which run).
inline constexpr std::chrono::seconds kProbeRetryAfterJobs{60};

enum class HookPurpose { kDrain, kResume, kNotify };
std::string_view HookPurposeName(HookPurpose purpose);

struct PlannedRun {
  size_t hook = 0;  // index into HookConfig::hooks
  HookPurpose purpose = HookPurpose::kNotify;
  detect::AnomalyTransition transition;
  // hooks.confirm_with_probe: the probe that confirmed this drain (FABRICWATCH_PROBE_*).
  std::optional<probe::ProbeReport> probe = std::nullopt;
};

// A probe the policy waits for before it decides a drain (HookRunner asks the ProbeRunner and
// hands the answer to DrainPolicy::OnProbeResult with `key`).
struct ProbeRequest {
  std::string key;  // FindingKey of the finding whose drain waits
  probe::PortRef port;
  std::string reason;  // for the probe's log line
  // This request's number (DrainPolicy's own sequence, from 1): its start and its answer come
  // back with it, so an answer to an earlier request of the same finding (one that expired, then
  // the finding was raised again) is told apart and ignored.
  uint64_t seq = 0;
};

struct Suppression {
  size_t hook = 0;
  std::string_view result;  // one of kHookResults (suppressed_*)
  std::string why;
};

struct HookPlan {
  std::vector<PlannedRun> runs;
  std::vector<Suppression> suppressed;
  std::vector<ProbeRequest> probes;
  std::vector<std::string> notes;  // decisions worth a log line that are not suppressions
};

// "pfc_storm/critical/netdev=eth2,priority=3,role=source": a finding's identity.
std::string FindingKey(const std::string& detector, const detect::Finding& finding);

// What the gates outside the policy say at one moment: the fleet-budget toggle file, and the
// switches the fleet rules hold suspect (hooks.suspect_peers_file, peer names).
struct DrainGates {
  bool fleet_budget_exhausted = false;
  std::set<std::string, std::less<>> suspect_peers;
};

// The jobs the engine attributes now to the active finding of a transition (Finding::jobs,
// detectors/core/attribution.h); nullopt when that finding is no longer active.
using CurrentJobs =
    std::function<std::optional<std::vector<std::string>>(const detect::AnomalyTransition&)>;

// The lines of hooks.suspect_peers_file: one switch name a line, as the receiver writes the
// peer_name label of FabricwatchDrainPeerSuspect; '#' starts a comment, blanks are trimmed.
std::set<std::string, std::less<>> ParseSuspectPeers(std::string_view text);

// The suspect switch a finding's port faces: the entry of `suspects` that names the peer of
// Finding::peer ("leaf07 Ethernet1/3" faces "leaf07"; design §5.10), or null.
const std::string* SuspectPeerOf(std::string_view peer,
                                 const std::set<std::string, std::less<>>& suspects);

// The RDMA port a finding names ({device, port} in its entity), the one a drain-confirming probe
// measures; nullopt for a finding without one (netdev-only, node-wide): such a drain is not
// held for a probe (nothing to probe), it goes on as without hooks.confirm_with_probe.
std::optional<probe::PortRef> ProbePortOf(const detect::Finding& finding);

class DrainPolicy {
 public:
  // `current_jobs` releases drains held for jobs (hooks.hold_drain_while_jobs); without it a
  // held drain waits for its finding to clear or for max_drain_hold. `probe_answer_wait`: how
  // long a drain waits for its probe's answer (probe::ProbeAnswerWait of probe.timeout).
  explicit DrainPolicy(
      const HookConfig& config, CurrentJobs current_jobs = {},
      std::chrono::milliseconds probe_answer_wait = probe::ProbeAnswerWait(probe::ProbeOptions{}))
      : config_(config),
        current_jobs_(std::move(current_jobs)),
        probe_answer_wait_(probe_answer_wait) {}

  HookPlan OnTransition(const detect::AnomalyTransition& transition, detect::TimePoint now,
                        const DrainGates& gates);
  // The resume that is due at `now`, if any; the held drains whose jobs have ended, planned
  // through the same gates as a raise (and probed first under confirm_with_probe), or whose
  // max_drain_hold has passed while jobs still run, drained without a probe; the drains whose
  // probe has not answered within probe_answer_wait: suppressed_probe_unconfirmed.
  HookPlan OnTimer(detect::TimePoint now, const DrainGates& gates);
  // hooks.confirm_with_probe: the answer to a ProbeRequest of a plan. Failed or degraded: the
  // drain goes through the gates, the probe's values in its evidence; healthy:
  // suppressed_probe_healthy; refused because jobs run (jobs_running): the drain is held for
  // jobs (held_for_jobs, counted once however often it comes back), probed again when they end
  // (no sooner than kProbeRetryAfterJobs), drained unconfirmed at max_drain_hold; refused
  // otherwise or unavailable: suppressed_probe_unconfirmed. An answer for a finding that cleared
  // meanwhile, of a request already answered or expired (`seq` is not the one awaited) or past
  // the request's deadline plans nothing but a note (a late answer leaves the drain to expire:
  // suppressed_probe_unconfirmed, once).
  HookPlan OnProbeResult(const std::string& key, uint64_t seq, const probe::ProbeReport& report,
                         detect::TimePoint now, const DrainGates& gates);
  // The ProbeRunner began the probe of request `seq` (taken from its queue): the drain waits
  // probe_answer_wait from now for the answer, instead of its queue bound. Design §5.11: a
  // request waits in the queue at most probe_answer_wait for every request awaited and not yet
  // started when it was asked, its own included; once started, probe_answer_wait.
  void OnProbeStarted(const std::string& key, uint64_t seq, detect::TimePoint now);
  // When OnTimer() next has something to do; never a time at or before the last OnTimer():
  // what is still there then waits for something other than the clock (jobs to end, a clear),
  // which the caller's regular poll sees.
  std::optional<detect::TimePoint> next_deadline() const;
  // A drain was requested (or dry-run) and not yet resumed.
  bool drain_requested() const { return !drained_hooks_.empty(); }
  // Drains held because jobs run on the finding's device.
  size_t drains_held() const { return held_.size(); }
  // Drains waiting for a probe's answer (hooks.confirm_with_probe).
  size_t probes_pending() const { return awaiting_probe_.size(); }
  std::chrono::milliseconds probe_answer_wait() const { return probe_answer_wait_; }

 private:
  bool Matches(const HookSpec& hook, const detect::AnomalyTransition& t) const;
  // The gates every drain passes, for a raise or a released hold: fleet budget, suspect switch,
  // cooldown, rate limit. Appends the runs or the suppressions to `plan`.
  void PlanDrain(const detect::AnomalyTransition& t, const std::vector<size_t>& drain_hooks,
                 detect::TimePoint now, const DrainGates& gates, HookPlan& plan);
  HookPlan ReleaseHeld(detect::TimePoint now, const DrainGates& gates);
  // The drains whose probe has not answered within probe_answer_wait_.
  void ExpireProbes(detect::TimePoint now, HookPlan& plan);
  // PlanDrain, or with hooks.confirm_with_probe and a non-critical finding on an RDMA port,
  // a ProbeRequest first (the drain waits in awaiting_probe_). `held_since`: the drain was held
  // for jobs since then (a refusal puts it back with that start, not counted again).
  void PlanOrConfirm(const detect::AnomalyTransition& t, const std::vector<size_t>& drain_hooks,
                     detect::TimePoint now, const DrainGates& gates, HookPlan& plan,
                     std::optional<detect::TimePoint> held_since = std::nullopt);

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
  CurrentJobs current_jobs_;
  struct HeldDrain {
    detect::AnomalyTransition raise;
    std::vector<size_t> drain_hooks;
    // held_: when the hold began (max_drain_hold counts from it); awaiting_probe_: when the
    // probe was asked (probe_answer_wait_ counts from it).
    detect::TimePoint since;
    // awaiting_probe_: when the drain was held for jobs before its probe, if it was.
    std::optional<detect::TimePoint> held_since = std::nullopt;
    // held_: the probe was refused because jobs run; asked again no sooner than retry_after
    // (moved on by kProbeRetryAfterJobs while the jobs still run then).
    bool probe_refused_for_jobs = false;
    detect::TimePoint retry_after{};
    // awaiting_probe_: the request's number, whether the runner started it, and when the drain
    // stops waiting (the queue bound until it starts, then start + probe_answer_wait_).
    uint64_t seq = 0;
    bool started = false;
    detect::TimePoint deadline{};
  };
  std::map<std::string, HeldDrain> held_;            // by FindingKey
  std::map<std::string, HeldDrain> awaiting_probe_;  // by FindingKey
  std::chrono::milliseconds probe_answer_wait_;
  uint64_t next_seq_ = 0;
  std::optional<detect::TimePoint> last_timer_;  // `now` of the last OnTimer()
};

}  // namespace fabricwatch::exporter
