// The agent's process prober (review of issue 37): each probe is a child `fabricwatch probe
// ... --json` with a hard deadline, through the hooks' launcher. The command line and the
// reading of the child's answer are pure (a fake launcher); two real children, /bin/sh scripts
// standing in for the probe command, show the JSON read back and the kill past the deadline;
// one more shows that the runner's Stop() kills a child that runs. Also the loopback warning of
// hooks.confirm_with_probe and the port listing it reads. No timing assertions.
#include "exporter/probe/process_prober.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "exporter/logging.h"
#include "exporter/probe/probe_policy.h"
#include "exporter/probe/probe_runner.h"
#include "exporter/probe/probe_sources.h"
#include "tests/unit/exporter/remediation/hook_test_support.h"

namespace fabricwatch::probe {
namespace {

namespace fs = std::filesystem;
using exporter::LaunchResult;
using exporter::LaunchSpec;
using std::chrono::milliseconds;
using std::chrono::seconds;

const ProbeTarget kLoopback{{"mlx5_0", 1}, std::nullopt};
const ProbeTarget kPair{{"mlx5_0", 1}, PortRef{"mlx5_1", 1}};

constexpr const char* kOkLine =
    R"({"port":"mlx5_0/1","partner":null,"path":"loopback","outcome":"ok","verdict":"healthy",)"
    R"("error":"","bandwidth_bytes_per_second":12500000000.0,"bandwidth_gbps":100.0,)"
    R"("latency_median_ns":2500,"latency_max_ns":9000,"bytes_written":12500000000,)"
    R"("writes_completed":190734,"elapsed_ns":1300000000,"registered_bytes":2097152,)"
    R"("expected_bits_per_second":0.0})";

// Records the spec and answers with a prepared result.
class FakeLauncher final : public exporter::ProcessLauncher {
 public:
  using ProcessLauncher::Run;
  LaunchResult Run(const LaunchSpec& spec, std::stop_token) override {
    specs.push_back(spec);
    return result;
  }
  std::vector<LaunchSpec> specs;
  LaunchResult result;
};

LaunchResult Exited(std::string output, int code = 0) {
  LaunchResult r;
  r.outcome = LaunchResult::Outcome::kExited;
  r.exit_code = code;
  r.output = std::move(output);
  r.duration = milliseconds(1400);
  return r;
}

TEST(ProcessProberTest, CommandLineCarriesTheOptions) {
  ProbeOptions options;
  options.duration = milliseconds(1500);
  options.timeout = seconds(6);
  options.message_bytes = 4096;
  options.window = 8;
  EXPECT_EQ(ProbeCommandLine("/proc/self/exe", kPair, options),
            (std::vector<std::string>{"/proc/self/exe", "probe", "mlx5_0/1", "--partner",
                                      "mlx5_1/1", "--duration", "1500ms", "--timeout", "6000ms",
                                      "--message-size", "4096", "--window", "8",
                                      "--expected-rate-gbps", "0", "--json", "--progress"}));
  EXPECT_EQ(ProbeCommandLine("/x", kLoopback, options).at(3), "--duration");  // no --partner
}

TEST(ProcessProberTest, TheChildHasAHardDeadlineNoGraceAndBoundedOutput) {
  FakeLauncher launcher;
  launcher.result = Exited(std::string(kOkLine) + "\n");
  ProcessProberOptions process;
  process.env = {"PATH=/bin"};
  ProcessPortProber prober(launcher, process);
  ProbeOptions options;
  options.timeout = seconds(5);
  const ProbeMeasurement m = prober.Measure(kLoopback, options);
  ASSERT_EQ(launcher.specs.size(), 1u);
  const LaunchSpec& spec = launcher.specs[0];
  EXPECT_EQ(spec.argv.at(0), "/proc/self/exe");
  EXPECT_EQ(spec.argv.at(1), "probe");
  EXPECT_EQ(spec.timeout, seconds(5) + kProbeProcessMargin);
  EXPECT_EQ(spec.kill_grace, milliseconds(0));  // SIGKILL at the deadline
  EXPECT_EQ(spec.max_output_bytes, kProbeProcessMaxOutput);
  EXPECT_TRUE(spec.keep_output_tail);  // the result is the last line
  EXPECT_EQ(spec.env, (std::vector<std::string>{"PATH=/bin"}));
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk);
}

TEST(ProcessProberTest, ReadsTheJsonLine) {
  // A library's warning on the shared pipe before the line changes nothing.
  const ProbeMeasurement m = MeasurementFromLaunch(
      Exited("libibverbs: Warning: couldn't load driver 'libfoo-rdmav34.so'\n" +
             std::string(kOkLine) + "\n"),
      kLoopback, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk);
  EXPECT_EQ(m.path, "loopback");
  EXPECT_DOUBLE_EQ(m.bandwidth_bytes_per_second, 12.5e9);
  EXPECT_EQ(m.latency_median, std::chrono::nanoseconds(2500));
  EXPECT_EQ(m.latency_max, std::chrono::nanoseconds(9000));
  EXPECT_EQ(m.bytes_written, 12500000000u);
  EXPECT_EQ(m.writes_completed, 190734u);
  EXPECT_EQ(m.elapsed, std::chrono::nanoseconds(1300000000));
  EXPECT_EQ(m.registered_bytes, 2097152u);
  EXPECT_TRUE(m.error.empty());

  // A failed probe: the command's exit status (2) says nothing more than the line.
  const ProbeMeasurement down = MeasurementFromLaunch(
      Exited(R"({"path":"pair","outcome":"port_down","error":"mlx5_1/1 is DOWN"})"
             "\n",
             2),
      kPair, ProbeOptions{});
  EXPECT_EQ(down.outcome, ProbeOutcome::kPortDown);
  EXPECT_EQ(down.error, "mlx5_1/1 is DOWN");
  EXPECT_EQ(down.path, "pair");
  EXPECT_EQ(ClassifyProbe(down, 0, 0.5), ProbeVerdict::kFailed);
}

TEST(ProcessProberTest, NoResultIsUnsupportedWithTheFirstLine) {
  for (const std::string& output :
       {std::string("fabricwatch probe: --timeout 1s leaves no time past --duration 1s\nmore\n"),
        std::string("{not json\n"),
        std::string(R"({"outcome":"sideways"})"
                    "\n")}) {
    SCOPED_TRACE(output);
    const ProbeMeasurement m = MeasurementFromLaunch(Exited(output, 3), kLoopback, ProbeOptions{});
    EXPECT_EQ(m.outcome, ProbeOutcome::kUnsupported);
    EXPECT_NE(
        m.error.find("printed no result (exit status 3): " + output.substr(0, output.find('\n'))),
        std::string::npos)
        << m.error;
    EXPECT_EQ(ClassifyProbe(m, 0, 0.5), ProbeVerdict::kUnavailable);  // never confirms a drain
  }
  LaunchResult crashed;
  crashed.outcome = LaunchResult::Outcome::kSignaled;
  crashed.term_signal = 11;
  EXPECT_NE(MeasurementFromLaunch(crashed, kLoopback, ProbeOptions{}).error.find("signal 11"),
            std::string::npos);
  LaunchResult spawn;
  spawn.error = Status(StatusCode::kNotFound, "spawn /nope: No such file or directory");
  const ProbeMeasurement m = MeasurementFromLaunch(spawn, kLoopback, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kUnsupported);
  EXPECT_NE(m.error.find("did not start"), std::string::npos) << m.error;
}

LaunchResult Killed(std::string output) {
  LaunchResult killed;
  killed.outcome = LaunchResult::Outcome::kTimedOut;
  killed.output = std::move(output);
  killed.duration = milliseconds(8000);
  return killed;
}

// A child killed at its deadline is judged by the last phase it reported (--progress).
TEST(ProcessProberTest, KilledInTheDataPhaseIsATimeout) {
  ProbeOptions options;
  options.timeout = seconds(5);
  const ProbeMeasurement m = MeasurementFromLaunch(
      Killed("{\"phase\":\"setup\"}\n{\"phase\":\"data\"}\n"), kPair, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kTimeout);
  EXPECT_EQ(m.path, "pair");
  EXPECT_EQ(m.error,
            "mlx5_0/1: the probe process did not end within 8s; killed, in the bandwidth or "
            "latency phase");
  EXPECT_EQ(ClassifyProbe(m, 0, 0.5), ProbeVerdict::kFailed);
  LaunchResult cancelled;
  cancelled.outcome = LaunchResult::Outcome::kCancelled;
  EXPECT_EQ(MeasurementFromLaunch(cancelled, kPair, options).outcome, ProbeOutcome::kUnsupported);
}

TEST(ProcessProberTest, KilledInSetUpOrSilentIsASetupError) {
  ProbeOptions options;
  options.timeout = seconds(5);
  for (const std::string& output : {std::string(), std::string("libibverbs: Warning: x\n"),
                                    std::string("{\"phase\":\"setup\"}\n")}) {
    SCOPED_TRACE(output);
    const ProbeMeasurement m = MeasurementFromLaunch(Killed(output), kLoopback, options);
    EXPECT_EQ(m.outcome, ProbeOutcome::kSetupError);
    EXPECT_NE(m.error.find("did not end within 8s; killed"), std::string::npos) << m.error;
    EXPECT_EQ(ClassifyProbe(m, 0, 0.5), ProbeVerdict::kUnavailable);  // never confirms a drain
  }
  EXPECT_NE(MeasurementFromLaunch(Killed("{\"phase\":\"setup\"}\n"), kLoopback, options)
                .error.find("in set-up"),
            std::string::npos);
}

TEST(ProcessProberTest, KilledInTheCleanUpKeepsTheMeasurement) {
  ProbeOptions options;
  options.timeout = seconds(5);
  const std::string output =
      "{\"phase\":\"setup\"}\n{\"phase\":\"data\"}\n{\"phase\":\"cleanup\",\"result\":" +
      std::string(kOkLine) + "}\n";
  const ProbeMeasurement m = MeasurementFromLaunch(Killed(output), kLoopback, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk);
  EXPECT_DOUBLE_EQ(m.bandwidth_bytes_per_second, 12.5e9);
  EXPECT_EQ(m.elapsed, milliseconds(8000));  // the child's whole life
  EXPECT_NE(m.error.find("killed, in its clean-up after the measurement"), std::string::npos)
      << m.error;
  EXPECT_EQ(ClassifyProbe(m, 0, 0.5), ProbeVerdict::kHealthy);
  // A set-up error whose clean-up hung is still the set-up error.
  const ProbeMeasurement setup = MeasurementFromLaunch(
      Killed(
          R"({"phase":"setup"})"
          "\n"
          R"({"phase":"cleanup","result":{"outcome":"setup_error","error":"mlx5_0/1: ibv_modify_qp: Invalid argument"}})"
          "\n"),
      kLoopback, options);
  EXPECT_EQ(setup.outcome, ProbeOutcome::kSetupError);
  EXPECT_TRUE(setup.error.starts_with(
      "mlx5_0/1: ibv_modify_qp: Invalid argument; mlx5_0/1: the probe process did not end"))
      << setup.error;
}

TEST(ProcessProberTest, PhaseLinesAreNotTheResult) {
  // An exited child's result is its last result line, after its phase lines.
  const ProbeMeasurement m = MeasurementFromLaunch(
      Exited("{\"phase\":\"setup\"}\n{\"phase\":\"data\"}\n{\"phase\":\"cleanup\",\"result\":" +
             std::string(kOkLine) + "}\n" + kOkLine + "\n"),
      kLoopback, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk);
  // A child that crashed after its phase lines: the first line shown is not a phase line.
  const ProbeMeasurement crashed = MeasurementFromLaunch(
      Exited("{\"phase\":\"setup\"}\nSegmentation fault\n", 139), kLoopback, ProbeOptions{});
  EXPECT_EQ(crashed.outcome, ProbeOutcome::kUnsupported);
  EXPECT_NE(crashed.error.find("(exit status 139): Segmentation fault"), std::string::npos)
      << crashed.error;
}

TEST(ProcessProberTest, AnUnlockedProbeSaysSoInItsError) {
  std::string line = kOkLine;
  line.insert(line.size() - 1, R"(,"lock":"unlocked: /run/fabricwatch-probe.lock is missing")");
  const ProbeMeasurement m = MeasurementFromLaunch(Exited(line + "\n"), kLoopback, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk);
  EXPECT_EQ(m.lock, "unlocked: /run/fabricwatch-probe.lock is missing");
  EXPECT_EQ(m.error,
            "the probe ran without the node lock (unlocked: /run/fabricwatch-probe.lock is "
            "missing)");
  line = kOkLine;
  line.insert(line.size() - 1, R"(,"lock":"held")");
  const ProbeMeasurement held =
      MeasurementFromLaunch(Exited(line + "\n"), kLoopback, ProbeOptions{});
  EXPECT_EQ(held.lock, "held");
  EXPECT_EQ(held.error, "");
}

TEST(ProcessProberTest, TheChildEnvironmentKeepsOnlyPathAndVerbsSettings) {
  std::string a = "PATH=/usr/bin", b = "HOME=/root", c = "RDMAV_FORK_SAFE=1", d = "MLX5_SCATTER=0",
              e = "SECRET_TOKEN=x", f = "LD_LIBRARY_PATH=/opt/rdma-core/lib",
              g = "LD_PRELOAD=/tmp/x.so";
  char* entries[] = {a.data(), b.data(), c.data(), d.data(), e.data(), f.data(), g.data(), nullptr};
  // LD_LIBRARY_PATH: rdma-core outside the system's library path (/opt) is found by the child.
  EXPECT_EQ(ProbeChildEnvironment(entries),
            (std::vector<std::string>{"PATH=/usr/bin", "RDMAV_FORK_SAFE=1", "MLX5_SCATTER=0",
                                      "LD_LIBRARY_PATH=/opt/rdma-core/lib"}));
  char* none[] = {nullptr};
  ASSERT_EQ(ProbeChildEnvironment(none).size(), 1u);
  EXPECT_TRUE(ProbeChildEnvironment(none)[0].starts_with("PATH="));
}

// Real children: /bin/sh scripts in place of `fabricwatch probe`.
class ProcessProberRealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "fabricwatch-prober-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
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
  ProcessPortProber Prober(const std::string& script) {
    ProcessProberOptions process;
    process.executable = script;
    process.env = {"PATH=/usr/bin:/bin"};
    return ProcessPortProber(launcher_, process);
  }

  fs::path dir_;
  exporter::PosixProcessLauncher launcher_;
};

TEST_F(ProcessProberRealTest, AChildThatAnswersIsRead) {
  // It checks that it was asked as `fabricwatch probe` is.
  const std::string script =
      Script("probe", std::string("[ \"$1\" = probe ] && [ \"$2\" = mlx5_0/1 ] || exit 9\n"
                                  "echo 'libibverbs: Warning: something' >&2\necho '") +
                          kOkLine + "'\n");
  ProbeOptions options;
  options.timeout = seconds(5);
  const ProbeMeasurement m = Prober(script).Measure(kLoopback, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk) << m.error;
  EXPECT_DOUBLE_EQ(m.bandwidth_bytes_per_second, 12.5e9);
}

TEST_F(ProcessProberRealTest, AChildPastTheDeadlineIsKilledWithItsGroup) {
  // It outlives its deadline (timeout 100 ms + the margin), with a child of its own that holds
  // the output pipe: the process group goes, so the measurement ends. It said it was in the data
  // phase: a timeout, the port's evidence.
  const std::string script = Script("hang",
                                    "echo '{\"phase\":\"setup\"}'\necho '{\"phase\":\"data\"}'\n"
                                    "sleep 60 &\nexec sleep 60\n");
  ProbeOptions options;
  options.duration = milliseconds(50);
  options.timeout = milliseconds(100);
  const ProbeMeasurement m = Prober(script).Measure(kLoopback, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kTimeout);
  EXPECT_NE(m.error.find("did not end within 3100ms; killed, in the bandwidth"), std::string::npos)
      << m.error;
  EXPECT_EQ(ClassifyProbe(m, 0, 0.5), ProbeVerdict::kFailed);
}

TEST_F(ProcessProberRealTest, AChildStuckInSetUpIsASetupError) {
  const std::string script = Script("hang", "echo '{\"phase\":\"setup\"}'\nexec sleep 60\n");
  ProbeOptions options;
  options.duration = milliseconds(50);
  options.timeout = milliseconds(100);
  const ProbeMeasurement m = Prober(script).Measure(kLoopback, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kSetupError) << m.error;
  EXPECT_EQ(ClassifyProbe(m, 0, 0.5), ProbeVerdict::kUnavailable);
}

TEST_F(ProcessProberRealTest, TheResultSurvivesChattyOutput) {
  // 64 KiB of warnings before the result: the launcher keeps the tail, where the result is.
  const std::string script =
      Script("chatty",
             std::string("i=0\nwhile [ $i -lt 1024 ]; do\n"
                         "  echo 'libibverbs: Warning: a line of sixty-four bytes or so.....' >&2\n"
                         "  i=$((i+1))\ndone\necho '") +
                 kOkLine + "'\n");
  ProbeOptions options;
  options.timeout = seconds(5);
  const ProbeMeasurement m = Prober(script).Measure(kLoopback, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kOk) << m.error;
  EXPECT_DOUBLE_EQ(m.bandwidth_bytes_per_second, 12.5e9);
}

// ProbeRunner::Stop() kills a running probe child at once and answers "stopped": no result is
// kept and nothing a drain could act on.
TEST_F(ProcessProberRealTest, StoppingTheRunnerKillsTheChild) {
  const std::string started = (dir_ / "started").string();
  const std::string script = Script("hang", "touch '" + started + "'\nexec sleep 60\n");
  ProcessProberOptions process;
  process.executable = script;
  process.env = {"PATH=/usr/bin:/bin"};
  ProbeConfig config;
  config.enabled = true;
  config.options.timeout = seconds(60);
  exporter::hook_testing::FakeClock clock;
  ProbeRunner runner(config, std::make_unique<ProcessPortProber>(launcher_, process), clock,
                     exporter::GetLogger("probe"));
  runner.Start();
  std::optional<ProbeReport> got;
  runner.Request({"mlx5_0", 1}, "test", [&](const ProbeReport& r) { got = r; });
  // Wait (bounded) for the child to run.
  for (int i = 0; i < 3000 && !fs::exists(started); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_TRUE(fs::exists(started));
  runner.Stop();
  ASSERT_TRUE(got);
  EXPECT_EQ(got->refused, "stopped");
  EXPECT_NE(got->detail.find("stopped while the probe ran"), std::string::npos) << got->detail;
  EXPECT_FALSE(runner.Last({"mlx5_0", 1}));
}

// ---------------------------------------------------------------------------------------------
// hooks.confirm_with_probe without probe.partners: the start-up warning.

TEST(LoopbackWarningTest, NamesThePortsWithoutAPartner) {
  ProbeConfig config;
  const std::vector<PortRef> ports = {{"mlx5_0", 1}, {"mlx5_1", 1}};
  std::optional<std::string> warning = LoopbackOnlyWarning(ports, config);
  ASSERT_TRUE(warning);
  EXPECT_TRUE(
      warning->starts_with("loopback probes do not cover the cable: mlx5_0/1, mlx5_1/1 "
                           "have no probe.partners entry"))
      << *warning;
  EXPECT_NE(warning->find("configure probe.partners"), std::string::npos);
  config.partners[{"mlx5_0", 1}] = PortRef{"mlx5_1", 1};
  warning = LoopbackOnlyWarning(ports, config);
  ASSERT_TRUE(warning);
  EXPECT_TRUE(warning->starts_with("loopback probes do not cover the cable: mlx5_1/1 has no"))
      << *warning;
  config.partners[{"mlx5_1", 1}] = PortRef{"mlx5_0", 1};
  EXPECT_FALSE(LoopbackOnlyWarning(ports, config));
  EXPECT_FALSE(LoopbackOnlyWarning({}, ProbeConfig{}));
}

TEST_F(ProcessProberRealTest, ListsTheRdmaPortsOfSysfs) {
  for (const char* port : {"class/infiniband/mlx5_1/ports/1", "class/infiniband/mlx5_0/ports/2",
                           "class/infiniband/mlx5_0/ports/1"}) {
    fs::create_directories(dir_ / port);
  }
  EXPECT_EQ(ListRdmaPorts(dir_.string()),
            (std::vector<PortRef>{{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}}));
  EXPECT_TRUE(ListRdmaPorts((dir_ / "absent").string()).empty());
}

}  // namespace
}  // namespace fabricwatch::probe
