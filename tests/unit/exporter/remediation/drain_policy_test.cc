// DrainPolicy's gates added by issue 24: the switch the fleet rules hold suspect
// (hooks.suspect_peers_file) and drains held while jobs run (hooks.hold_drain_while_jobs); and
// by issue 37: drains confirmed by a probe of the finding's port (hooks.confirm_with_probe).
// The older rules (eligibility, cooldown, rate limit, hold-down, fleet budget) are tested in
// hook_runner_test.cc.
#include "exporter/remediation/drain_policy.h"

#include <gtest/gtest.h>

#include "tests/unit/exporter/remediation/hook_test_support.h"

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
ProbeRequest RaiseAndExpectProbe(DrainPolicy& policy, const HookConfig& config) {
  HookPlan raise = policy.OnTransition(PortFinding(Severity::kWarning, true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(raise, config), Names{"webhook:notify:raise"});  // notify never waits
  EXPECT_TRUE(raise.suppressed.empty());
  EXPECT_EQ(policy.probes_pending(), 1u);
  EXPECT_FALSE(policy.drain_requested());
  if (raise.probes.size() != 1) {
    ADD_FAILURE() << "expected one probe request, got " << raise.probes.size();
    return {};
  }
  EXPECT_EQ(raise.probes[0].port, (probe::PortRef{"mlx5_0", 1}));
  EXPECT_NE(raise.probes[0].reason.find("link_flap warning"), std::string::npos);
  EXPECT_GT(raise.probes[0].seq, 0u);
  return raise.probes[0];
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
    const ProbeRequest req = RaiseAndExpectProbe(policy, config);
    HookPlan plan =
        policy.OnProbeResult(req.key, req.seq, Report(verdict), kT0 + seconds(2), kOpen);
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
    EXPECT_TRUE(policy.OnProbeResult(req.key, req.seq, Report(verdict), kT0 + seconds(3), kOpen)
                    .runs.empty());
  }
}

TEST(DrainPolicyProbeTest, HealthyProbeSuppresses) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  probe::ProbeReport healthy = Report(probe::ProbeVerdict::kHealthy, 49e9);
  HookPlan plan = policy.OnProbeResult(req.key, req.seq, healthy, kT0 + seconds(2), kOpen);
  EXPECT_TRUE(plan.runs.empty());
  EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_healthy"});
  // The log line says what "healthy" covered: a loopback probe does not cover the cable.
  EXPECT_NE(plan.suppressed[0].why.find(
                "mlx5_0/1 is healthy on the loopback path (392.0 Gb/s, expected 400 Gb/s); a "
                "loopback probe does not cover the cable"),
            std::string::npos)
      << plan.suppressed[0].why;
  EXPECT_FALSE(policy.drain_requested());
}

TEST(DrainPolicyProbeTest, AHealthyPairProbeNamesThePairPath) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  probe::ProbeReport healthy = Report(probe::ProbeVerdict::kHealthy, 49e9);
  healthy.measurement.path = "pair";
  HookPlan plan = policy.OnProbeResult(req.key, req.seq, healthy, kT0 + seconds(2), kOpen);
  ASSERT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_healthy"});
  EXPECT_NE(plan.suppressed[0].why.find("healthy on the pair path"), std::string::npos);
  EXPECT_EQ(plan.suppressed[0].why.find("cable"), std::string::npos) << plan.suppressed[0].why;
}

TEST(DrainPolicyProbeTest, RefusedOrUnavailableProbeDoesNotDrain) {
  HookConfig config = ConfirmConfig();
  {
    DrainPolicy policy(config);
    const ProbeRequest req = RaiseAndExpectProbe(policy, config);
    probe::ProbeReport refused;
    refused.port = {"mlx5_0", 1};
    refused.refused = "queue_full";
    refused.detail = "mlx5_0/1: too many ports wait for a probe";
    HookPlan plan = policy.OnProbeResult(req.key, req.seq, refused, kT0, kOpen);
    EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_unconfirmed"});
    EXPECT_NE(plan.suppressed[0].why.find("queue_full"), std::string::npos);
    EXPECT_EQ(policy.drains_held(), 0u);
  }
  {
    DrainPolicy policy(config);
    const ProbeRequest req = RaiseAndExpectProbe(policy, config);
    HookPlan plan = policy.OnProbeResult(req.key, req.seq,
                                         Report(probe::ProbeVerdict::kUnavailable), kT0, kOpen);
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
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  policy.OnTransition(PortFinding(Severity::kWarning, false, kT0 + seconds(1)), kT0 + seconds(1),
                      kOpen);
  EXPECT_EQ(policy.probes_pending(), 0u);
  HookPlan late =
      policy.OnProbeResult(req.key, req.seq, Report(probe::ProbeVerdict::kFailed), kT0, kOpen);
  EXPECT_TRUE(late.runs.empty());
  EXPECT_TRUE(late.suppressed.empty());
}

TEST(DrainPolicyProbeTest, AConfirmedDrainStillPassesTheGates) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config);
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  HookPlan plan = policy.OnProbeResult(req.key, req.seq, Report(probe::ProbeVerdict::kFailed), kT0,
                                       kBudgetExhausted);
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
  HookPlan plan = policy.OnProbeResult(released.probes[0].key, released.probes[0].seq,
                                       Report(probe::ProbeVerdict::kDegraded), kT0, kOpen);
  EXPECT_EQ(Runs(plan, config), Names{"slurm:drain:raise"});
}

// A probe refused because jobs run on the path.
probe::ProbeReport RefusedForJobs() {
  probe::ProbeReport refused;
  refused.port = {"mlx5_0", 1};
  refused.refused = "jobs_running";
  refused.detail = "mlx5_0/1: jobs slurm:1234 hold the device open";
  return refused;
}

// Review of issue 37: a probe refused for jobs no longer loses the drain: it is held for the
// jobs (counted once), probed again when they end, and drained unconfirmed at max_drain_hold.
TEST(DrainPolicyProbeTest, AProbeRefusedForJobsHoldsTheDrainInsteadOfLosingIt) {
  HookConfig config = ConfirmConfig();
  config.max_drain_hold = hours(2);
  JobsNow now;  // the engine still attributes slurm:1234
  DrainPolicy policy(config, now.Lookup());
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  HookPlan plan = policy.OnProbeResult(req.key, req.seq, RefusedForJobs(), kT0, kOpen);
  EXPECT_TRUE(plan.runs.empty());
  ASSERT_EQ(Suppressed(plan, config), Names{"slurm:held_for_jobs"});
  EXPECT_NE(plan.suppressed[0].why.find("waits for the jobs to end"), std::string::npos)
      << plan.suppressed[0].why;
  EXPECT_EQ(policy.drains_held(), 1u);
  EXPECT_EQ(policy.probes_pending(), 0u);
  EXPECT_EQ(policy.next_deadline(), kT0 + kProbeRetryAfterJobs);  // the retry is a deadline

  // The jobs still run: nothing, however often the timer fires.
  HookPlan still = policy.OnTimer(kT0 + minutes(5), kOpen);
  EXPECT_TRUE(still.probes.empty());
  EXPECT_TRUE(still.suppressed.empty());

  // They end: the probe is asked again, and refused again (the partner's device, say): held
  // again, not counted again.
  now.jobs = std::vector<std::string>{};
  HookPlan retry = policy.OnTimer(kT0 + minutes(10), kOpen);
  ASSERT_EQ(retry.probes.size(), 1u);
  EXPECT_EQ(policy.drains_held(), 0u);
  EXPECT_EQ(policy.probes_pending(), 1u);
  HookPlan again = policy.OnProbeResult(retry.probes[0].key, retry.probes[0].seq, RefusedForJobs(),
                                        kT0 + minutes(10), kOpen);
  EXPECT_TRUE(again.suppressed.empty());
  ASSERT_EQ(again.notes.size(), 1u);
  EXPECT_NE(again.notes[0].find("still held for jobs"), std::string::npos) << again.notes[0];
  EXPECT_EQ(policy.drains_held(), 1u);
  // Not before the retry time, even though the engine sees no job.
  EXPECT_TRUE(policy.OnTimer(kT0 + minutes(10) + seconds(30), kOpen).probes.empty());

  // max_drain_hold (from the first hold, kT0) passes: drained without a probe.
  HookPlan forced = policy.OnTimer(kT0 + hours(2), kOpen);
  EXPECT_EQ(Runs(forced, config), Names{"slurm:drain:raise"});
  EXPECT_TRUE(forced.probes.empty());
  EXPECT_FALSE(forced.runs[0].probe);
  ASSERT_EQ(forced.notes.size(), 1u);
  EXPECT_NE(forced.notes[0].find("max_drain_hold passed while jobs still run; drained without a "
                                 "probe"),
            std::string::npos)
      << forced.notes[0];
  EXPECT_EQ(policy.drains_held(), 0u);
  EXPECT_TRUE(policy.drain_requested());
}

// hold_drain_while_jobs + max_drain_hold + confirm_with_probe: the hold released by
// max_drain_hold drains (unconfirmed) instead of asking a probe the same jobs would refuse.
TEST(DrainPolicyProbeTest, MaxDrainHoldDrainsUnconfirmedWhileJobsStillRun) {
  HookConfig config = ConfirmConfig();
  config.hold_drain_while_jobs = true;
  config.max_drain_hold = hours(2);
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  AnomalyTransition raise = PortFinding(Severity::kWarning, true, kT0);
  raise.finding.jobs = {"slurm:1234"};
  EXPECT_EQ(Suppressed(policy.OnTransition(raise, kT0, kOpen), config),
            Names{"slurm:held_for_jobs"});
  EXPECT_EQ(policy.next_deadline(), kT0 + hours(2));
  HookPlan forced = policy.OnTimer(kT0 + hours(2), kOpen);
  EXPECT_EQ(Runs(forced, config), Names{"slurm:drain:raise"});
  EXPECT_TRUE(forced.probes.empty());
  EXPECT_EQ(forced.runs[0].transition.finding.jobs, (std::vector<std::string>{"slurm:1234"}));
  ASSERT_EQ(forced.notes.size(), 1u);
  EXPECT_NE(forced.notes[0].find("max_drain_hold passed while jobs still run"), std::string::npos);
}

// A drain held for jobs, released when they end, whose probe is then refused for jobs (the
// engine and the jobs collector disagree, or a job started): back into the hold, counted once.
TEST(DrainPolicyProbeTest, AReleasedHoldRefusedForJobsGoesBackWithoutACount) {
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
  ASSERT_EQ(released.probes.size(), 1u);
  HookPlan back = policy.OnProbeResult(released.probes[0].key, released.probes[0].seq,
                                       RefusedForJobs(), kT0 + minutes(5), kOpen);
  EXPECT_TRUE(back.suppressed.empty());  // held_for_jobs was counted at the raise
  EXPECT_EQ(policy.drains_held(), 1u);
  // The retry, once the engine sees no job and the retry time passed: probed, and a failed
  // probe drains.
  HookPlan retry = policy.OnTimer(kT0 + minutes(5) + kProbeRetryAfterJobs, kOpen);
  ASSERT_EQ(retry.probes.size(), 1u);
  HookPlan plan = policy.OnProbeResult(retry.probes[0].key, retry.probes[0].seq,
                                       Report(probe::ProbeVerdict::kFailed), kT0, kOpen);
  EXPECT_EQ(Runs(plan, config), Names{"slurm:drain:raise"});
}

// Review of issue 37: a drain waits for its probe's answer at most probe_answer_wait, then is
// suppressed_probe_unconfirmed; the late answer plans nothing.
TEST(DrainPolicyProbeTest, NoProbeAnswerWithinTheWaitSuppresses) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config, {}, seconds(21));
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  EXPECT_EQ(policy.next_deadline(), kT0 + seconds(21));
  HookPlan early = policy.OnTimer(kT0 + seconds(20), kOpen);
  EXPECT_TRUE(early.suppressed.empty());
  EXPECT_EQ(policy.probes_pending(), 1u);
  HookPlan expired = policy.OnTimer(kT0 + seconds(21), kOpen);
  ASSERT_EQ(Suppressed(expired, config), Names{"slurm:suppressed_probe_unconfirmed"});
  EXPECT_NE(expired.suppressed[0].why.find("no probe answer within 21s"), std::string::npos)
      << expired.suppressed[0].why;
  EXPECT_EQ(policy.probes_pending(), 0u);
  EXPECT_FALSE(policy.next_deadline());
  HookPlan late =
      policy.OnProbeResult(req.key, req.seq, Report(probe::ProbeVerdict::kFailed), kT0, kOpen);
  EXPECT_TRUE(late.runs.empty());
  EXPECT_TRUE(late.suppressed.empty());
}

// Second review of issue 37: a drain whose probe was refused for jobs, with the jobs still
// running at the retry time, moves its retry on instead of leaving a deadline in the past (the
// hook worker waited 0 ms on it, for as long as the jobs ran).
TEST(DrainPolicyProbeTest, TheRetryMovesOnWhileJobsStillRun) {
  HookConfig config = ConfirmConfig();
  config.max_drain_hold = hours(2);
  JobsNow now;  // slurm:1234 runs throughout
  DrainPolicy policy(config, now.Lookup());
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  policy.OnProbeResult(req.key, req.seq, RefusedForJobs(), kT0, kOpen);
  ASSERT_EQ(policy.next_deadline(), kT0 + kProbeRetryAfterJobs);
  for (detect::TimePoint t : {kT0 + kProbeRetryAfterJobs, kT0 + minutes(5) + seconds(7)}) {
    HookPlan plan = policy.OnTimer(t, kOpen);
    EXPECT_TRUE(plan.probes.empty());
    EXPECT_TRUE(plan.runs.empty());
    ASSERT_TRUE(policy.next_deadline());
    EXPECT_GT(*policy.next_deadline(), t);
    EXPECT_EQ(*policy.next_deadline(), t + kProbeRetryAfterJobs);
  }
  EXPECT_EQ(policy.drains_held(), 1u);
}

// A held drain whose finding has left the engine (its clear is on its way) past max_drain_hold
// stays, waiting for the clear; its passed deadline is not offered again.
TEST(DrainPolicyProbeTest, NoDeadlineAtOrBeforeTheLastTimerFromAStaleEntry) {
  HookConfig config = ConfirmConfig();
  config.hold_drain_while_jobs = true;
  config.max_drain_hold = hours(2);
  JobsNow now;
  DrainPolicy policy(config, now.Lookup());
  AnomalyTransition raise = PortFinding(Severity::kWarning, true, kT0);
  raise.finding.jobs = {"slurm:1234"};
  policy.OnTransition(raise, kT0, kOpen);
  now.jobs = std::nullopt;  // no longer active in the engine
  EXPECT_TRUE(policy.OnTimer(kT0 + hours(3), kOpen).runs.empty());
  EXPECT_EQ(policy.drains_held(), 1u);
  EXPECT_FALSE(policy.next_deadline());
}

// A probe's answer that comes after the drain stopped waiting does not drain, even when no
// timer ran in between: the drain expires unconfirmed, once.
TEST(DrainPolicyProbeTest, AnAnswerPastItsDeadlineIsIgnored) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config, {}, seconds(21));
  const ProbeRequest req = RaiseAndExpectProbe(policy, config);
  HookPlan late = policy.OnProbeResult(req.key, req.seq, Report(probe::ProbeVerdict::kFailed),
                                       kT0 + seconds(25), kOpen);
  EXPECT_TRUE(late.runs.empty());
  EXPECT_EQ(Suppressed(late, config), Names{"slurm:suppressed_probe_unconfirmed"});
  ASSERT_FALSE(late.notes.empty());
  EXPECT_NE(late.notes[0].find("after the drain stopped waiting"), std::string::npos)
      << late.notes[0];
  EXPECT_EQ(policy.probes_pending(), 0u);
  EXPECT_FALSE(policy.drain_requested());
  EXPECT_TRUE(policy.OnTimer(kT0 + seconds(26), kOpen).suppressed.empty());  // counted once
}

// The answer to an expired request A must not decide the drain of request B that the same
// finding raised since: answers carry the request's number.
TEST(DrainPolicyProbeTest, AnAnswerToAnEarlierRequestIsIgnored) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config, {}, seconds(21));
  const ProbeRequest a = RaiseAndExpectProbe(policy, config);
  ASSERT_EQ(Suppressed(policy.OnTimer(kT0 + seconds(21), kOpen), config),
            Names{"slurm:suppressed_probe_unconfirmed"});
  HookPlan raise_again = policy.OnTransition(
      PortFinding(Severity::kWarning, true, kT0 + seconds(30)), kT0 + seconds(30), kOpen);
  ASSERT_EQ(raise_again.probes.size(), 1u);
  const ProbeRequest b = raise_again.probes[0];
  EXPECT_EQ(b.key, a.key);
  EXPECT_NE(b.seq, a.seq);
  // A's late (failed) answer: ignored, B still waits.
  HookPlan stale = policy.OnProbeResult(a.key, a.seq, Report(probe::ProbeVerdict::kFailed),
                                        kT0 + seconds(31), kOpen);
  EXPECT_TRUE(stale.runs.empty());
  EXPECT_TRUE(stale.suppressed.empty());
  ASSERT_EQ(stale.notes.size(), 1u);
  EXPECT_NE(stale.notes[0].find("ignored the answer of probe request"), std::string::npos);
  EXPECT_EQ(policy.probes_pending(), 1u);
  // B's own answer (healthy) decides.
  HookPlan plan = policy.OnProbeResult(b.key, b.seq, Report(probe::ProbeVerdict::kHealthy),
                                       kT0 + seconds(32), kOpen);
  EXPECT_EQ(Suppressed(plan, config), Names{"slurm:suppressed_probe_healthy"});
  EXPECT_FALSE(policy.drain_requested());
}

AnomalyTransition PortFindingOn(const std::string& device, detect::TimePoint time) {
  AnomalyTransition t = PortFinding(Severity::kWarning, true, time);
  t.finding.entity = {{"device", device}, {"port", "1"}};
  return t;
}

// Three ports raise at once: the runner probes one at a time, so the third starts after two
// others' bounds. Its wait counts from its start (OnProbeStarted); before it, from its queue
// bound (one answer wait for each probe awaited and not yet started, its own included).
TEST(DrainPolicyProbeTest, TheAnswerWaitCountsFromTheProbesStart) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config, {}, seconds(21));
  std::vector<ProbeRequest> reqs;
  for (const char* device : {"mlx5_0", "mlx5_1", "mlx5_2"}) {
    HookPlan plan = policy.OnTransition(PortFindingOn(device, kT0), kT0, kOpen);
    ASSERT_EQ(plan.probes.size(), 1u);
    reqs.push_back(plan.probes[0]);
  }
  EXPECT_EQ(policy.next_deadline(), kT0 + seconds(21));  // the first's queue bound
  // The first two run their full bound each (a slow probe, then a timeout).
  policy.OnProbeStarted(reqs[0].key, reqs[0].seq, kT0);
  EXPECT_TRUE(policy
                  .OnProbeResult(reqs[0].key, reqs[0].seq, Report(probe::ProbeVerdict::kHealthy),
                                 kT0 + seconds(20), kOpen)
                  .runs.empty());
  policy.OnProbeStarted(reqs[1].key, reqs[1].seq, kT0 + seconds(20));
  policy.OnProbeStarted(reqs[1].key, reqs[1].seq, kT0 + seconds(30));  // once only
  EXPECT_TRUE(policy.OnTimer(kT0 + seconds(40), kOpen).suppressed.empty());
  EXPECT_EQ(policy.next_deadline(), kT0 + seconds(41));  // the second's start + 21 s
  EXPECT_TRUE(policy
                  .OnProbeResult(reqs[1].key, reqs[1].seq, Report(probe::ProbeVerdict::kHealthy),
                                 kT0 + seconds(40), kOpen)
                  .runs.empty());
  // The third starts at 40 s (its queue bound was 63 s): it may answer until 61 s.
  EXPECT_EQ(policy.next_deadline(), kT0 + seconds(63));
  policy.OnProbeStarted(reqs[2].key, reqs[2].seq, kT0 + seconds(40));
  EXPECT_EQ(policy.next_deadline(), kT0 + seconds(61));
  EXPECT_TRUE(policy.OnTimer(kT0 + seconds(55), kOpen).suppressed.empty());
  HookPlan plan = policy.OnProbeResult(
      reqs[2].key, reqs[2].seq, Report(probe::ProbeVerdict::kFailed), kT0 + seconds(56), kOpen);
  EXPECT_EQ(Runs(plan, config), Names{"slurm:drain:raise"});
}

// A probe that never starts (the runner is stuck behind others) expires at its queue bound.
TEST(DrainPolicyProbeTest, AProbeThatDoesNotStartExpiresAtItsQueueBound) {
  HookConfig config = ConfirmConfig();
  DrainPolicy policy(config, {}, seconds(21));
  policy.OnTransition(PortFindingOn("mlx5_0", kT0), kT0, kOpen);
  policy.OnTransition(PortFindingOn("mlx5_1", kT0), kT0, kOpen);
  EXPECT_EQ(Suppressed(policy.OnTimer(kT0 + seconds(21), kOpen), config),
            Names{"slurm:suppressed_probe_unconfirmed"});
  HookPlan second = policy.OnTimer(kT0 + seconds(42), kOpen);
  ASSERT_EQ(Suppressed(second, config), Names{"slurm:suppressed_probe_unconfirmed"});
  EXPECT_NE(second.suppressed[0].why.find("no probe answer within 42s: the probe did not start"),
            std::string::npos)
      << second.suppressed[0].why;
}

TEST(DrainPolicyProbeTest, TheDefaultAnswerWaitFollowsTheProbeTimeout) {
  probe::ProbeOptions options;
  options.timeout = seconds(5);
  EXPECT_EQ(probe::ProbeAnswerWait(options), seconds(21));  // 2 × (5 s + 3 s) + 5 s
  HookConfig config = ConfirmConfig();
  EXPECT_EQ(DrainPolicy(config).probe_answer_wait(), seconds(21));
}

}  // namespace
}  // namespace fabricwatch::exporter
