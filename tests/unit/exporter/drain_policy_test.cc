// DrainPolicy's gates added by issue 24: the switch the fleet rules hold suspect
// (hooks.suspect_peers_file) and drains held while jobs run (hooks.hold_drain_while_jobs); and
// by issue 37: drains confirmed by a probe of the finding's port (hooks.confirm_with_probe).
// The older rules (eligibility, cooldown, rate limit, hold-down, fleet budget) are tested in
// hook_runner_test.cc.
#include "exporter/remediation/drain_policy.h"

#include <gtest/gtest.h>

#include "tests/unit/exporter/hook_test_support.h"

namespace fabricwatch::exporter {
namespace {

using namespace hook_testing;

// A warning on eth2 with a job on its device, as a link_flap finding is attributed.
AnomalyTransition WarningWithJob(bool raised, detect::TimePoint time, std::string netdev = "eth2") {
  AnomalyTransition t = Storm("source", raised, time, std::move(netdev));
  t.finding.severity = Severity::kWarning;
  t.finding.jobs = {"slurm:1234"};
  return t;
}

// What the engine attributes now: settable by the test.
struct JobsNow {
  std::optional<std::vector<std::string>> jobs = std::vector<std::string>{"slurm:1234"};
  CurrentJobs Lookup() {
    return [this](const AnomalyTransition&) { return jobs; };
  }
};

HookConfig HoldConfig() {
  HookConfig config = PolicyConfig();
  config.hold_drain_while_jobs = true;
  return config;
}

TEST(DrainPolicyJobsTest, OffByDefaultADrainDoesNotWaitForJobs) {
  HookConfig config = PolicyConfig();
  ASSERT_FALSE(config.hold_drain_while_jobs);
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  EXPECT_EQ(Runs(policy.OnTransition(WarningWithJob(true, kT0), kT0, kOpen), config),
            (Names{"slurm:drain:raise", "webhook:notify:raise"}));
}

TEST(DrainPolicyJobsTest, NonCriticalDrainWaitsForTheJobsThenPassesTheGates) {
  HookConfig config = HoldConfig();
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  HookPlan raise = policy.OnTransition(WarningWithJob(true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(raise, config), Names{"webhook:notify:raise"});  // notify never waits
  EXPECT_EQ(Suppressed(raise, config), Names{"slurm:held_for_jobs"});
  EXPECT_NE(raise.suppressed[0].why.find("jobs slurm:1234"), std::string::npos)
      << raise.suppressed[0].why;
  EXPECT_EQ(policy.drains_held(), 1u);
  EXPECT_FALSE(policy.drain_requested());

  EXPECT_TRUE(policy.OnTimer(kT0 + hours(5), kOpen).runs.empty());  // the job still runs
  now.jobs = std::vector<std::string>{};                            // and ends
  HookPlan released = policy.OnTimer(kT0 + hours(6), kOpen);
  ASSERT_EQ(Runs(released, config), Names{"slurm:drain:raise"});
  EXPECT_TRUE(released.runs[0].transition.finding.jobs.empty());  // FABRICWATCH_JOBS is true
  EXPECT_EQ(policy.drains_held(), 0u);
  EXPECT_TRUE(policy.drain_requested());
  // The finding still holds the node: its clear resumes after the hold-down, as for any drain.
  policy.OnTransition(WarningWithJob(false, kT0 + hours(7)), kT0 + hours(7), kOpen);
  EXPECT_EQ(Runs(policy.OnTimer(kT0 + hours(7) + minutes(10), kOpen), config),
            Names{"slurm:resume:clear"});
}

TEST(DrainPolicyJobsTest, CriticalFindingsNeverWait) {
  HookConfig config = HoldConfig();
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  AnomalyTransition critical = Storm("source", true, kT0);
  critical.finding.jobs = {"slurm:1234"};
  EXPECT_EQ(Runs(policy.OnTransition(critical, kT0, kOpen), config),
            (Names{"slurm:drain:raise", "webhook:notify:raise"}));
  EXPECT_EQ(policy.drains_held(), 0u);
}

TEST(DrainPolicyJobsTest, NoJobsNoWait) {
  HookConfig config = HoldConfig();
  DrainPolicy policy(config);
  AnomalyTransition idle = WarningWithJob(true, kT0);
  idle.finding.jobs.clear();
  EXPECT_EQ(Runs(policy.OnTransition(idle, kT0, kOpen), config),
            (Names{"slurm:drain:raise", "webhook:notify:raise"}));
}

TEST(DrainPolicyJobsTest, AClearWhileHeldDropsTheDrainAndResumesNothing) {
  HookConfig config = HoldConfig();
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  policy.OnTransition(WarningWithJob(true, kT0), kT0, kOpen);
  HookPlan clear =
      policy.OnTransition(WarningWithJob(false, kT0 + minutes(3)), kT0 + minutes(3), kOpen);
  EXPECT_EQ(Runs(clear, config), Names{"webhook:notify:clear"});
  EXPECT_EQ(policy.drains_held(), 0u);
  now.jobs = std::vector<std::string>{};
  EXPECT_TRUE(policy.OnTimer(kT0 + hours(1), kOpen).runs.empty());
}

TEST(DrainPolicyJobsTest, AFindingGoneFromTheEngineIsNotDrainedOnItsOwn) {
  HookConfig config = HoldConfig();
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  policy.OnTransition(WarningWithJob(true, kT0), kT0, kOpen);
  now.jobs.reset();  // no longer active: its clear is queued behind this timer
  EXPECT_TRUE(policy.OnTimer(kT0 + minutes(1), kOpen).runs.empty());
  EXPECT_EQ(policy.drains_held(), 1u);
}

TEST(DrainPolicyJobsTest, MaxDrainHoldEndsTheWait) {
  HookConfig config = HoldConfig();
  config.max_drain_hold = hours(2);
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  policy.OnTransition(WarningWithJob(true, kT0), kT0, kOpen);
  EXPECT_TRUE(policy.OnTimer(kT0 + hours(2) - seconds(1), kOpen).runs.empty());
  HookPlan released = policy.OnTimer(kT0 + hours(2), kOpen);
  ASSERT_EQ(Runs(released, config), Names{"slurm:drain:raise"});
  EXPECT_EQ(released.runs[0].transition.finding.jobs, Names{"slurm:1234"});  // still running
}

TEST(DrainPolicyJobsTest, AReleasedDrainMeetsTheFleetBudgetAsItIsThen) {
  HookConfig config = HoldConfig();
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  policy.OnTransition(WarningWithJob(true, kT0), kT0, kOpen);
  now.jobs = std::vector<std::string>{};
  HookPlan released = policy.OnTimer(kT0 + minutes(1), kBudgetExhausted);
  EXPECT_TRUE(released.runs.empty());
  EXPECT_EQ(Suppressed(released, config), Names{"slurm:suppressed_fleet_budget"});
  EXPECT_EQ(policy.drains_held(), 0u);  // one decision per hold, as for a raise
}

TEST(DrainPolicyPeerTest, APortFacingASuspectSwitchDoesNotDrainAnotherPortDoes) {
  HookConfig config = PolicyConfig();
  config.cooldown = seconds(0);
  DrainPolicy policy(config);
  const DrainGates gates{.fleet_budget_exhausted = false, .suspect_peers = {"leaf 07"}};
  AnomalyTransition facing = Storm("source", true, kT0, "eth2");
  facing.finding.peer = "leaf 07 Ethernet1/3";  // an LLDP system name with a space
  HookPlan plan = policy.OnTransition(facing, kT0, gates);
  EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_peer_suspect"});
  EXPECT_NE(plan.suppressed[0].why.find("leaf 07 Ethernet1/3"), std::string::npos);

  AnomalyTransition elsewhere = Storm("source", true, kT0, "eth3");
  elsewhere.finding.peer = "leaf 070 Ethernet1/3";  // a prefix of the name is another switch
  EXPECT_EQ(Runs(policy.OnTransition(elsewhere, kT0, gates), config),
            (Names{"slurm:drain:raise", "webhook:notify:raise"}));
}

TEST(DrainPolicyPeerTest, NoPeerKnownNoSwitchGate) {
  HookConfig config = PolicyConfig();
  DrainPolicy policy(config);
  const DrainGates gates{.fleet_budget_exhausted = false, .suspect_peers = {"leaf07"}};
  EXPECT_EQ(Runs(policy.OnTransition(Storm("source", true, kT0), kT0, gates), config).size(), 2u);
}

TEST(DrainPolicyPeerTest, SuspectPeersFileFormat) {
  EXPECT_EQ(ParseSuspectPeers("leaf07\n  leaf 08 \t\n# comment\n\nspine1 # trailing\r\n"),
            (std::set<std::string, std::less<>>{"leaf07", "leaf 08", "spine1"}));
  EXPECT_TRUE(ParseSuspectPeers("").empty());
  EXPECT_TRUE(ParseSuspectPeers("\n\n#only\n").empty());
  const std::set<std::string, std::less<>> suspects{"leaf07"};
  EXPECT_NE(SuspectPeerOf("leaf07", suspects), nullptr);
  EXPECT_NE(SuspectPeerOf("leaf07 Ethernet1", suspects), nullptr);
  EXPECT_EQ(SuspectPeerOf("leaf07x Ethernet1", suspects), nullptr);
  EXPECT_EQ(SuspectPeerOf("", suspects), nullptr);
}

// ---------------------------------------------------------------------------------------------
// hooks.confirm_with_probe (issue 37)

// A link_flap finding on mlx5_0 port 1, drain-eligible.
AnomalyTransition PortFinding(Severity severity, bool raised, detect::TimePoint time) {
  AnomalyTransition t;
  t.detector = "link_flap";
  t.raised = raised;
  t.time = time;
  t.started = time;
  t.finding.severity = severity;
  t.finding.entity = {{"device", "mlx5_0"}, {"port", "1"}};
  t.finding.value = 4;
  t.finding.evidence = {{"flaps", 4}};
  t.finding.reason = "mlx5_0 port 1 went down 4 times in 10m";
  t.finding.drain_eligible = true;
  return t;
}

HookConfig ConfirmConfig() {
  HookConfig config = PolicyConfig();
  config.confirm_with_probe = true;
  return config;
}

probe::ProbeReport Report(probe::ProbeVerdict verdict, double bytes_per_second = 10e9) {
  probe::ProbeReport r;
  r.port = {"mlx5_0", 1};
  r.measurement.outcome = verdict == probe::ProbeVerdict::kFailed ? probe::ProbeOutcome::kPortDown
                          : verdict == probe::ProbeVerdict::kUnavailable
                              ? probe::ProbeOutcome::kUnsupported
                              : probe::ProbeOutcome::kOk;
  r.measurement.path = "loopback";
  r.measurement.bandwidth_bytes_per_second = bytes_per_second;
  r.measurement.latency_median = std::chrono::microseconds(3);
  r.verdict = verdict;
  r.expected_bits_per_second = 400e9;
  r.time = kT0;
  return r;
}

// Raises the warning under confirm_with_probe: no drain yet, one probe of mlx5_0/1 asked for.
std::string RaiseAndExpectProbe(DrainPolicy& policy, const HookConfig& config) {
  HookPlan raise = policy.OnTransition(PortFinding(Severity::kWarning, true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(raise, config), Names{"webhook:notify:raise"});  // notify never waits
  EXPECT_TRUE(raise.suppressed.empty());
  EXPECT_EQ(policy.probes_pending(), 1u);
  EXPECT_FALSE(policy.drain_requested());
  if (raise.probes.size() != 1) {
    ADD_FAILURE() << "expected one probe request, got " << raise.probes.size();
    return "";
  }
  EXPECT_EQ(raise.probes[0].port, (probe::PortRef{"mlx5_0", 1}));
  EXPECT_NE(raise.probes[0].reason.find("link_flap warning"), std::string::npos);
  return raise.probes[0].key;
}

TEST(DrainPolicyProbeTest, OffByDefaultAWarningDrainsAtOnce) {
  HookConfig config = PolicyConfig();
  ASSERT_FALSE(config.confirm_with_probe);
  DrainPolicy policy(config);
  HookPlan plan = policy.OnTransition(PortFinding(Severity::kWarning, true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(plan, config), (Names{"slurm:drain:raise", "webhook:notify:raise"}));
  EXPECT_TRUE(plan.probes.empty());
  EXPECT_FALSE(plan.runs[0].probe);
}

TEST(DrainPolicyProbeTest, DegradedOrFailedProbeDrainsWithTheProbeAsEvidence) {
  for (probe::ProbeVerdict verdict :
       {probe::ProbeVerdict::kDegraded, probe::ProbeVerdict::kFailed}) {
    SCOPED_TRACE(std::string(probe::ProbeVerdictName(verdict)));
    HookConfig config = ConfirmConfig();
    DrainPolicy policy(config);
    const std::string key = RaiseAndExpectProbe(policy, config);
    HookPlan plan = policy.OnProbeResult(key, Report(verdict), kT0 + seconds(2), kOpen);
    ASSERT_EQ(Runs(plan, config), Names{"slurm:drain:raise"});
    EXPECT_TRUE(policy.drain_requested());
    EXPECT_EQ(policy.probes_pending(), 0u);
    const PlannedRun& run = plan.runs[0];
    ASSERT_TRUE(run.probe);
    EXPECT_EQ(run.probe->verdict, verdict);
    std::map<std::string, double> evidence;
    for (const detect::Evidence& e : run.transition.finding.evidence) evidence[e.name] = e.value;
    EXPECT_DOUBLE_EQ(evidence["flaps"], 4);  // the finding's own evidence stays
    EXPECT_DOUBLE_EQ(evidence["probe_verdict"], probe::ProbeVerdictCode(verdict));
    EXPECT_EQ(evidence.contains("probe_bandwidth_bytes_per_second"),
              verdict == probe::ProbeVerdict::kDegraded);
    // The same answer twice plans nothing more.
    EXPECT_TRUE(policy.OnProbeResult(key, Report(verdict), kT0 + seconds(3), kOpen).runs.empty());
  }
}

TEST(DrainPolicyProbeTest, HealthyProbeSuppresses) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  const std::string key = RaiseAndExpectProbe(policy, config);
  probe::ProbeReport healthy = Report(probe::ProbeVerdict::kHealthy, 49e9);
  HookPlan plan = policy.OnProbeResult(key, healthy, kT0 + seconds(2), kOpen);
  EXPECT_TRUE(plan.runs.empty());
  EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_healthy"});
  EXPECT_NE(plan.suppressed[0].why.find("mlx5_0/1 is healthy (392.0 Gb/s, expected 400 Gb/s)"),
            std::string::npos)
      << plan.suppressed[0].why;
  EXPECT_FALSE(policy.drain_requested());
}

TEST(DrainPolicyProbeTest, RefusedOrUnavailableProbeDoesNotDrain) {
  HookConfig config = ConfirmConfig();
  {
    DrainPolicy policy(config);
    const std::string key = RaiseAndExpectProbe(policy, config);
    probe::ProbeReport refused;
    refused.port = {"mlx5_0", 1};
    refused.refused = "jobs_running";
    refused.detail = "mlx5_0/1: jobs slurm:1234 hold the device open";
    HookPlan plan = policy.OnProbeResult(key, refused, kT0, kOpen);
    EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_unconfirmed"});
    EXPECT_NE(plan.suppressed[0].why.find("jobs_running"), std::string::npos);
  }
  {
    DrainPolicy policy(config);
    const std::string key = RaiseAndExpectProbe(policy, config);
    HookPlan plan =
        policy.OnProbeResult(key, Report(probe::ProbeVerdict::kUnavailable), kT0, kOpen);
    EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_unconfirmed"});
    EXPECT_FALSE(policy.drain_requested());
  }
}

TEST(DrainPolicyProbeTest, CriticalDrainsAtOnceWithoutAProbe) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  HookPlan plan = policy.OnTransition(PortFinding(Severity::kCritical, true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(plan, config), (Names{"slurm:drain:raise", "webhook:notify:raise"}));
  EXPECT_TRUE(plan.probes.empty());
  EXPECT_EQ(policy.probes_pending(), 0u);
}

TEST(DrainPolicyProbeTest, NoRdmaPortNothingToProbeDrainsAsBefore) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  AnomalyTransition storm = Storm("source", true, kT0);  // {netdev, priority, role}
  storm.finding.severity = Severity::kWarning;
  HookPlan plan = policy.OnTransition(storm, kT0, kOpen);
  EXPECT_EQ(Runs(plan, config), (Names{"slurm:drain:raise", "webhook:notify:raise"}));
  EXPECT_TRUE(plan.probes.empty());
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("no RDMA port to probe"), std::string::npos);
}

TEST(DrainPolicyProbeTest, AClearWhileTheProbeRunsCancelsTheDrain) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  const std::string key = RaiseAndExpectProbe(policy, config);
  policy.OnTransition(PortFinding(Severity::kWarning, false, kT0 + seconds(1)), kT0 + seconds(1),
                      kOpen);
  EXPECT_EQ(policy.probes_pending(), 0u);
  HookPlan late = policy.OnProbeResult(key, Report(probe::ProbeVerdict::kFailed), kT0, kOpen);
  EXPECT_TRUE(late.runs.empty());
  EXPECT_TRUE(late.suppressed.empty());
}

TEST(DrainPolicyProbeTest, AConfirmedDrainStillPassesTheGates) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  const std::string key = RaiseAndExpectProbe(policy, config);
  HookPlan plan =
      policy.OnProbeResult(key, Report(probe::ProbeVerdict::kFailed), kT0, kBudgetExhausted);
  EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_fleet_budget"});
}

TEST(DrainPolicyProbeTest, ADrainHeldForJobsIsProbedWhenTheyEnd) {
  HookConfig config = ConfirmConfig();
  config.hold_drain_while_jobs = true;
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  AnomalyTransition raise = PortFinding(Severity::kWarning, true, kT0);
  raise.finding.jobs = {"slurm:1234"};
  EXPECT_EQ(Suppressed(policy.OnTransition(raise, kT0, kOpen), config),
            Names{"slurm:held_for_jobs"});
  now.jobs = std::vector<std::string>{};
  HookPlan released = policy.OnTimer(kT0 + minutes(5), kOpen);
  EXPECT_TRUE(released.runs.empty());
  ASSERT_EQ(released.probes.size(), 1u);
  HookPlan plan = policy.OnProbeResult(released.probes[0].key,
                                       Report(probe::ProbeVerdict::kDegraded), kT0, kOpen);
  EXPECT_EQ(Runs(plan, config), Names{"slurm:drain:raise"});
}

}  // namespace
}  // namespace fabricwatch::exporter
