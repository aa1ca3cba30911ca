// pfc_storm scenario timelines: synthetic ethtool snapshots at 1 s on a simulated clock.
#include "detectors/pfc_storm/pfc_storm.h"

#include <gtest/gtest.h>

#include "base/metric_sink.h"
#include "collectors/ethtool/ethtool_metrics.h"
#include "tests/testing/families.h"
#include "tests/testing/test_paths.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
using testing::Families;
const TimePoint kT0 = TimePoint(seconds(1'700'000'000));

// Cumulative counters of eth0 priority 3.
struct Port {
  double rx_pause = 0, tx_pause = 0;  // seconds
  double rx_bytes = 0, tx_bytes = 0;
  double storm_errors = 0, storm_warnings = 0;
};

class PfcStormTest : public ::testing::Test {
 protected:
  void Make(DetectorOptions options = {}) {
    auto made = MakePfcStormDetector(options);
    ASSERT_TRUE(made) << made.error().message();
    detector = std::move(*made);
  }
  void Feed(TimePoint t, const Port& p, bool present = true) {
    Families f;
    if (present) {
      auto l = [](const char* dir) {
        return std::vector<std::pair<std::string, std::string>>{
            {"netdev", "eth0"}, {"priority", "3"}, {"direction", dir}};
      };
      f.Counter(ethtool::kPfcPauseDuration, l("rx"), p.rx_pause)
          .Counter(ethtool::kPfcPauseDuration, l("tx"), p.tx_pause)
          .Counter(ethtool::kPrioBytes, l("rx"), p.rx_bytes)
          .Counter(ethtool::kPrioBytes, l("tx"), p.tx_bytes)
          .Counter(ethtool::kPauseStormEvents, {{"netdev", "eth0"}, {"severity", "warning"}},
                   p.storm_warnings)
          .Counter(ethtool::kPauseStormEvents, {{"netdev", "eth0"}, {"severity", "error"}},
                   p.storm_errors);
    }
    detector->Observe(SnapshotView{"ethtool", t, f.families()});
  }
  // Runs `steps` 1 s samples from `t`, applying `step` to the counters before each; returns the
  // first time a finding with `role` was reported, if any.
  template <typename Step>
  std::optional<TimePoint> Run(TimePoint& t, Port& p, int steps, Step step,
                               std::string_view role = "") {
    std::optional<TimePoint> first;
    for (int i = 0; i < steps; ++i) {
      t += seconds(1);
      step(p);
      Feed(t, p);
      last = detector->Evaluate(t);
      for (const Finding& f : last) {
        for (const auto& [name, value] : f.entity) {
          if (name == "role" && (role.empty() || value == role) && !first) first = t;
        }
      }
    }
    return first;
  }
  static void Healthy(Port& p) {
    p.rx_pause += 0.01;
    p.tx_pause += 0.02;
    p.rx_bytes += 1e9;
    p.tx_bytes += 1e9;
  }
  std::unique_ptr<Detector> detector;
  std::vector<Finding> last;
};

TEST_F(PfcStormTest, source_storm_detected_within_detection_time_plus_one_second) {
  Make();
  TimePoint t = kT0;
  Port p;
  Feed(t, p);
  EXPECT_FALSE(Run(t, p, 30, Healthy));
  const TimePoint storm_start = t;
  auto raised = Run(t, p, 10, [](Port& p) { p.tx_pause += 1.0; }, "source");
  ASSERT_TRUE(raised);
  EXPECT_LE(*raised - storm_start, seconds(3) + seconds(1));
  EXPECT_GE(*raised - storm_start, seconds(3)) << "not before the detection time";
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].severity, Severity::kCritical);
  EXPECT_TRUE(last[0].drain_eligible);
  EXPECT_EQ(last[0].entity,
            (EntityLabels{{"netdev", "eth0"}, {"priority", "3"}, {"role", "source"}}));
  EXPECT_DOUBLE_EQ(last[0].value, 1.0);

  MetricSink sink;
  detector->Export(sink);
  const std::string text = testing::Exposition(sink.TakeFamilies());
  EXPECT_NE(text.find("fabric_pfc_pause_ratio{netdev=\"eth0\",priority=\"3\",direction=\"tx\"} 1"),
            std::string::npos)
      << text;

  // Recovery: healthy samples for restoration-time (10 s) clear it, not sooner.
  Run(t, p, 9, Healthy);
  EXPECT_EQ(last.size(), 1u) << "still active after 9 s of healthy samples";
  Run(t, p, 1, Healthy);
  EXPECT_TRUE(last.empty());
}

TEST_F(PfcStormTest, victim_is_a_warning_and_never_drain_eligible) {
  Make();
  TimePoint t = kT0;
  Port p;
  Feed(t, p);
  Run(t, p, 5, Healthy);
  const TimePoint start = t;
  auto raised = Run(t, p, 6, [](Port& p) { p.rx_pause += 0.995; p.rx_bytes += 1e6; }, "victim");
  ASSERT_TRUE(raised);
  EXPECT_LE(*raised - start, seconds(4));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].severity, Severity::kWarning);
  EXPECT_FALSE(last[0].drain_eligible);
}

TEST_F(PfcStormTest, heavy_congestion_with_progress_is_not_a_storm) {
  Make();
  TimePoint t = kT0;
  Port p;
  Feed(t, p);
  EXPECT_FALSE(Run(t, p, 120, [](Port& p) {
    p.tx_pause += 0.999;
    p.rx_pause += 0.999;
    p.rx_bytes += 1e5;  // slow, but flowing
    p.tx_bytes += 1e5;
  }));
}

TEST_F(PfcStormTest, counter_reset_and_unplug_replug_are_silent) {
  Make();
  TimePoint t = kT0;
  Port p{5000, 9000, 1e12, 1e12};
  Feed(t, p);
  Run(t, p, 10, Healthy);
  p = Port{0.5, 0.3, 1e3, 1e3};  // driver reload: every counter restarts
  EXPECT_FALSE(Run(t, p, 10, Healthy));
  for (int i = 0; i < 20; ++i) {  // hot-unplug: the series vanish
    t += seconds(1);
    Feed(t, p, /*present=*/false);
    EXPECT_TRUE(detector->Evaluate(t).empty());
  }
  p = Port{};  // re-plugged, fresh counters
  Feed(t += seconds(1), p);
  EXPECT_FALSE(Run(t, p, 10, Healthy));
}

TEST_F(PfcStormTest, nic_storm_prevention_events) {
  Make({{"event-hold", "5s"}});
  TimePoint t = kT0;
  Port p;
  Feed(t, p);
  Run(t, p, 3, Healthy);
  Run(t, p, 1, [](Port& p) { Healthy(p), p.storm_errors += 1; });
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].severity, Severity::kCritical);
  EXPECT_EQ(last[0].entity, (EntityLabels{{"netdev", "eth0"}, {"role", "source"}}));
  Run(t, p, 5, Healthy);
  EXPECT_TRUE(last.empty()) << "held for event-hold, then cleared";
}

TEST_F(PfcStormTest, restart_mid_storm_keeps_it_active) {
  Make();
  TimePoint t = kT0;
  Port p;
  Feed(t, p);
  ASSERT_TRUE(Run(t, p, 5, [](Port& p) { p.tx_pause += 1.0; }, "source"));
  const nlohmann::json saved = detector->SaveState();
  Make();
  StateLoadCheck check(t + seconds(1));
  ASSERT_TRUE(detector->LoadState(saved, check).ok());
  EXPECT_EQ(check.total_dropped(), 0u);
  Feed(t += seconds(1), p);  // first sample after the restart: a new baseline
  EXPECT_EQ(detector->Evaluate(t).size(), 1u);
  Run(t, p, 3, [](Port& p) { p.tx_pause += 1.0; });
  EXPECT_EQ(last.size(), 1u);
  EXPECT_FALSE(detector->LoadState(nlohmann::json::parse(R"({"storms":[{}]})"), check).ok());
}

TEST_F(PfcStormTest, options_are_validated) {
  EXPECT_FALSE(MakePfcStormDetector({{"clear-ratio", "0.995"}}));
  EXPECT_FALSE(MakePfcStormDetector({{"storm-ratio", "2"}}));
}

}  // namespace
}  // namespace fabricwatch::detect
