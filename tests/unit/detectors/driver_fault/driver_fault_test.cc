// driver_fault on log events as the kmsg collector hands them over: each class of the pattern
// table raises what the detector promises (detectors/driver_fault/driver_fault.h), holds and
// clears on time, one finding per entity, floods as one finding with the count, link lines
// never, and the state survives a restart.

#include "detectors/driver_fault/driver_fault.h"

#include <gtest/gtest.h>

#include "collectors/optics/optics_metrics.h"
#include "detectors/core/state_check.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kT0{seconds(1795000000)};

LogEvent Event(std::string event, uint64_t count, TimePoint time, std::string device = "mlx5_0",
               std::string netdev = "eth0") {
  LogEvent e{std::move(event), std::move(device), std::move(netdev), count, time, {}};
  for (uint64_t i = 0; i < std::min<uint64_t>(count, kMaxLogLinesPerEvent); ++i) {
    e.lines.push_back({time, "line " + e.event + " " + std::to_string(i)});
  }
  return e;
}

class Harness {
 public:
  explicit Harness(DetectorOptions options = {}) {
    auto made = MakeDriverFaultDetector(options);
    EXPECT_TRUE(made) << made.error().ToString();
    detector_ = std::move(*made);
  }
  std::vector<Finding> Feed(TimePoint time, std::vector<LogEvent> events) {
    static const std::vector<prometheus::MetricFamily> kNone;
    detector_->Observe(SnapshotView{"kmsg", time, kNone, events});
    return detector_->Evaluate(time);
  }
  std::vector<Finding> At(TimePoint time) { return Feed(time, {}); }
  Detector& detector() { return *detector_; }

 private:
  std::unique_ptr<Detector> detector_;
};

TEST(DriverFault, FirmwareFatalIsCriticalDrainEligibleAndHeld) {
  Harness h;
  auto findings = h.Feed(kT0, {Event("fw_fatal", 1, kT0), Event("health_syndrome", 2, kT0)});
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_TRUE(f.drain_eligible);
  EXPECT_EQ(f.value, 3);
  EXPECT_EQ(f.entity, (EntityLabels{{"device", "mlx5_0"}, {"netdev", "eth0"}}));
  EXPECT_NE(f.reason.find("fw_fatal"), std::string::npos) << f.reason;
  EXPECT_EQ(f.log.size(), 3u);
  // Held for fatal-hold (1h) after the last line, then cleared.
  EXPECT_EQ(h.At(kT0 + minutes(59)).size(), 1u);
  EXPECT_TRUE(h.At(kT0 + minutes(61)).empty());
}

// Issue 38: the slot power notice ("Detected insufficient power on the PCIe slot (27W)") has its
// own warning event; it once shared the fatal "ports powered down" row's name and paged critical.
TEST(DriverFault, SlotPowerNoticeIsAWarningNotADrain) {
  Harness h;
  auto findings = h.Feed(kT0, {Event("pcie_slot_power_low", 1, kT0)});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_FALSE(findings[0].drain_eligible);
  Harness fatal;
  findings = fatal.Feed(kT0, {Event("pcie_insufficient_power", 1, kT0)});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_TRUE(findings[0].drain_eligible);
}

// A transmit timeout the driver recovered from is a warning held for module-hold, never drained.
TEST(DriverFault, DegradedFunctionIsAHeldWarning) {
  Harness h;
  auto findings = h.Feed(kT0, {Event("netdev_watchdog", 1, kT0)});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_FALSE(findings[0].drain_eligible);
  EXPECT_NE(findings[0].reason.find("degraded or recovering: netdev_watchdog"), std::string::npos)
      << findings[0].reason;
  EXPECT_EQ(h.At(kT0 + minutes(9)).size(), 1u);
  EXPECT_TRUE(h.At(kT0 + minutes(11)).empty());
}

// A fault line that named no function on a node with several is raised for the node, its reason
// saying so, with the line as evidence (issue 38 "no silent drop").
TEST(DriverFault, NodeWideFaultSaysItNamesNoDevice) {
  Harness h;
  auto findings = h.Feed(kT0, {Event("health_syndrome", 1, kT0, "", "")});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(findings[0].entity.empty());
  EXPECT_EQ(findings[0].reason.rfind("node (the kernel log line names no device): ", 0), 0u)
      << findings[0].reason;
  EXPECT_EQ(findings[0].log.size(), 1u);
}

TEST(DriverFault, CommandTimeoutsWarnThenEscalateWithoutDrain) {
  Harness h;
  EXPECT_TRUE(h.Feed(kT0, {Event("cmd_timeout", 2, kT0)}).empty());  // 2 < 3
  auto warn = h.Feed(kT0 + minutes(1), {Event("cmd_timeout", 1, kT0 + minutes(1))});
  ASSERT_EQ(warn.size(), 1u);
  EXPECT_EQ(warn[0].severity, Severity::kWarning);
  EXPECT_EQ(warn[0].value, 3);
  // Timeouts keep coming: after 30 min of warning, critical but not drained.
  std::vector<Finding> last;
  for (int m = 2; m <= 32; ++m) {
    last = h.Feed(kT0 + minutes(m), {Event("cmd_timeout", 1, kT0 + minutes(m))});
  }
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].severity, Severity::kCritical);
  EXPECT_FALSE(last[0].drain_eligible);
  // They stop: the window empties and the finding clears.
  EXPECT_TRUE(h.At(kT0 + minutes(32 + 11)).empty());
}

TEST(DriverFault, ModuleErrorIsWarningNamingTheModule) {
  Harness h;
  testing::Families optics;
  optics.Gauge(optics::kInfo,
               {{"netdev", "eth0"},
                {"identifier", "0x18"},
                {"memory_map", "cmis"},
                {"vendor", "NVIDIA"},
                {"part_number", "MMA4Z00-NS"},
                {"serial", "MT2301FT0001"},
                {"revision", "A"},
                {"date_code", "230101"},
                {"connector", "MPO"},
                {"media", "sr4"},
                {"wavelength_nm", "850"}},
               1);
  h.detector().Observe(SnapshotView{"optics", kT0, optics.families()});
  auto findings = h.Feed(kT0, {Event("module_high_temperature", 1, kT0)});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_FALSE(findings[0].drain_eligible);
  EXPECT_NE(findings[0].reason.find("MT2301FT0001"), std::string::npos) << findings[0].reason;
  EXPECT_EQ(h.At(kT0 + minutes(9)).size(), 1u);
  EXPECT_TRUE(h.At(kT0 + minutes(11)).empty());
}

TEST(DriverFault, FloodIsOneFindingWithTheCount) {
  Harness h;
  // Below flood-count (100 in 1m): nothing, however often.
  EXPECT_TRUE(h.Feed(kT0, {Event("access_reg_failed", 99, kT0)}).empty());
  auto flood = h.Feed(kT0 + seconds(1), {Event("access_reg_failed", 10000, kT0 + seconds(1))});
  ASSERT_EQ(flood.size(), 1u);
  EXPECT_EQ(flood[0].severity, Severity::kWarning);
  EXPECT_EQ(flood[0].value, 10099);
  EXPECT_EQ(flood[0].log.size(), kMaxLogLinesPerEvent);
  EXPECT_NE(flood[0].reason.find("flood of access_reg_failed"), std::string::npos);
  // A flood on another device is its own finding; the first clears a window after it stops.
  auto two =
      h.Feed(kT0 + seconds(30), {Event("qp_fatal", 500, kT0 + seconds(30), "mlx5_1", "eth1")});
  EXPECT_EQ(two.size(), 2u);
  EXPECT_EQ(h.At(kT0 + seconds(62)).size(), 1u);
  EXPECT_TRUE(h.At(kT0 + seconds(95)).empty());
}

TEST(DriverFault, OneFindingPerEntityAtTheHighestSeverity) {
  Harness h;
  auto findings = h.Feed(kT0, {Event("module_bad_cable", 1, kT0), Event("fw_fatal", 1, kT0),
                               Event("access_reg_failed", 200, kT0)});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_TRUE(findings[0].drain_eligible);
  EXPECT_NE(findings[0].reason.find("module_bad_cable"), std::string::npos);
  EXPECT_NE(findings[0].reason.find("access_reg_failed"), std::string::npos);
}

TEST(DriverFault, LinkLinesAndInfoAreNeverFindings) {
  Harness h;
  EXPECT_TRUE(h.Feed(kT0, {Event("link_down", 50, kT0), Event("module_unplugged", 1, kT0),
                           Event("health_recovery_ok", 1, kT0),
                           Event("pcie_aer_received", 500, kT0), Event("no_such_event", 1000, kT0)})
                  .empty());
}

TEST(DriverFault, StateSurvivesARestart) {
  Harness h;
  ASSERT_EQ(h.Feed(kT0, {Event("fw_fatal", 1, kT0)}).size(), 1u);
  const nlohmann::json saved = h.detector().SaveState();
  Harness restarted;
  StateLoadCheck check(kT0 + minutes(5));
  ASSERT_TRUE(restarted.detector().LoadState(saved, check).ok());
  auto findings = restarted.At(kT0 + minutes(5));
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_EQ(findings[0].log.size(), 1u);
  // Malformed state is an error, never a crash.
  Harness other;
  StateLoadCheck check2(kT0);
  EXPECT_FALSE(other.detector().LoadState(nlohmann::json{{"version", 2}}, check2).ok());
  EXPECT_FALSE(
      other.detector()
          .LoadState(nlohmann::json{{"version", 1}, {"entities", {{{"device", 1}}}}}, check2)
          .ok());
}

TEST(DriverFault, OptionsAreChecked) {
  EXPECT_FALSE(MakeDriverFaultDetector({{"flood-count", "0"}}));
  EXPECT_FALSE(MakeDriverFaultDetector({{"fatal-hold", "soon"}}));
  EXPECT_FALSE(MakeDriverFaultDetector({{"no-such-key", "1"}}));
  auto off = MakeDriverFaultDetector({{"fatal-drain-eligible", "false"}});
  ASSERT_TRUE(off);
  static const std::vector<prometheus::MetricFamily> kNone;
  std::vector<LogEvent> events{Event("fw_fatal", 1, kT0)};
  (*off)->Observe(SnapshotView{"kmsg", kT0, kNone, events});
  auto findings = (*off)->Evaluate(kT0);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_FALSE(findings[0].drain_eligible);
}

}  // namespace
}  // namespace fabricwatch::detect
