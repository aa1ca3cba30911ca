// optical_drift scenarios: rx power drift against the module's baseline, bias creep at the same
// temperature, the module's own thresholds, baselines surviving a restart (SaveState/LoadState),
// and healthy hours with a module swap, an unplug/re-plug and a dark lane.

#include "detectors/optical_drift/optical_drift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/unit/detectors/scenario.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::AddOptics;
using testing::FindingLog;
using testing::OpticsModule;
using testing::SnapshotBuilder;
using testing::T0;

double FromDbm(double dbm) { return std::pow(10, dbm / 10) / 1000; }

std::unique_ptr<Detector> Make(const DetectorOptions& options = {}) {
  auto made = MakeOpticalDriftDetector(options);
  EXPECT_TRUE(made.has_value()) << (made ? "" : made.error().ToString());
  return std::move(*made);
}

OpticsModule Healthy(std::mt19937& rng, double temperature = 45) {
  std::normal_distribution<double> db(0, 0.1);
  std::normal_distribution<double> ma(0, 0.05);
  OpticsModule m;
  m.temperature = temperature;
  m.rx_low_warning = FromDbm(-10.3);  // the [S30] example module
  m.rx_low_alarm = FromDbm(-13.3);
  m.bias_high_warning = 8.5e-3;
  m.bias_high_alarm = 10e-3;
  for (int lane = 0; lane < 4; ++lane) {
    m.rx_power_watts.push_back(FromDbm(-2.0 - 0.3 * lane + db(rng)));
    m.tx_bias_amperes.push_back((6.0 + ma(rng)) * 1e-3);
  }
  return m;
}

void Feed(FindingLog& log, TimePoint t, const std::vector<OpticsModule>& modules) {
  SnapshotBuilder b;
  for (const auto& m : modules) AddOptics(b, m, t);
  log.Feed("optics", t, b);
}

TEST(OpticalDriftTest, RxPowerDriftPerLaneWarnsThenCritical) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 rng(1);
  std::optional<TimePoint> crossed_2db, crossed_3db;
  for (int i = 0; i < 6 * 120; ++i) {  // 6 h at 30 s
    const TimePoint t = T0() + seconds(30 * i);
    OpticsModule m = Healthy(rng);
    // From 2 h on, lane 3 loses 0.5 dB per 10 min (a connector getting dirty), down to -4 dB.
    const double minutes_in = (i - 240) * 0.5;
    const double loss = i < 240 ? 0 : std::min(4.0, 0.05 * minutes_in);
    m.rx_power_watts[2] *= std::pow(10, -loss / 10);
    if (!crossed_2db && loss >= 2.2) crossed_2db = t;  // past the noise
    if (!crossed_3db && loss >= 3.2) crossed_3db = t;
    Feed(log, t, {m});
  }
  const auto warned = log.FirstRaise("warning{netdev=eth0,lane=3}");
  const auto critical = log.FirstRaise("critical{netdev=eth0,lane=3}");
  ASSERT_TRUE(warned && critical);
  EXPECT_GE(*warned - *crossed_2db, minutes(25));  // rx_drift_for 30m (minus the noise margin)
  EXPECT_LE(*warned - *crossed_2db, minutes(35));
  EXPECT_GE(*critical - *crossed_3db, minutes(25));
  EXPECT_LE(*critical - *crossed_3db, minutes(35));
  const Finding& f = log.active().at("critical{netdev=eth0,lane=3}");
  EXPECT_EQ(f.entity, (EntityLabels{{"netdev", "eth0"}, {"lane", "3"}}));
  EXPECT_NEAR(f.value, 4.0, 0.5);  // dB below baseline
  EXPECT_FALSE(f.drain_eligible);
  EXPECT_EQ(log.raises().size(), 2u);  // only lane 3, warning then critical
}

TEST(OpticalDriftTest, BiasCreepAtTheSameTemperatureNotAcrossTemperatures) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 rng(2);
  for (int i = 0; i < 4 * 120; ++i) {  // 4 h
    const TimePoint t = T0() + seconds(30 * i);
    // 0–1 h at 45 °C; 1–2 h at 61 °C with +25 % bias (temperature, not aging: another bin);
    // 2–4 h back at 45 °C with lane 2 +25 % (aging).
    const bool hot = i >= 120 && i < 240;
    OpticsModule m = Healthy(rng, hot ? 61 : 45);
    if (hot) {
      for (double& bias : m.tx_bias_amperes) bias *= 1.25;
    } else if (i >= 240) {
      m.tx_bias_amperes[1] *= 1.25;
    }
    Feed(log, t, {m});
  }
  EXPECT_EQ(log.raises().size(), 1u);
  const auto warned = log.FirstRaise("warning{netdev=eth0,lane=2}");
  ASSERT_TRUE(warned.has_value());
  EXPECT_EQ(*warned, T0() + hours(2) + minutes(30));
  EXPECT_NEAR(log.active().at("warning{netdev=eth0,lane=2}").value, 1.25, 0.03);
}

TEST(OpticalDriftTest, ModuleThresholds) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 rng(3);
  for (int i = 0; i <= 4; ++i) {
    OpticsModule m = Healthy(rng);
    m.rx_power_watts[0] = FromDbm(-14);  // below the low alarm
    m.tx_bias_amperes[3] = 9e-3;         // above the high warning
    Feed(log, T0() + seconds(30 * i), {m});
  }
  EXPECT_EQ(*log.FirstRaise("critical{netdev=eth0,lane=1}"), T0() + minutes(1));
  EXPECT_TRUE(log.active().at("critical{netdev=eth0,lane=1}").drain_eligible);
  EXPECT_FALSE(log.Active("warning{netdev=eth0,lane=4}"));  // 5 min not yet
  for (int i = 5; i <= 12; ++i) {
    OpticsModule m = Healthy(rng);
    m.rx_power_watts[0] = FromDbm(-14);
    m.tx_bias_amperes[3] = 9e-3;
    Feed(log, T0() + seconds(30 * i), {m});
  }
  EXPECT_EQ(*log.FirstRaise("warning{netdev=eth0,lane=4}"), T0() + minutes(5));
  EXPECT_TRUE(log.Active("warning{netdev=eth0,lane=1}"));  // below the low warning too
}

// Restart mid-scenario: the baseline learned before the restart must judge a drop that happens
// while the agent was down. A fresh detector (no state) would take the dropped level as normal.
TEST(OpticalDriftTest, BaselinesSurviveRestart) {
  std::mt19937 rng(4);
  auto before = Make();
  FindingLog log_before(*before);
  int i = 0;
  for (; i < 2 * 120; ++i) Feed(log_before, T0() + seconds(30 * i), {Healthy(rng)});
  EXPECT_TRUE(log_before.raises().empty());
  // The state file is JSON text on disk.
  const std::string saved = before->SaveState().dump();
  ASSERT_NE(saved.find("SN0001"), std::string::npos);

  auto after = Make();
  StateLoadCheck check(T0() + seconds(30 * i));
  ASSERT_TRUE(after->LoadState(nlohmann::json::parse(saved), check).ok());
  EXPECT_EQ(check.total_dropped(), 0u);
  EXPECT_EQ(after->SaveState(), nlohmann::json::parse(saved));  // lossless round trip
  auto fresh = Make();
  FindingLog log_after(*after);
  FindingLog log_fresh(*fresh);
  for (i += 20; i < 4 * 120; ++i) {  // 10 min down; the lane lost 2.5 dB meanwhile
    OpticsModule m = Healthy(rng);
    m.rx_power_watts[0] *= std::pow(10, -2.5 / 10);
    Feed(log_after, T0() + seconds(30 * i), {m});
    Feed(log_fresh, T0() + seconds(30 * i), {m});
  }
  EXPECT_TRUE(log_after.Active("warning{netdev=eth0,lane=1}"));
  EXPECT_TRUE(log_fresh.raises().empty());
}

TEST(OpticalDriftTest, LoadStateRejectsMalformedState) {
  auto detector = Make();
  StateLoadCheck check(T0());
  EXPECT_TRUE(detector->LoadState(nlohmann::json::object(), check).ok());
  for (const char* text : {R"([1,2])", R"({"version": 99, "modules": {}})", R"({"version": 1})",
                           R"({"version": 1, "modules": {"SN": {"netdev": "eth0"}}})",
                           R"({"version": 1, "modules": {"SN": {"netdev": "eth0", "last_seen": 1,
                               "lanes": {"1": {"rx_dbm": {"mean": "x"}}}}}})"}) {
    Status status = detector->LoadState(nlohmann::json::parse(text), check);
    EXPECT_FALSE(status.ok()) << text;
    EXPECT_NE(status.message().find("optical_drift"), std::string::npos);
  }
}

TEST(OpticalDriftTest, HealthyHoursWithSwapUnplugAndDarkLaneRaiseNothing) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 rng(5);
  for (int i = 0; i < 8 * 360; ++i) {  // 8 h, optics snapshots every 10 s, DOM every 30 s
    const TimePoint t = T0() + seconds(10 * i);
    const TimePoint read = T0() + seconds(30 * (i / 3));
    const double h = i / 360.0;
    OpticsModule a = Healthy(rng, 45 + 3 * std::sin(h));
    OpticsModule b = Healthy(rng, 50);
    b.netdev = "eth1";
    b.serial = "SN-B1";
    if (h >= 3) {  // swapped for a module 4 dB weaker with higher bias: new baseline
      b.serial = "SN-B2";
      for (double& w : b.rx_power_watts) w *= std::pow(10, -0.4);
      for (double& a_bias : b.tx_bias_amperes) a_bias *= 1.35;
    }
    if (h >= 6 && h < 6.5) b.rx_power_watts[3] = 0;  // peer port down: dark lane
    SnapshotBuilder snap;
    if (!(h >= 5 && h < 5.25)) AddOptics(snap, a, read);  // eth0 unplugged 15 min, re-plugged
    AddOptics(snap, b, read);
    log.Feed("optics", t, snap);
  }
  EXPECT_TRUE(log.raises().empty()) << log.raises().begin()->first;
  MetricSink sink;
  detector->Export(sink);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_EQ(sink.sample_count(), 2u * 4u * 3u);  // baseline, rx ratio, bias ratio per lane
  // Both serials are in the state (the swapped-out one until baseline_retention).
  const nlohmann::json state = detector->SaveState();
  EXPECT_TRUE(state["modules"].contains("SN-B1"));
  EXPECT_TRUE(state["modules"].contains("SN-B2"));
}

TEST(OpticalDriftTest, OptionsAreValidated) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"rx-drift-for", "later"},
                                                        {"rx-drift-clear-db", "2.5"},
                                                        {"bias-warning-ratio", "0.5"},
                                                        {"bias-bin-celsius", "0"},
                                                        {"rxdrift", "1"}}) {
    auto made = MakeOpticalDriftDetector({{key, value}});
    ASSERT_FALSE(made.has_value()) << key;
    EXPECT_NE(made.error().message().find(key), std::string::npos) << made.error().message();
  }
}

// Baselines of a module last seen in the future (a clock stepped back, a copied state file) are
// dropped and counted, not restored (detectors/core/state_check.h).
TEST(OpticalDriftTest, StateFromTheFutureIsDropped) {
  const std::string text = R"({"version": 1, "modules": {
      "SN1": {"netdev": "eth0", "last_seen": 2000000000, "lanes": {}},
      "SN2": {"netdev": "eth1", "last_seen": 100, "lanes": {"1": {"rx_dbm":
          {"mean": -3.0, "samples": 5, "first": 100, "last": 2000000000}}}}}})";
  auto detector = Make();
  StateLoadCheck check(TimePoint(std::chrono::seconds(1'000'000'000)));
  ASSERT_TRUE(detector->LoadState(nlohmann::json::parse(text), check).ok());
  EXPECT_EQ(check.dropped().at("future_timestamp"), 2u) << "SN1 whole, SN2's rx baseline";
  const nlohmann::json kept = detector->SaveState()["modules"];
  EXPECT_FALSE(kept.contains("SN1"));
  ASSERT_TRUE(kept.contains("SN2"));
  EXPECT_FALSE(kept["SN2"]["lanes"]["1"].contains("rx_dbm"));
}

}  // namespace
}  // namespace fabricwatch::detect
