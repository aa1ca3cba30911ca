// The active RDMA probe (issue 37): the verdict, the verbs prober where there is no such device,
// and the `fabricwatch probe` command against a fake prober. The measurement itself runs
// against the real kernel in tests/kernel/rdma_probe_test.sh.

#include "exporter/probe/probe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/sys/unique_fd.h"
#include "exporter/probe/probe_command.h"

namespace fabricwatch::probe {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;

ProbeMeasurement Measured(ProbeOutcome outcome, double bytes_per_second = 0) {
  ProbeMeasurement m;
  m.outcome = outcome;
  m.bandwidth_bytes_per_second = bytes_per_second;
  return m;
}

TEST(ClassifyProbe, EveryOutcome) {
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kOk, 1e9), 0, 0.5), ProbeVerdict::kHealthy);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kPortDown), 100e9, 0.5), ProbeVerdict::kFailed);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kError), 100e9, 0.5), ProbeVerdict::kFailed);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kTimeout), 100e9, 0.5), ProbeVerdict::kFailed);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kUnsupported), 100e9, 0.5),
            ProbeVerdict::kUnavailable);
  // The host's error (ENOMEM, a starved set-up) says nothing about the port: no drain on it.
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kSetupError), 100e9, 0.5),
            ProbeVerdict::kUnavailable);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kSetupError), 0, 0.5), ProbeVerdict::kUnavailable);
  // A failed probe stays failed with no expected rate (nothing to compare is no excuse).
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kTimeout), 0, 0.5), ProbeVerdict::kFailed);
}

TEST(ClassifyProbe, TheBoundary) {
  // 100 Gb/s expected, fraction 0.5: 50 Gb/s = 6.25e9 B/s is the bar, and healthy.
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kOk, 6.25e9), 100e9, 0.5), ProbeVerdict::kHealthy);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kOk, 6.25e9 - 1), 100e9, 0.5),
            ProbeVerdict::kDegraded);
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kOk, 0), 100e9, 0.5), ProbeVerdict::kDegraded);
  // No bar: a probe that moved data is healthy.
  EXPECT_EQ(ClassifyProbe(Measured(ProbeOutcome::kOk, 1), 100e9, 0), ProbeVerdict::kHealthy);
}

TEST(ProbeNames, AreStable) {
  EXPECT_EQ(ProbeOutcomeName(ProbeOutcome::kOk), "ok");
  EXPECT_EQ(ProbeOutcomeName(ProbeOutcome::kPortDown), "port_down");
  EXPECT_EQ(ProbeOutcomeName(ProbeOutcome::kError), "error");
  EXPECT_EQ(ProbeOutcomeName(ProbeOutcome::kTimeout), "timeout");
  EXPECT_EQ(ProbeOutcomeName(ProbeOutcome::kUnsupported), "unsupported");
  EXPECT_EQ(ProbeOutcomeName(ProbeOutcome::kSetupError), "setup_error");
  EXPECT_EQ(ProbeVerdictName(ProbeVerdict::kHealthy), "healthy");
  EXPECT_EQ(ProbeVerdictName(ProbeVerdict::kDegraded), "degraded");
  EXPECT_EQ(ProbeVerdictName(ProbeVerdict::kFailed), "failed");
  EXPECT_EQ(ProbeVerdictName(ProbeVerdict::kUnavailable), "unavailable");
}

// A lock file of this test's own (the node's, /run/fabricwatch-probe.lock, is left alone).
std::string TestLockPath() {
  return testing::TempDir() + "/probe_lock_" + std::to_string(getpid());
}
// A lock in a directory that does not exist: the probe runs unlocked and leaves no file.
std::string NoLock() { return TestLockPath() + "_no_such_dir/fabricwatch-probe.lock"; }

TEST(VerbsProber, NoSuchDeviceIsUnsupported) {
  // No RDMA device of this name exists on a build host (nor on an RDMA one).
  ProbeTarget target{PortRef{"fwprobe_none0", 1}, std::nullopt};
  ProbeMeasurement m = NewVerbsProber(NoLock())->Measure(target, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kUnsupported);
  EXPECT_NE(m.error.find("fwprobe_none0"), std::string::npos) << m.error;
  EXPECT_EQ(m.path, "loopback");
  EXPECT_EQ(m.registered_bytes, 0u);
  EXPECT_EQ(ClassifyProbe(m, 100e9, 0.5), ProbeVerdict::kUnavailable);
}

TEST(VerbsProber, PairWithNoSuchPartnerIsUnsupported) {
  ProbeTarget target{PortRef{"fwprobe_none0", 1}, PortRef{"fwprobe_none1", 1}};
  ProbeMeasurement m = NewVerbsProber(NoLock())->Measure(target, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kUnsupported);
  EXPECT_EQ(m.path, "pair");
}

TEST(VerbsProber, GpuMemoryIsUnsupported) {
  ProbeOptions options;
  options.gpu_memory = true;
  ProbeMeasurement m =
      NewVerbsProber(NoLock())->Measure(ProbeTarget{PortRef{"mlx5_0", 1}, std::nullopt}, options);
  EXPECT_EQ(m.outcome, ProbeOutcome::kUnsupported);
  EXPECT_NE(m.error.find("GPU buffers are not built into this version"), std::string::npos)
      << m.error;
  EXPECT_EQ(m.registered_bytes, 0u);
}

TEST(VerbsProber, AnotherProbeHoldsTheNodeLock) {
  const std::string path = TestLockPath() + "_held";
  unlink(path.c_str());
  auto prober = NewVerbsProber(path);
  ProbeTarget target{PortRef{"fwprobe_none0", 1}, std::nullopt};
  ProbeOptions options;
  // Waits min(timeout / 2, 2 s, timeout - DataPhaseTime(duration)) = 300 ms for the lock.
  options.duration = milliseconds(50);
  options.timeout = milliseconds(600);
  // Free: the prober creates the file 0644 and gets as far as the device list.
  ProbeMeasurement m = prober->Measure(target, options);
  EXPECT_NE(m.error.find("no RDMA device fwprobe_none0"), std::string::npos) << m.error;
  EXPECT_EQ(m.lock, "held");
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  {
    // Held by another (a flock of this test): not probed, and not the port's fault.
    sys::UniqueFd held(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(held);
    ASSERT_EQ(flock(held.get(), LOCK_EX | LOCK_NB), 0);
    m = prober->Measure(target, options);
    EXPECT_EQ(m.outcome, ProbeOutcome::kUnsupported);
    EXPECT_NE(m.error.find("another probe runs on this node"), std::string::npos) << m.error;
    EXPECT_EQ(ClassifyProbe(m, 100e9, 0.5), ProbeVerdict::kUnavailable);
    EXPECT_GE(m.elapsed, milliseconds(300));
    EXPECT_LT(m.elapsed, milliseconds(2000));
  }
  // Released: the next probe takes the lock again.
  m = prober->Measure(target, options);
  EXPECT_NE(m.error.find("no RDMA device"), std::string::npos) << m.error;
  unlink(path.c_str());
}

TEST(VerbsProber, NoLockDirectoryProbesUnlocked) {
  auto prober = NewVerbsProber(NoLock());
  ProbeMeasurement m =
      prober->Measure(ProbeTarget{PortRef{"fwprobe_none0", 1}, std::nullopt}, ProbeOptions{});
  EXPECT_NE(m.error.find("no RDMA device"), std::string::npos) << m.error;
  EXPECT_EQ(m.lock, "unlocked: " + NoLock() +
                        " is missing and cannot be created (No such file or directory)");
}

// The agent (DynamicUser, /run read-only or not its own) cannot create the lock: it probes
// unlocked and says so, rather than failing every probe.
TEST(VerbsProber, ALockThatCannotBeCreatedProbesUnlocked) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes a 0555 directory";
  const std::string dir = TestLockPath() + "_ro";
  std::filesystem::create_directories(dir);
  ASSERT_EQ(chmod(dir.c_str(), 0555), 0);
  ProbeMeasurement m =
      NewVerbsProber(dir + "/fabricwatch-probe.lock")
          ->Measure(ProbeTarget{PortRef{"fwprobe_none0", 1}, std::nullopt}, ProbeOptions{});
  EXPECT_NE(m.error.find("no RDMA device"), std::string::npos) << m.error;
  EXPECT_TRUE(m.lock.starts_with("unlocked: ")) << m.lock;
  EXPECT_NE(m.lock.find("Permission denied"), std::string::npos) << m.lock;
  chmod(dir.c_str(), 0755);
  std::filesystem::remove_all(dir);
}

// An existing lock file is opened read-only: flock needs no write access, so a probe that could
// not write it (the agent, root's 0644 file) still takes the lock.
TEST(VerbsProber, AReadOnlyLockFileIsLocked) {
  const std::string path = TestLockPath() + "_readonly";
  unlink(path.c_str());
  { std::ofstream(path) << ""; }
  ASSERT_EQ(chmod(path.c_str(), 0444), 0);
  ProbeMeasurement m = NewVerbsProber(path)->Measure(
      ProbeTarget{PortRef{"fwprobe_none0", 1}, std::nullopt}, ProbeOptions{});
  EXPECT_NE(m.error.find("no RDMA device"), std::string::npos) << m.error;
  EXPECT_EQ(m.lock, "held");
  unlink(path.c_str());
}

TEST(DataPhaseShortfall, NeedsTheDurationATenthAndTheSlack) {
  ProbeOptions options;
  options.duration = milliseconds(1000);
  options.timeout = milliseconds(2100);
  EXPECT_EQ(DataPhaseTime(options.duration), milliseconds(1100) + kDataPhaseSlack);
  EXPECT_EQ(DataPhaseShortfall(milliseconds(1100) + kDataPhaseSlack, options), "");
  EXPECT_EQ(DataPhaseShortfall(milliseconds(2000), options), "");
  // A 1 s lock wait at the config's least timeout (duration × 1.1 + 1 s) leaves 1.1 s: too
  // little, and a set-up error, not a timeout in the bandwidth phase.
  EXPECT_EQ(DataPhaseShortfall(milliseconds(1100), options),
            "not enough time left after the lock wait and set-up (1.1 s of the 2.1 s timeout; "
            "the data phases need 1.3 s)");
  EXPECT_NE(DataPhaseShortfall(milliseconds(-5), options).find("(0 s of"), std::string::npos);
}

TEST(VerbsProber, ALinkAsTheLockIsRefused) {
  const std::string path = TestLockPath() + "_link";
  unlink(path.c_str());
  ASSERT_EQ(symlink("/etc/passwd", path.c_str()), 0);
  ProbeMeasurement m = NewVerbsProber(path)->Measure(
      ProbeTarget{PortRef{"fwprobe_none0", 1}, std::nullopt}, ProbeOptions{});
  EXPECT_EQ(m.outcome, ProbeOutcome::kSetupError);
  EXPECT_NE(m.error.find("the probe lock"), std::string::npos) << m.error;
  unlink(path.c_str());
}

TEST(ParsePortRef, Forms) {
  auto ok = ParsePortRef("mlx5_0/1");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->device, "mlx5_0");
  EXPECT_EQ(ok->port, 1u);
  for (const char* bad : {"mlx5_0", "mlx5_0/", "/1", "mlx5_0/0", "mlx5_0/256", "mlx5_0/1x",
                          "mlx5_0/-1", "a/b/1", "../1"}) {
    EXPECT_FALSE(ParsePortRef(bad).has_value()) << bad;
  }
}

// A prober that returns what it is given and remembers what it was asked.
class FakeProber : public PortProber {
 public:
  explicit FakeProber(ProbeMeasurement m) : m_(std::move(m)) {}
  ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options) override {
    ++calls;
    last_target = target;
    last_options = options;
    return m_;
  }
  int calls = 0;
  ProbeTarget last_target;
  ProbeOptions last_options;

 private:
  ProbeMeasurement m_;
};

ProbeMeasurement HealthyLoopback() {
  ProbeMeasurement m;
  m.outcome = ProbeOutcome::kOk;
  m.path = "loopback";
  m.bandwidth_bytes_per_second = 91.3e9 / 8;
  m.latency_median = nanoseconds(4100);
  m.latency_max = nanoseconds(12900);
  m.bytes_written = 11412500000;
  m.writes_completed = 174141;
  m.elapsed = milliseconds(1020);
  m.registered_bytes = 2 * 65536 * 16;
  return m;
}

struct CommandResult {
  int exit = -1;
  std::string out, err;
};

CommandResult RunCommand(PortProber& prober, std::vector<std::string> args,
                         const std::string& sysfs_root = "/nonexistent") {
  args.insert(args.begin(), "probe");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  ProbeCommandEnv env{&prober, &out, &err, sysfs_root};
  CommandResult r;
  r.exit = RunProbeCommand(static_cast<int>(argv.size()), argv.data(), env);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(ProbeCommand, HealthyLine) {
  FakeProber prober(HealthyLoopback());
  CommandResult r = RunCommand(prober, {"mlx5_0/1", "--expected-rate-gbps", "100"});
  EXPECT_EQ(r.exit, kExitHealthy) << r.err;
  EXPECT_EQ(r.out,
            "fabricwatch probe: OK: mlx5_0/1 loopback 91.3 Gb/s, write round trip 4.1 us "
            "(median), 12.9 us (max), 1.02 s\n");
  EXPECT_EQ(prober.last_target.port, (PortRef{"mlx5_0", 1}));
  EXPECT_FALSE(prober.last_target.partner.has_value());
  EXPECT_EQ(prober.last_options.duration, milliseconds(1000));
  EXPECT_EQ(prober.last_options.timeout, milliseconds(5000));
}

TEST(ProbeCommand, OptionsReachTheProber) {
  FakeProber prober(HealthyLoopback());
  CommandResult r =
      RunCommand(prober, {"rxe0/1", "--partner", "rxe1/1", "--duration", "500ms", "--timeout", "3s",
                          "--message-size", "4096", "--window", "4"});
  EXPECT_EQ(r.exit, kExitHealthy) << r.err;  // no sysfs rate here: no bar
  ASSERT_TRUE(prober.last_target.partner.has_value());
  EXPECT_EQ(*prober.last_target.partner, (PortRef{"rxe1", 1}));
  EXPECT_EQ(prober.last_options.duration, milliseconds(500));
  EXPECT_EQ(prober.last_options.timeout, milliseconds(3000));
  EXPECT_EQ(prober.last_options.message_bytes, 4096u);
  EXPECT_EQ(prober.last_options.window, 4u);
}

TEST(ProbeCommand, DegradedAgainstTheSysfsRate) {
  const std::string root = testing::TempDir() + "/probe_sysfs_" + std::to_string(getpid());
  std::filesystem::create_directories(root + "/class/infiniband/mlx5_0/ports/1");
  std::ofstream(root + "/class/infiniband/mlx5_0/ports/1/rate") << "400 Gb/sec (4X NDR)\n";
  EXPECT_DOUBLE_EQ(ReadPortRateBits(root, PortRef{"mlx5_0", 1}), 400e9);
  FakeProber prober(HealthyLoopback());  // 91.3 Gb/s < 0.5 × 400
  CommandResult r = RunCommand(prober, {"mlx5_0/1"}, root);
  EXPECT_EQ(r.exit, kExitDegraded);
  EXPECT_NE(r.out.find("DEGRADED: mlx5_0/1 loopback 91.3 Gb/s, below 0.5 of the expected 400 Gb/s"),
            std::string::npos)
      << r.out;
  // An explicit 0 is no bar.
  EXPECT_EQ(RunCommand(prober, {"mlx5_0/1", "--expected-rate-gbps", "0"}, root).exit, kExitHealthy);
  std::filesystem::remove_all(root);
}

TEST(ProbeCommand, FailedAndUnavailableLines) {
  ProbeMeasurement down;
  down.outcome = ProbeOutcome::kPortDown;
  down.path = "pair";
  down.error = "port 1 of rxe0 is DOWN (phys Disabled)";
  FakeProber down_prober(down);
  CommandResult r = RunCommand(down_prober, {"rxe0/1", "--partner", "rxe1/1"});
  EXPECT_EQ(r.exit, kExitFailed);
  EXPECT_EQ(r.out,
            "fabricwatch probe: ERROR: rxe0/1 pair to rxe1/1: port_down: port 1 of rxe0 is DOWN "
            "(phys Disabled)\n");
  ProbeMeasurement none;
  none.outcome = ProbeOutcome::kUnsupported;
  none.error = "no RDMA device mlx5_9";
  FakeProber none_prober(none);
  r = RunCommand(none_prober, {"mlx5_9/1"});
  EXPECT_EQ(r.exit, kExitUnavailable);
  EXPECT_NE(r.out.find("UNAVAILABLE: mlx5_9/1 loopback: unsupported: no RDMA device mlx5_9"),
            std::string::npos)
      << r.out;
}

TEST(ProbeCommand, ArgumentErrors) {
  FakeProber prober(HealthyLoopback());
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"mlx5_0"}, "not <device>/<port>"},
      {{"mlx5_0/x"}, "not a number from 1 to 255"},
      {{"mlx5_0/1", "--partner", "mlx5_1"}, "--partner: not <device>/<port>"},
      {{"mlx5_0/1", "--duration", "soon"}, "--duration"},
      {{"mlx5_0/1", "--duration", "5s", "--timeout", "5s"}, "× 1.1 + 1s"},
      // The config's rule (exporter::MinProbeTimeout): 1s × 1.1 + 1s = 2.1s.
      {{"mlx5_0/1", "--duration", "1s", "--timeout", "2s"}, "× 1.1 + 1s (2100ms)"},
      {{"mlx5_0/1", "--progress"}, "--progress needs --json"},
      {{"mlx5_0/1", "--window", "0"}, "--window 0 is outside 1..128"},
      {{"mlx5_0/1", "--window", "129"}, "--window 129 is outside 1..128"},
      {{"mlx5_0/1", "--message-size", "63"}, "--message-size 63 is outside 64..4194304"},
      {{"mlx5_0/1", "--message-size", "4194305"}, "is outside 64..4194304"},
      {{"mlx5_0/1", "--message-size", "1073741824"}, "is outside 64..4194304"},
      {{"mlx5_0/1", "--degraded-fraction", "1.5"}, "between 0 and 1"},
      {{}, "port is required"},
      {{"mlx5_0/1", "--no-such-flag"}, "no-such-flag"},
  };
  for (const Case& c : cases) {
    CommandResult r = RunCommand(prober, c.args);
    EXPECT_EQ(r.exit, kExitUnavailable) << c.says;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("fabricwatch probe: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(prober.calls, 0);
}

TEST(ProbeCommand, TheLeastTimeoutIsAccepted) {
  FakeProber prober(HealthyLoopback());
  CommandResult r = RunCommand(prober, {"mlx5_0/1", "--duration", "1s", "--timeout", "2100ms"});
  EXPECT_EQ(r.exit, kExitHealthy) << r.err;
}

// Reports its phases as the verbs prober does (probe.h on_phase).
class PhasedProber final : public PortProber {
 public:
  explicit PhasedProber(ProbeMeasurement m) : m_(std::move(m)) {}
  ProbeMeasurement Measure(const ProbeTarget&, const ProbeOptions& options) override {
    ProbeMeasurement so_far;
    if (options.on_phase) options.on_phase("setup", so_far);
    if (options.on_phase) options.on_phase("data", so_far);
    if (options.on_phase) options.on_phase("cleanup", m_);
    return m_;
  }

 private:
  ProbeMeasurement m_;
};

TEST(ProbeCommand, ProgressLinesComeBeforeTheResult) {
  PhasedProber prober(HealthyLoopback());
  CommandResult r = RunCommand(prober, {"mlx5_0/1", "--json", "--progress"});
  EXPECT_EQ(r.exit, kExitHealthy) << r.err;
  std::vector<nlohmann::json> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], (nlohmann::json{{"phase", "setup"}}));
  EXPECT_EQ(lines[1], (nlohmann::json{{"phase", "data"}}));
  EXPECT_EQ(lines[2]["phase"], "cleanup");
  EXPECT_EQ(lines[2]["result"]["outcome"], "ok");
  EXPECT_EQ(lines[2]["result"], lines[3]);  // the result, before the clean-up
  EXPECT_EQ(lines[3]["outcome"], "ok");
  // Without --progress: one JSON object, the last (only) line.
  r = RunCommand(prober, {"mlx5_0/1", "--json"});
  EXPECT_EQ(nlohmann::json::parse(r.out)["outcome"], "ok");
}

TEST(ProbeCommand, TheRangesEndsAreAccepted) {
  FakeProber prober(HealthyLoopback());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"mlx5_0/1", "--window", "1", "--message-size", "64"},
        std::vector<std::string>{"mlx5_0/1", "--window", "128", "--message-size", "4194304"}}) {
    CommandResult r = RunCommand(prober, args);
    EXPECT_EQ(r.exit, kExitHealthy) << r.err;
  }
  EXPECT_EQ(prober.last_options.window, 128u);
  EXPECT_EQ(prober.last_options.message_bytes, 4194304u);
}

TEST(ProbeCommand, ASetupErrorIsUnavailable) {
  ProbeMeasurement host;
  host.outcome = ProbeOutcome::kSetupError;
  host.path = "loopback";
  host.error = "mlx5_0/1: ibv_create_qp: Cannot allocate memory";
  FakeProber prober(host);
  CommandResult r = RunCommand(prober, {"mlx5_0/1"});
  EXPECT_EQ(r.exit, kExitUnavailable);
  EXPECT_NE(r.out.find("UNAVAILABLE: mlx5_0/1 loopback: setup_error: mlx5_0/1: ibv_create_qp"),
            std::string::npos)
      << r.out;
}

TEST(ProbeCommand, JsonHasEveryField) {
  FakeProber prober(HealthyLoopback());
  CommandResult r = RunCommand(prober, {"mlx5_0/1", "--json", "--expected-rate-gbps", "100"});
  EXPECT_EQ(r.exit, kExitHealthy);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["port"], "mlx5_0/1");
  EXPECT_TRUE(j["partner"].is_null());
  EXPECT_EQ(j["path"], "loopback");
  EXPECT_EQ(j["outcome"], "ok");
  EXPECT_EQ(j["verdict"], "healthy");
  EXPECT_EQ(j["error"], "");
  EXPECT_DOUBLE_EQ(j["bandwidth_bytes_per_second"].get<double>(), 91.3e9 / 8);
  EXPECT_NEAR(j["bandwidth_gbps"].get<double>(), 91.3, 1e-9);
  EXPECT_EQ(j["latency_median_ns"], 4100);
  EXPECT_EQ(j["latency_max_ns"], 12900);
  EXPECT_EQ(j["bytes_written"], 11412500000u);
  EXPECT_EQ(j["writes_completed"], 174141);
  EXPECT_EQ(j["elapsed_ns"], 1020000000);
  EXPECT_EQ(j["registered_bytes"], 2 * 65536 * 16);
  EXPECT_DOUBLE_EQ(j["expected_bits_per_second"].get<double>(), 100e9);
  EXPECT_DOUBLE_EQ(j["degraded_fraction"].get<double>(), 0.5);
  EXPECT_EQ(j["lock"], "");
  ProbeMeasurement down;
  down.outcome = ProbeOutcome::kTimeout;
  down.error = "rxe0/1 to rxe1/1: not done within the 5 s timeout";
  FakeProber timeout_prober(down);
  j = nlohmann::json::parse(
      RunCommand(timeout_prober, {"rxe0/1", "--partner", "rxe1/1", "--json"}).out);
  EXPECT_EQ(j["partner"], "rxe1/1");
  EXPECT_EQ(j["outcome"], "timeout");
  EXPECT_EQ(j["verdict"], "failed");
  EXPECT_EQ(j["error"], down.error);
}

TEST(ProbeCommand, AnUnlockedProbeSaysSo) {
  ProbeMeasurement m = HealthyLoopback();
  m.lock =
      "unlocked: /run/fabricwatch-probe.lock is missing and cannot be created (Read-only "
      "file system)";
  FakeProber prober(m);
  CommandResult r = RunCommand(prober, {"mlx5_0/1"});
  EXPECT_TRUE(r.out.ends_with(", 1.02 s (" + m.lock + ")\n")) << r.out;
  EXPECT_EQ(nlohmann::json::parse(RunCommand(prober, {"mlx5_0/1", "--json"}).out)["lock"], m.lock);
}

}  // namespace
}  // namespace fabricwatch::probe
