#include "exporter/remediation/hook_runner.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exporter/logging.h"
#include "tests/testing/fake_port_prober.h"
#include "tests/unit/exporter/remediation/hook_test_support.h"

namespace fabricwatch::exporter {
namespace {

namespace fs = std::filesystem;
using namespace hook_testing;

TEST(DrainPolicyTest, OnlyDrainEligibleFindingsDrain) {
  HookConfig config = PolicyConfig();
  DrainPolicy policy(config);
  // A storm victim is never drained; the notify hook still hears about it.
  HookPlan victim = policy.OnTransition(Storm("victim", true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(victim, config), Names{"webhook:notify:raise"});
  EXPECT_EQ(Suppressed(victim, config), Names{"slurm:suppressed_not_eligible"});
  EXPECT_FALSE(policy.drain_requested());

  HookPlan source = policy.OnTransition(Storm("source", true, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(source, config), (Names{"slurm:drain:raise", "webhook:notify:raise"}));
  EXPECT_TRUE(Suppressed(source, config).empty());
  EXPECT_TRUE(policy.drain_requested());

  // The victim clearing is not ours to act on.
  HookPlan victim_clear = policy.OnTransition(Storm("victim", false, kT0), kT0, kOpen);
  EXPECT_EQ(Runs(victim_clear, config), Names{"webhook:notify:clear"});
  EXPECT_FALSE(policy.next_deadline().has_value());
}

TEST(DrainPolicyTest, SeverityFilterApplies) {
  HookConfig config = PolicyConfig();
  config.hooks[0].severities = {Severity::kCritical};
  DrainPolicy policy(config);
  AnomalyTransition warning = Storm("source", true, kT0);
  warning.finding.severity = Severity::kWarning;
  EXPECT_EQ(Runs(policy.OnTransition(warning, kT0, kOpen), config), Names{"webhook:notify:raise"});
  EXPECT_FALSE(policy.drain_requested());
}

TEST(DrainPolicyTest, CooldownSpacesDrainRequests) {
  HookConfig config = PolicyConfig();
  DrainPolicy policy(config);
  config.hooks.resize(1);
  EXPECT_EQ(Runs(policy.OnTransition(Storm("source", true, kT0, "eth2"), kT0, kOpen), config),
            Names{"slurm:drain:raise"});
  const auto t1 = kT0 + minutes(29);
  HookPlan second = policy.OnTransition(Storm("source", true, t1, "eth3"), t1, kOpen);
  EXPECT_TRUE(Runs(second, config).empty());
  EXPECT_EQ(Suppressed(second, config), Names{"slurm:suppressed_cooldown"});
  const auto t2 = kT0 + minutes(30);
  EXPECT_EQ(Runs(policy.OnTransition(Storm("source", true, t2, "eth4"), t2, kOpen), config),
            Names{"slurm:drain:raise"});
}

TEST(DrainPolicyTest, RateLimitIsASlidingHour) {
  HookConfig config = PolicyConfig();
  config.cooldown = milliseconds(0);
  config.hooks.resize(1);
  DrainPolicy policy(config);
  auto raise = [&](const std::string& netdev, detect::TimePoint t) {
    return policy.OnTransition(Storm("source", true, t, netdev), t, kOpen);
  };
  EXPECT_EQ(Runs(raise("eth2", kT0), config).size(), 1u);
  EXPECT_EQ(Runs(raise("eth3", kT0 + minutes(20)), config).size(), 1u);
  HookPlan third = raise("eth4", kT0 + minutes(40));
  EXPECT_EQ(Suppressed(third, config), Names{"slurm:suppressed_rate_limit"});
  // The first request leaves the window at kT0 + 1h.
  EXPECT_EQ(Runs(raise("eth5", kT0 + hours(1)), config).size(), 1u);
  EXPECT_EQ(Suppressed(raise("eth6", kT0 + hours(1) + minutes(1)), config),
            Names{"slurm:suppressed_rate_limit"});
}

TEST(DrainPolicyTest, ZeroDrainsPerHourNeverDrains) {
  HookConfig config = PolicyConfig();
  config.max_drains_per_hour = 0;
  config.hooks.resize(1);
  DrainPolicy policy(config);
  EXPECT_EQ(Suppressed(policy.OnTransition(Storm("source", true, kT0), kT0, kOpen), config),
            Names{"slurm:suppressed_rate_limit"});
}

TEST(DrainPolicyTest, ResumeWaitsForTheHoldDown) {
  HookConfig config = PolicyConfig();
  config.hooks.resize(1);
  DrainPolicy policy(config);
  policy.OnTransition(Storm("source", true, kT0), kT0, kOpen);
  const auto cleared = kT0 + minutes(3);
  EXPECT_TRUE(
      Runs(policy.OnTransition(Storm("source", false, cleared), cleared, kOpen), config).empty());
  ASSERT_TRUE(policy.next_deadline().has_value());
  EXPECT_EQ(*policy.next_deadline(), cleared + minutes(10));
  EXPECT_TRUE(policy.OnTimer(cleared + minutes(10) - seconds(1), kOpen).runs.empty());
  HookPlan resume = policy.OnTimer(cleared + minutes(10), kOpen);
  EXPECT_EQ(Runs(resume, config), Names{"slurm:resume:clear"});
  EXPECT_FALSE(policy.drain_requested());
  EXPECT_TRUE(policy.OnTimer(cleared + hours(1), kOpen).runs.empty());
}

TEST(DrainPolicyTest, RaiseDuringHoldDownCancelsTheResume) {
  HookConfig config = PolicyConfig();
  config.hooks.resize(1);
  DrainPolicy policy(config);
  policy.OnTransition(Storm("source", true, kT0), kT0, kOpen);
  policy.OnTransition(Storm("source", false, kT0 + minutes(1)), kT0 + minutes(1), kOpen);
  // It comes back within the hold-down (a flapping fault): the node stays drained; the raise
  // itself is inside the cooldown, so no second drain request is made.
  HookPlan again =
      policy.OnTransition(Storm("source", true, kT0 + minutes(5)), kT0 + minutes(5), kOpen);
  EXPECT_EQ(Suppressed(again, config), Names{"slurm:suppressed_cooldown"});
  EXPECT_FALSE(policy.next_deadline().has_value());
  EXPECT_TRUE(policy.OnTimer(kT0 + hours(2), kOpen).runs.empty());
  EXPECT_TRUE(policy.drain_requested());
  policy.OnTransition(Storm("source", false, kT0 + hours(2)), kT0 + hours(2), kOpen);
  EXPECT_EQ(Runs(policy.OnTimer(kT0 + hours(2) + minutes(10), kOpen), config),
            Names{"slurm:resume:clear"});
}

TEST(DrainPolicyTest, EveryHoldingFindingMustClear) {
  HookConfig config = PolicyConfig();
  config.hooks.resize(1);
  config.clear_hold_down = milliseconds(0);
  DrainPolicy policy(config);
  policy.OnTransition(Storm("source", true, kT0, "eth2"), kT0, kOpen);
  // Suppressed by the cooldown, but it still holds the node.
  policy.OnTransition(Storm("source", true, kT0, "eth3"), kT0, kOpen);
  EXPECT_TRUE(policy.OnTransition(Storm("source", false, kT0, "eth2"), kT0, kOpen).runs.empty());
  // A zero hold-down resumes in the same step as the last clear.
  EXPECT_EQ(Runs(policy.OnTransition(Storm("source", false, kT0, "eth3"), kT0, kOpen), config),
            Names{"slurm:resume:clear"});
}

TEST(DrainPolicyTest, FleetBudgetBlocksDrainsAndNothingIsResumed) {
  HookConfig config = PolicyConfig();
  config.hooks.resize(1);
  config.clear_hold_down = milliseconds(0);
  DrainPolicy policy(config);
  EXPECT_EQ(
      Suppressed(policy.OnTransition(Storm("source", true, kT0), kT0, kBudgetExhausted), config),
      Names{"slurm:suppressed_fleet_budget"});
  EXPECT_FALSE(policy.drain_requested());
  EXPECT_TRUE(policy.OnTransition(Storm("source", false, kT0), kT0, kOpen).runs.empty());
}

TEST(DrainPolicyTest, DrainHookWithoutClearLeavesTheResumeToAHuman) {
  HookConfig config = PolicyConfig();
  config.hooks.resize(1);
  config.hooks[0].on_clear = false;
  config.clear_hold_down = milliseconds(0);
  DrainPolicy policy(config);
  EXPECT_EQ(Runs(policy.OnTransition(Storm("source", true, kT0), kT0, kOpen), config).size(), 1u);
  EXPECT_TRUE(policy.OnTransition(Storm("source", false, kT0), kT0, kOpen).runs.empty());
  EXPECT_FALSE(policy.drain_requested());
}

TEST(HookEnvironmentTest, DescribesTheEvent) {
  HookConfig config = PolicyConfig();
  HookSpec hook = config.hooks[0];
  hook.env = {{"SLURM_CONF", "/etc/slurm/slurm.conf"}, {"PATH", "/opt/slurm/bin:/usr/bin"}};
  hook.pass_env = {"KUBERNETES_SERVICE_HOST", "ABSENT"};
  AnomalyTransition t = Storm("source", true, kT0 + milliseconds(1234));
  t.started = kT0;
  PlannedRun run{0, HookPurpose::kDrain, t};
  std::map<std::string, std::string> agent_env = {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                                  {"SECRET", "x"}};
  std::map<std::string, std::string> env;
  for (const std::string& entry : BuildHookEnvironment(config, hook, run, "gpu-a17", agent_env)) {
    size_t eq = entry.find('=');
    ASSERT_NE(eq, std::string::npos);
    ASSERT_TRUE(env.emplace(entry.substr(0, eq), entry.substr(eq + 1)).second) << entry;
  }
  const std::map<std::string, std::string> expected = {
      {"PATH", "/opt/slurm/bin:/usr/bin"},
      {"LC_ALL", "C.UTF-8"},
      {"SLURM_CONF", "/etc/slurm/slurm.conf"},
      {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
      {"FABRICWATCH_HOOK", "slurm"},
      {"FABRICWATCH_ACTION", "drain"},
      {"FABRICWATCH_EVENT", "raise"},
      {"FABRICWATCH_DETECTOR", "pfc_storm"},
      {"FABRICWATCH_SEVERITY", "critical"},
      {"FABRICWATCH_ENTITY", "netdev=eth2 priority=3 role=source"},
      {"FABRICWATCH_LABEL_NETDEV", "eth2"},
      {"FABRICWATCH_LABEL_PRIORITY", "3"},
      {"FABRICWATCH_LABEL_ROLE", "source"},
      {"FABRICWATCH_REASON", "eth2 priority 3 sends pause frames 97% of the time (\"source\")"},
      {"FABRICWATCH_VALUE", "0.97"},
      {"FABRICWATCH_EVIDENCE", R"({"pause_ratio":0.97,"tx_pause_frames_per_second":151234.0})"},
      {"FABRICWATCH_EVIDENCE_TEXT", "pause_ratio=0.97 tx_pause_frames_per_second=151234"},
      {"FABRICWATCH_NODE", "gpu-a17"},
      {"FABRICWATCH_DRY_RUN", "1"},
      {"FABRICWATCH_DRAIN_ELIGIBLE", "1"},
      {"FABRICWATCH_STARTED", "2027-01-15T08:00:00.000Z"},
      {"FABRICWATCH_TIME", "2027-01-15T08:00:01.234Z"},
      {"FABRICWATCH_FLEET_BUDGET_FILE", "/run/fabricwatch/drain-budget-exhausted"},
      // Attribution (issue 24): none known for this finding.
      {"FABRICWATCH_PEER", ""},
      {"FABRICWATCH_JOBS", ""},
  };
  EXPECT_EQ(env, expected);
  auto evidence = nlohmann::json::parse(env["FABRICWATCH_EVIDENCE"]);
  EXPECT_DOUBLE_EQ(evidence["pause_ratio"].get<double>(), 0.97);
}

// Issue 24: the far end of the port and the jobs on the device reach the hooks.
TEST(HookEnvironmentTest, CarriesThePeerAndTheJobs) {
  HookConfig config = PolicyConfig();
  AnomalyTransition t = Storm("source", true, kT0);
  t.finding.peer = "leaf07 Ethernet12";
  t.finding.jobs = {"slurm:1234", "slurm:1240"};
  PlannedRun run{0, HookPurpose::kDrain, t};
  std::map<std::string, std::string> env;
  for (const std::string& entry : BuildHookEnvironment(config, config.hooks[0], run, "n", {})) {
    env.emplace(entry.substr(0, entry.find('=')), entry.substr(entry.find('=') + 1));
  }
  EXPECT_EQ(env["FABRICWATCH_PEER"], "leaf07 Ethernet12");
  EXPECT_EQ(env["FABRICWATCH_JOBS"], "slurm:1234,slurm:1240");
}

// The runner with real processes: /bin/sh hooks in a temporary directory that append what they
// were told to a log file.
class HookRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fabricwatch-hooks-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
    record_ = (dir_ / "record").string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Script(const std::string& name, const std::string& body) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    ::chmod(path.c_str(), 0755);
    return path.string();
  }
  HookSpec Recorder(const std::string& name, const std::string& extra = "") {
    HookSpec hook;
    hook.name = name;
    hook.command = {Script(name,
                           "echo \"$FABRICWATCH_HOOK $FABRICWATCH_ACTION $FABRICWATCH_EVENT "
                           "$FABRICWATCH_DRY_RUN $FABRICWATCH_ENTITY\" >> \"$RECORD\"\n" +
                               extra)};
    hook.env = {{"RECORD", record_}};
    return hook;
  }
  std::vector<std::string> Recorded() const {
    std::ifstream in(record_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
  HookConfig BaseConfig() {
    HookConfig config;
    config.node_name = "gpu-a17";
    config.fleet_budget_file = (dir_ / "budget-exhausted").string();
    config.suspect_peers_file = (dir_ / "suspect-peers").string();
    config.timeout = seconds(10);
    config.kill_grace = milliseconds(200);
    return config;
  }

  fs::path dir_;
  std::string record_;
  FakeClock clock_;
  PosixProcessLauncher launcher_;
};

TEST_F(HookRunnerTest, DryRunIsTheDefaultAndIsCounted) {
  HookConfig config = BaseConfig();
  ASSERT_TRUE(config.dry_run);
  config.hooks = {Recorder("slurm", "echo would drain")};
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  runner.OnTransition(Storm("source", true, kT0));
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ(Recorded(), Names{"slurm drain raise 1 netdev=eth2 priority=3 role=source"});
  auto counts = runner.Counts();
  EXPECT_EQ((counts[{"slurm", "dry_run"}]), 1u);
  EXPECT_EQ((counts[{"slurm", "success"}]), 0u);
  EXPECT_EQ(counts.size(), std::size(kHookResults));
}

TEST_F(HookRunnerTest, DrainThenResumeAfterHoldDownWithInjectedClock) {
  HookConfig config = BaseConfig();
  config.dry_run = false;
  config.clear_hold_down = minutes(10);
  config.hooks = {Recorder("slurm")};
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  runner.OnTransition(Storm("victim", true, kT0, "eth5"));
  runner.OnTransition(Storm("source", true, kT0));
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  clock_.Set(kT0 + minutes(2));
  runner.OnTransition(Storm("source", false, kT0 + minutes(2)));
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ(Recorded(), Names{"slurm drain raise 0 netdev=eth2 priority=3 role=source"});
  clock_.Set(kT0 + minutes(12));
  runner.Wake();
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ(Recorded(), (Names{"slurm drain raise 0 netdev=eth2 priority=3 role=source",
                               "slurm resume clear 0 netdev=eth2 priority=3 role=source"}));
  auto counts = runner.Counts();
  EXPECT_EQ((counts[{"slurm", "success"}]), 2u);
  EXPECT_EQ((counts[{"slurm", "suppressed_not_eligible"}]), 1u);
}

TEST_F(HookRunnerTest, FleetBudgetFileStopsDrains) {
  HookConfig config = BaseConfig();
  config.dry_run = false;
  config.hooks = {Recorder("slurm")};
  std::ofstream(config.fleet_budget_file) << "partition gpu: 5% drained\n";
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  runner.OnTransition(Storm("source", true, kT0));
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_TRUE(Recorded().empty());
  EXPECT_EQ((runner.Counts()[{"slurm", "suppressed_fleet_budget"}]), 1u);
}

TEST_F(HookRunnerTest, FailuresTimeoutsAndSpawnErrorsAreCounted) {
  HookConfig config = BaseConfig();
  config.dry_run = false;
  config.timeout = milliseconds(300);
  HookSpec failing = Recorder("failing", "echo 'scontrol: error: Invalid node name' >&2\nexit 1\n");
  failing.action = HookAction::kNotify;
  HookSpec slow = Recorder("slow", "sleep 30\n");
  slow.action = HookAction::kNotify;
  HookSpec missing;
  missing.name = "missing";
  missing.action = HookAction::kNotify;
  missing.command = {(dir_ / "not-installed").string()};
  config.hooks = {failing, slow, missing};
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  runner.OnTransition(Storm("victim", true, kT0));
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  auto counts = runner.Counts();
  EXPECT_EQ((counts[{"failing", "failure"}]), 1u);
  EXPECT_EQ((counts[{"slow", "timeout"}]), 1u);
  EXPECT_EQ((counts[{"missing", "spawn_error"}]), 1u);

  MetricSink sink;
  runner.Export(sink);
  EXPECT_EQ(sink.error_count(), 0u);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 6u);  // fabricwatch_hook_drains_awaiting_probe among them
  EXPECT_EQ(families[0].name, "fabricwatch_hook_runs_total");
  EXPECT_EQ(families[0].metric.size(), 3 * std::size(kHookResults));
  EXPECT_EQ(families[1].name, "fabricwatch_hook_dry_run");
  EXPECT_EQ(families[1].metric[0].gauge.value, 0);
  for (const MetricDesc& desc : HookRunner::MetricDescs()) {
    EXPECT_TRUE(ValidateDesc(desc).ok()) << desc.name;
  }
}

TEST_F(HookRunnerTest, OnTransitionNeverWaitsForAHook) {
  const std::string gate = (dir_ / "gate").string();
  HookConfig config = BaseConfig();
  HookSpec blocked = Recorder("blocked", "while [ ! -e \"$GATE\" ]; do sleep 0.01; done\n");
  blocked.action = HookAction::kNotify;
  blocked.env["GATE"] = gate;
  config.hooks = {blocked};
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  // The first run waits for the gate; these calls return while it does.
  for (int i = 0; i < 5; ++i) runner.OnTransition(Storm("victim", i % 2 == 0, kT0));
  EXPECT_FALSE(runner.WaitIdle(milliseconds(200)));
  EXPECT_EQ((runner.Counts()[{"blocked", "dry_run"}]), 0u);
  std::ofstream(gate) << "open\n";
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ((runner.Counts()[{"blocked", "dry_run"}]), 5u);
}

TEST_F(HookRunnerTest, NoHooksMeansNoThread) {
  HookRunner runner(BaseConfig(), launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  runner.OnTransition(Storm("source", true, kT0));
  EXPECT_TRUE(runner.WaitIdle(milliseconds(10)));
  EXPECT_TRUE(runner.Counts().empty());
}

// Each hook has its own queue and thread: a hook that hangs does not delay another one, and
// Stop() kills the hanging one instead of waiting for its timeout (issue 19).
TEST_F(HookRunnerTest, HangingHookDoesNotDelayOthersAndStopKillsIt) {
  HookConfig config = BaseConfig();
  config.timeout = seconds(60);
  config.kill_grace = seconds(30);
  HookSpec hang = Recorder("hang", "trap '' TERM\nwhile :; do sleep 0.05; done\n");
  hang.action = HookAction::kNotify;
  HookSpec notify = Recorder("notify");
  notify.action = HookAction::kNotify;
  config.hooks = {hang, notify};
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"));
  runner.Start();
  runner.OnTransition(Storm("victim", true, kT0));
  runner.OnTransition(Storm("victim", false, kT0));
  // Both of notify's runs finish while hang's first run is still running.
  for (int i = 0; i < 2000 && runner.Counts()[{"notify", "dry_run"}] < 2; ++i) ::usleep(10000);
  EXPECT_EQ((runner.Counts()[{"notify", "dry_run"}]), 2u);
  EXPECT_FALSE(runner.WaitIdle(milliseconds(0))) << "hang should still be running";
  runner.Stop();
  auto counts = runner.Counts();
  EXPECT_EQ((counts[{"hang", "cancelled"}]), 1u);
  EXPECT_EQ((counts[{"hang", "timeout"}]), 0u);
  EXPECT_EQ((counts[{"hang", "dry_run"}]), 0u);
}

}  // namespace
}  // namespace fabricwatch::exporter

namespace fabricwatch::exporter {
namespace {

double Gauge(const HookRunner& runner, std::string_view name) {
  MetricSink sink;
  runner.Export(sink);
  for (const auto& family : sink.TakeFamilies()) {
    if (family.name == name) return family.metric.at(0).gauge.value;
  }
  return -1;
}

double DrainsHeld(const HookRunner& runner) {
  return Gauge(runner, "fabricwatch_hook_drains_held");
}

// The agent-side switch gate through the file the fleet rules' receiver writes, and a drain
// held while a job runs, released on the runner's timer when the job ends.
TEST_F(HookRunnerTest, SuspectPeersFileAndHeldDrainsGoThroughTheRunner) {
  HookConfig config = BaseConfig();
  config.cooldown = seconds(0);
  config.max_drains_per_hour = 10;
  config.hold_drain_while_jobs = true;
  config.hooks = {Recorder("slurm")};
  std::ofstream(dir_ / "suspect-peers") << "# written by the receiver\nleaf07\n";
  std::mutex mutex;
  std::vector<std::string> jobs = {"slurm:1234"};
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"), {},
                    [&](const AnomalyTransition&) -> std::optional<std::vector<std::string>> {
                      std::lock_guard lock(mutex);
                      return jobs;
                    });
  runner.Start();
  AnomalyTransition facing = Storm("source", true, kT0, "eth2");
  facing.finding.peer = "leaf07 Ethernet1/3";
  runner.OnTransition(facing);
  AnomalyTransition held = Storm("source", true, kT0, "eth3");
  held.finding.severity = Severity::kWarning;
  held.finding.peer = "leaf08 Ethernet1/3";
  held.finding.jobs = {"slurm:1234"};
  runner.OnTransition(held);
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_TRUE(Recorded().empty());
  auto counts = runner.Counts();
  EXPECT_EQ((counts[{"slurm", "suppressed_peer_suspect"}]), 1u);
  EXPECT_EQ((counts[{"slurm", "held_for_jobs"}]), 1u);
  EXPECT_EQ(DrainsHeld(runner), 1);

  {
    std::lock_guard lock(mutex);
    jobs.clear();  // the job ended
  }
  runner.Wake();
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ(Recorded(), Names{"slurm drain raise 1 netdev=eth3 priority=3 role=source"});
  EXPECT_EQ(DrainsHeld(runner), 0);
}

// Issue 37: hooks.confirm_with_probe through the runner, with a fake prober behind a real
// ProbeRunner: a degraded port drains (the probe's values in the hook's environment), a healthy
// one is suppressed, one whose device runs a job is held for the job (the probe is refused);
// fabricwatch_hook_drains_awaiting_probe counts the drains whose probe is in flight.
TEST_F(HookRunnerTest, DrainsConfirmedByAProbeGoThroughTheRunner) {
  HookConfig config = BaseConfig();
  config.dry_run = false;
  config.cooldown = seconds(0);
  config.max_drains_per_hour = 10;
  config.confirm_with_probe = true;
  config.hooks = {Recorder("slurm",
                           "echo \"probe ${FABRICWATCH_PROBE_VERDICT-none} "
                           "${FABRICWATCH_PROBE_BANDWIDTH_GBPS-} ${FABRICWATCH_PROBE_LATENCY_US-} "
                           "${FABRICWATCH_PROBE_PATH-}\" >> \"$RECORD\"\n")};
  auto fake = std::make_shared<testing::FakePortProber::State>();
  fake->Set({"mlx5_0", 1}, testing::OkMeasurement(100e9 / 8));  // 100 of 400 Gb/s: degraded
  fake->Set({"mlx5_1", 1}, testing::OkMeasurement(380e9 / 8));  // healthy
  probe::ProbeConfig probe_config;
  probe_config.enabled = true;
  probe::ProbeRunner prober(
      probe_config, std::make_unique<testing::FakePortProber>(fake), clock_, GetLogger("probe"),
      [](const std::string& device) {
        return std::optional<std::vector<std::string>>(
            device == "mlx5_2" ? std::vector<std::string>{"slurm:9"} : std::vector<std::string>{});
      },
      [](const probe::PortRef&) { return 400e9; });
  prober.Start();
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"), {}, {}, &prober);
  runner.Start();
  fake->hold = true;  // the probes stay in flight until released
  for (const char* device : {"mlx5_0", "mlx5_1", "mlx5_2"}) {
    AnomalyTransition t = Storm("source", true, kT0);
    t.detector = "link_flap";
    t.finding.severity = Severity::kWarning;
    t.finding.entity = {{"device", device}, {"port", "1"}};
    runner.OnTransition(t);
  }
  ASSERT_TRUE(fake->WaitStarted(1));
  // The worker publishes the gauge after it handed the three probes over (bounded wait).
  for (int i = 0; i < 3000 && Gauge(runner, "fabricwatch_hook_drains_awaiting_probe") != 3; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(Gauge(runner, "fabricwatch_hook_drains_awaiting_probe"), 3);
  fake->Release();
  ASSERT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ(Gauge(runner, "fabricwatch_hook_drains_awaiting_probe"), 0);
  EXPECT_EQ(DrainsHeld(runner), 1);  // mlx5_2: its probe was refused, the drain waits for slurm:9
  EXPECT_EQ(Recorded(), (Names{"slurm drain raise 0 device=mlx5_0 port=1",
                               "probe degraded 100.000 2.500 loopback"}));
  auto counts = runner.Counts();
  EXPECT_EQ((counts[{"slurm", "success"}]), 1u);
  EXPECT_EQ((counts[{"slurm", "suppressed_probe_healthy"}]), 1u);
  EXPECT_EQ((counts[{"slurm", "held_for_jobs"}]), 1u);
  EXPECT_EQ((counts[{"slurm", "suppressed_probe_unconfirmed"}]), 0u);
  EXPECT_EQ(fake->calls(), 2u);  // mlx5_2 was never measured
  // The runner's families are exported with the hooks'.
  MetricSink sink;
  runner.Export(sink);
  bool verdict = false;
  for (const auto& family : sink.TakeFamilies())
    verdict |= family.name == "fabricwatch_probe_verdict";
  EXPECT_TRUE(verdict);
  runner.Stop();
  prober.Stop();
}

// Second review of issue 37: the probe runner stopping with requests still queued answers them
// "stopped", so the hook runner counts no probe as outstanding for ever (WaitIdle returns) and
// the drains that waited are suppressed_probe_unconfirmed.
TEST_F(HookRunnerTest, AProbeRunnerStoppedWithRequestsQueuedAnswersThem) {
  HookConfig config = BaseConfig();
  config.confirm_with_probe = true;
  config.hooks = {Recorder("slurm")};
  auto fake = std::make_shared<testing::FakePortProber::State>();
  probe::ProbeConfig probe_config;
  probe_config.enabled = true;
  probe::ProbeRunner prober(probe_config, std::make_unique<testing::FakePortProber>(fake), clock_,
                            GetLogger("probe"));
  prober.Start();
  HookRunner runner(config, launcher_, clock_, GetLogger("hooks"), {}, {}, &prober);
  runner.Start();
  fake->hold = true;
  for (const char* device : {"mlx5_0", "mlx5_1"}) {
    AnomalyTransition t = Storm("source", true, kT0);
    t.detector = "link_flap";
    t.finding.severity = Severity::kWarning;
    t.finding.entity = {{"device", device}, {"port", "1"}};
    runner.OnTransition(t);
  }
  ASSERT_TRUE(fake->WaitStarted(1));
  for (int i = 0; i < 3000 && Gauge(runner, "fabricwatch_hook_drains_awaiting_probe") != 2; ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  std::thread stopper([&] { prober.Stop(); });
  // Stop() takes the queued request before it waits for the running probe.
  auto stopped = [&] {
    MetricSink sink;
    prober.Export(sink);
    for (const auto& family : sink.TakeFamilies()) {
      if (family.name != "fabricwatch_probe_refused_total") continue;
      for (const auto& m : family.metric) {
        if (m.label[0].value == "stopped") return m.counter.value;
      }
    }
    return -1.0;
  };
  for (int i = 0; i < 3000 && stopped() != 1; ++i) std::this_thread::sleep_for(milliseconds(10));
  fake->Release();
  stopper.join();
  EXPECT_TRUE(runner.WaitIdle(seconds(20)));
  EXPECT_EQ(Gauge(runner, "fabricwatch_hook_drains_awaiting_probe"), 0);
  EXPECT_EQ((runner.Counts()[{"slurm", "suppressed_probe_unconfirmed"}]), 2u);
  EXPECT_TRUE(Recorded().empty());
  runner.Stop();
}

TEST(HookEnvironmentTest, CarriesTheProbeThatConfirmedTheDrain) {
  HookConfig config = PolicyConfig();
  PlannedRun run{0, HookPurpose::kDrain, Storm("source", true, kT0)};
  auto env_of = [&] {
    std::map<std::string, std::string> env;
    for (const std::string& entry : BuildHookEnvironment(config, config.hooks[0], run, "n", {})) {
      env.emplace(entry.substr(0, entry.find('=')), entry.substr(entry.find('=') + 1));
    }
    return env;
  };
  EXPECT_FALSE(env_of().contains("FABRICWATCH_PROBE_VERDICT"));  // no probe ran: absent
  probe::ProbeReport report;
  report.port = {"mlx5_0", 1};
  report.measurement = testing::FailedMeasurement(probe::ProbeOutcome::kTimeout,
                                                  "mlx5_0/1: no completion within 5000 ms");
  report.verdict = probe::ProbeVerdict::kFailed;
  run.probe = report;
  auto env = env_of();
  EXPECT_EQ(env["FABRICWATCH_PROBE_VERDICT"], "failed");
  EXPECT_EQ(env["FABRICWATCH_PROBE_PORT"], "mlx5_0/1");
  EXPECT_EQ(env["FABRICWATCH_PROBE_PATH"], "loopback");
  EXPECT_EQ(env["FABRICWATCH_PROBE_ERROR"], "mlx5_0/1: no completion within 5000 ms");
  EXPECT_FALSE(env.contains("FABRICWATCH_PROBE_BANDWIDTH_GBPS"));  // no data moved
}

}  // namespace
}  // namespace fabricwatch::exporter
