// DrainPolicy's gates added by issue 24: the switch the fleet rules hold suspect
// (hooks.suspect_peers_file) and drains held while jobs run (hooks.hold_drain_while_jobs).
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

}  // namespace
}  // namespace fabricwatch::exporter
