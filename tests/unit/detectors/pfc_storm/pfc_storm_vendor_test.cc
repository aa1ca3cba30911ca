// pfc_storm on a NIC other than mlx5: the raw `ethtool -S` names of an AMD Pensando (ionic)
// port go through the collector's own name table (NormalizeStat) into the families the detector
// reads, in the driver's units (pause time in 1 us counts), so the test fails if either the
// mapping or the detector loses the vendor. ionic's frames_rx_pri_<N> (frames of the priority)
// is the receive progress that tells a storm from heavy but moving congestion.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collectors/ethtool/ethtool_names.h"
#include "detectors/pfc_storm/pfc_storm.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
using testing::Families;
const TimePoint kT0 = TimePoint(seconds(1'700'000'000));

// Cumulative raw statistics of one ionic netdev, by driver name.
using RawStats = std::map<std::string, double>;

class PfcStormIonicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = MakePfcStormDetector({});
    ASSERT_TRUE(made) << made.error().message();
    detector = std::move(*made);
  }
  // One ethtool snapshot of `netdev` from raw driver names, normalised as the collector does.
  void Feed(TimePoint t, const RawStats& raw) {
    Families f;
    for (const auto& [name, value] : raw) {
      auto stat = ethtool::NormalizeStat(name);
      ASSERT_TRUE(stat.has_value()) << name << " is not mapped";
      testing::SampleLabels labels = {{"netdev", netdev}};
      for (size_t i = 0; i < stat->n_extra; ++i) {
        labels.emplace_back(std::string(stat->extra[i].first), std::string(stat->extra[i].second));
      }
      f.Counter(*stat->desc, labels, value * stat->scale);
    }
    detector->Observe(SnapshotView{"ethtool", t, f.families()});
  }
  // `steps` samples at 1 s; returns the first time a finding of `role` was reported.
  template <typename Step>
  std::optional<TimePoint> Run(TimePoint& t, RawStats& raw, int steps, Step step,
                               std::string_view role) {
    std::optional<TimePoint> first;
    for (int i = 0; i < steps; ++i) {
      t += seconds(1);
      step(raw);
      Feed(t, raw);
      last = detector->Evaluate(t);
      for (const Finding& f : last) {
        for (const auto& [name, value] : f.entity) {
          if (name == "role" && value == role && !first) first = t;
        }
      }
    }
    return first;
  }
  static void Healthy(RawStats& raw) {
    raw["tx_pripause_3_1us_count"] += 20'000;  // 2 % of the second
    raw["rx_pripause_3_1us_count"] += 10'000;
    raw["frames_rx_pri_3"] += 800'000;
    raw["frames_tx_pri_3"] += 800'000;
  }
  const std::string netdev = "enp9s0";
  std::unique_ptr<Detector> detector;
  std::vector<Finding> last;
};

TEST_F(PfcStormIonicTest, source_storm_on_ionic_counters_is_critical_and_clears) {
  TimePoint t = kT0;
  RawStats raw = {{"tx_pripause_3_1us_count", 0},
                  {"rx_pripause_3_1us_count", 0},
                  {"frames_rx_pri_3", 0},
                  {"frames_tx_pri_3", 0}};
  Feed(t, raw);
  EXPECT_FALSE(Run(t, raw, 30, Healthy, "source"));
  // The port sends pause the whole second and receives nothing on priority 3.
  const TimePoint storm_start = t;
  auto raised = Run(
      t, raw, 10, [](RawStats& r) { r["tx_pripause_3_1us_count"] += 1'000'000; }, "source");
  ASSERT_TRUE(raised);
  EXPECT_GE(*raised - storm_start, seconds(3)) << "not before the detection time";
  EXPECT_LE(*raised - storm_start, seconds(4));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].severity, Severity::kCritical);
  EXPECT_TRUE(last[0].drain_eligible);
  EXPECT_EQ(last[0].entity,
            (EntityLabels{{"netdev", "enp9s0"}, {"priority", "3"}, {"role", "source"}}));
  EXPECT_DOUBLE_EQ(last[0].value, 1.0);
  Run(t, raw, 10, Healthy, "source");
  EXPECT_TRUE(last.empty());
}

TEST_F(PfcStormIonicTest, paused_but_moving_is_not_a_storm) {
  TimePoint t = kT0;
  RawStats raw = {{"tx_pripause_3_1us_count", 0},
                  {"rx_pripause_3_1us_count", 0},
                  {"frames_rx_pri_3", 0},
                  {"frames_tx_pri_3", 0}};
  Feed(t, raw);
  // 95 % paused in both directions, but frames keep arriving and leaving on the priority.
  auto raised = Run(
      t, raw, 30,
      [](RawStats& r) {
        r["tx_pripause_3_1us_count"] += 950'000;
        r["rx_pripause_3_1us_count"] += 950'000;
        r["frames_rx_pri_3"] += 40'000;
        r["frames_tx_pri_3"] += 40'000;
      },
      "source");
  EXPECT_FALSE(raised);
  EXPECT_TRUE(last.empty());
}

}  // namespace
}  // namespace fabricwatch::detect
