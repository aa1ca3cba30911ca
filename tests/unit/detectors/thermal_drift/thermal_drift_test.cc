// thermal_drift scenarios (docs/detection.md §4.2): projection before the warning threshold, module
// thresholds and fallbacks, slew, high_temp events, and hours of healthy noise with a module
// swap, an unplug/re-plug and counter resets that must raise nothing.

#include "detectors/thermal_drift/thermal_drift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>

#include "collectors/ethtool/ethtool_metrics.h"
#include "detectors/core/state_check.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using testing::AddOptics;
using testing::FindingLog;
using testing::OpticsModule;
using testing::SnapshotBuilder;
using testing::T0;

std::unique_ptr<Detector> Make(const DetectorOptions& options = {}) {
  auto made = MakeThermalDriftDetector(options);
  EXPECT_TRUE(made.has_value()) << (made ? "" : made.error().ToString());
  return std::move(*made);
}

void FeedOptics(FindingLog& log, TimePoint t, const std::vector<OpticsModule>& modules) {
  SnapshotBuilder b;
  for (const auto& m : modules) AddOptics(b, m, t);
  log.Feed("optics", t, b);
}

const Evidence* FindEvidence(const Finding& f, std::string_view name) {
  for (const auto& e : f.evidence) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TEST(ThermalDriftTest, ProjectionWarnsBeforeTheModuleWarningThreshold) {
  auto detector = Make();
  FindingLog log(*detector);
  OpticsModule m;
  m.temp_high_warning = 68;
  m.temp_high_alarm = 73;
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 0.1);
  std::optional<TimePoint> crossed_warning;
  std::optional<TimePoint> crossed_alarm;
  std::string at_crossing;  // the warning's reason at the first sample past 68 °C
  // 0.2 °C/min from 50 °C: 68 °C after 90 min, 73 °C after 115 min; DOM read every 30 s.
  for (int i = 0; i <= 2 * 130; ++i) {
    const TimePoint t = T0() + seconds(30 * i);
    m.temperature = 50 + 0.2 * (30 * i) / 60.0 + noise(rng);
    if (!crossed_warning && m.temperature >= 68) crossed_warning = t;
    if (!crossed_alarm && m.temperature >= 73) crossed_alarm = t;
    FeedOptics(log, t, {m});
    if (crossed_warning == t && log.Active("warning{netdev=eth0}")) {
      at_crossing = log.active().at("warning{netdev=eth0}").reason;
    }
  }
  ASSERT_TRUE(crossed_warning && crossed_alarm);
  const auto warned = log.FirstRaise("warning{netdev=eth0}");
  ASSERT_TRUE(warned.has_value());
  const double lead = std::chrono::duration<double>(*crossed_warning - *warned).count();
  // The projection band opens at 58 °C (50 min before the crossing) with a 1 h horizon and a
  // 1 min hold, so the warning comes well ahead of the threshold.
  EXPECT_GE(lead, 30 * 60.0) << "warned only " << lead << " s before 68 °C";
  std::printf("thermal projection warned %.0f s before the module warning threshold\n", lead);
  const Finding* first = log.LastRaised("warning{netdev=eth0}");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->entity, (EntityLabels{{"netdev", "eth0"}}));
  EXPECT_NE(FindEvidence(*first, "projected_seconds_to_warning"), nullptr);
  EXPECT_LT(first->value, 68.0);
  EXPECT_FALSE(first->drain_eligible);
  // The warning stays up through the crossing (projection hands over to the level latch).
  EXPECT_EQ(log.raises().at("warning{netdev=eth0}"), 1);
  // Right after the crossing, before the level latch takes over, the projection says the module
  // is past the threshold instead of projecting a crossing already made.
  ASSERT_FALSE(at_crossing.empty());
  EXPECT_EQ(at_crossing.find("projected to reach"), std::string::npos) << at_crossing;
  EXPECT_NE(at_crossing.find("now at or above the 68.0 °C warning threshold"), std::string::npos)
      << at_crossing;
  // Critical after ≥ 1 min at or above the module's high alarm.
  const auto critical = log.FirstRaise("critical{netdev=eth0}");
  ASSERT_TRUE(critical.has_value());
  EXPECT_GE(*critical - *crossed_alarm, minutes(1) - seconds(30));
  EXPECT_LE(*critical - *crossed_alarm, minutes(2));
  EXPECT_TRUE(log.active().at("critical{netdev=eth0}").drain_eligible);

  // Cooling to 60 °C: both clear after the 5 min hold-down, not before.
  TimePoint t = T0() + seconds(30 * 260);
  TimePoint cooled{};
  for (int i = 1; i <= 40; ++i) {
    t += seconds(30);
    m.temperature = 60;
    FeedOptics(log, t, {m});
    if (i == 1) cooled = t;
  }
  EXPECT_FALSE(log.Active("critical{netdev=eth0}"));
  EXPECT_FALSE(log.Active("warning{netdev=eth0}"));
  EXPECT_GE(*log.LastClear("critical{netdev=eth0}") - cooled, minutes(5));
}

// Issue 22 item 6: the trends are kept in the state file, so a restart in the middle of a slow
// warming warns when the uninterrupted run warns (not a fresh projection-min-span later).
std::optional<int> ProjectionWarningStep(std::optional<int> restart_at) {
  auto detector = Make();
  auto log = std::make_unique<FindingLog>(*detector);
  OpticsModule m;
  m.temp_high_warning = 68;
  m.temp_high_alarm = 73;
  for (int i = 0; i <= 2 * 90; ++i) {
    const TimePoint t = T0() + seconds(30 * i);
    if (restart_at && i == *restart_at) {
      const auto saved = nlohmann::json::parse(detector->SaveState().dump());
      detector = Make();
      StateLoadCheck check(t);
      EXPECT_TRUE(detector->LoadState(saved, check).ok());
      EXPECT_EQ(check.total_dropped(), 0u);
      log = std::make_unique<FindingLog>(*detector);
    }
    m.temperature = 50 + 0.2 * (30 * i) / 60.0;
    FeedOptics(*log, t, {m});
    if (log->Active("warning{netdev=eth0}")) return i;
  }
  return std::nullopt;
}

TEST(ThermalDriftTest, ARestartKeepsTheTrend) {
  const auto uninterrupted = ProjectionWarningStep(std::nullopt);
  ASSERT_TRUE(uninterrupted.has_value());
  const auto restarted = ProjectionWarningStep(*uninterrupted - 10);  // 5 min before it warns
  ASSERT_TRUE(restarted.has_value());
  EXPECT_NEAR(*restarted, *uninterrupted, 1);
  StateLoadCheck check(T0());
  EXPECT_FALSE(Make()->LoadState({{"version", 7}}, check).ok());
  EXPECT_FALSE(Make()->LoadState({{"version", 1}, {"modules", {{"eth0", 3}}}}, check).ok());
}

TEST(ThermalDriftTest, FallbackThresholdsWhenTheModuleHasNone) {
  auto detector = Make();
  FindingLog log(*detector);
  OpticsModule m;
  m.temp_high_warning.reset();
  m.temp_high_alarm = 0;  // unprogrammed
  m.temperature = 71;
  for (int i = 0; i <= 8; ++i) FeedOptics(log, T0() + seconds(30 * i), {m});
  ASSERT_TRUE(log.Active("warning{netdev=eth0}"));
  EXPECT_EQ(*log.FirstRaise("warning{netdev=eth0}"), T0() + minutes(2));
  EXPECT_FALSE(log.Active("critical{netdev=eth0}"));
  const Finding& f = log.active().at("warning{netdev=eth0}");
  EXPECT_DOUBLE_EQ(f.value, 71);
  EXPECT_NE(f.reason.find("fallback high warning 70.0"), std::string::npos) << f.reason;
}

TEST(ThermalDriftTest, SlewOverTenDegreesInFiveMinutes) {
  auto detector = Make();
  FindingLog log(*detector);
  OpticsModule m;
  for (int i = 0; i < 20; ++i) {
    m.temperature = i < 10 ? 45 : 45 + std::min(12.0, 3.0 * (i - 9));
    FeedOptics(log, T0() + seconds(30 * i), {m});
  }
  ASSERT_TRUE(log.Active("warning{netdev=eth0}"));
  const Finding& f = log.active().at("warning{netdev=eth0}");
  ASSERT_NE(FindEvidence(f, "slew_celsius"), nullptr);
  EXPECT_GT(FindEvidence(f, "slew_celsius")->value, 10);
}

TEST(ThermalDriftTest, HighTempEventIsCriticalAndResetIsNot) {
  auto detector = Make();
  FindingLog log(*detector);
  auto feed = [&](int second, double value) {
    SnapshotBuilder b;
    b.Counter(ethtool::kModuleEvents, {{"netdev", "eth2"}, {"event", "high_temp"}}, value);
    b.Counter(ethtool::kModuleEvents, {{"netdev", "eth2"}, {"event", "unplug"}}, 3);
    log.Feed("ethtool", T0() + seconds(second), b);
  };
  feed(0, 4);
  feed(1, 4);
  EXPECT_TRUE(log.active().empty());
  feed(2, 5);
  ASSERT_TRUE(log.Active("critical{netdev=eth2}"));
  for (int s = 3; s < 400; ++s) feed(s, 5);
  EXPECT_FALSE(log.Active("critical{netdev=eth2}"));  // 5 min without increments
  feed(400, 0);                                       // driver reload: reset to 0 is a delta of 0
  feed(401, 0);
  EXPECT_TRUE(log.active().empty());
  EXPECT_EQ(log.raises().size(), 1u);
}

// Hours of healthy DOM noise: diurnal swing, job-start steps, a module swap to a hotter module,
// an unplug/re-plug, and resets of the module event counters. Nothing may be raised.
TEST(ThermalDriftTest, HealthyHoursRaiseNothing) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 rng(20250101);
  std::normal_distribution<double> noise(0, 0.4);
  OpticsModule a, b;
  b.netdev = "eth1";
  b.serial = "SN-B1";
  const int kSteps = 8 * 3600 / 10;  // 8 h, optics snapshots every 10 s, DOM read every 30 s
  TimePoint read_a{}, read_b{};
  for (int i = 0; i < kSteps; ++i) {
    const TimePoint t = T0() + seconds(10 * i);
    const double hours = i * 10 / 3600.0;
    const double diurnal = 3 * std::sin(hours / 24 * 2 * M_PI * 3);
    const double job =
        std::fmod(hours, 2.0) > 1.0 ? 8 * std::min(1.0, (std::fmod(hours, 2.0) - 1) * 12) : 0;
    if (i % 3 == 0) {
      read_a = t;
      a.temperature = 45 + diurnal + job + noise(rng);
      b.temperature = (hours >= 3 ? 58 : 46) + diurnal + noise(rng);  // swap at 3 h: hotter module
      b.serial = hours >= 3 ? "SN-B2" : "SN-B1";
      read_b = t;
    }
    SnapshotBuilder snap;
    const bool a_unplugged = hours >= 5 && hours < 5.2;
    if (!a_unplugged) AddOptics(snap, a, read_a);
    AddOptics(snap, b, read_b);
    log.Feed("optics", t, snap);
    SnapshotBuilder eth;
    eth.Counter(ethtool::kModuleEvents, {{"netdev", "eth0"}, {"event", "high_temp"}},
                hours < 4 ? 2 : 0);  // driver reload at 4 h resets the counter
    log.Feed("ethtool", t, eth);
  }
  EXPECT_TRUE(log.raises().empty()) << log.raises().begin()->first;
  MetricSink sink;
  detector->Export(sink);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_GT(sink.sample_count(), 0u);
}

TEST(ThermalDriftTest, OptionsAreValidated) {
  EXPECT_TRUE(MakeThermalDriftDetector({{"warning-for", "30s"}, {"slew-celsius", "8"}}));
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"warning-for", "soon"},
                                                        {"slew-celsius", "-1"},
                                                        {"fallback-alarm-celsius", "60"},
                                                        {"projection-min-span", "2h"},
                                                        {"no-such-option", "1"}}) {
    auto made = MakeThermalDriftDetector({{key, value}});
    ASSERT_FALSE(made.has_value()) << key;
    EXPECT_NE(made.error().message().find(key), std::string::npos) << made.error().message();
  }
}

}  // namespace
}  // namespace fabricwatch::detect
