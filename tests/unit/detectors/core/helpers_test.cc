// detectors/core helpers: CounterTracker (counter.h contract), HoldDown point observations,
// LinearTrend, snapshot lookup and finding merge (OptionReader: core_test.cc).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "detectors/core/counter.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/linear_trend.h"
#include "detectors/core/snapshot_lookup.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
using testing::T0;

struct CounterCase {
  const char* name;
  CounterSpec spec;
  uint64_t previous;
  uint64_t current;
  double dt;
  bool valid;
  uint64_t delta;
  bool reset;
  bool wrapped;
  bool saturated;
};

class CounterStepTest : public ::testing::TestWithParam<CounterCase> {};

TEST_P(CounterStepTest, SecondSampleGivesTheExpectedStep) {
  const CounterCase& c = GetParam();
  CounterTracker tracker(c.spec);
  CounterStep first = tracker.Update(c.previous, T0());
  EXPECT_FALSE(first.valid);
  CounterStep step = tracker.Update(
      c.current, T0() + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                            std::chrono::duration<double>(c.dt)));
  EXPECT_EQ(step.valid, c.valid);
  EXPECT_EQ(step.delta, c.delta);
  EXPECT_EQ(step.reset, c.reset);
  EXPECT_EQ(step.wrapped, c.wrapped);
  EXPECT_EQ(step.saturated, c.saturated);
  if (c.valid) {
    EXPECT_DOUBLE_EQ(step.seconds, c.dt);
    EXPECT_DOUBLE_EQ(step.rate(), static_cast<double>(c.delta) / c.dt);
  }
}

constexpr CounterSpec k64{};
constexpr CounterSpec k32{CounterBehaviour::kWrapping32, 32, 1e6};
constexpr CounterSpec kSat16{CounterBehaviour::kSaturating, 16, 1e15};
constexpr CounterSpec kSat4{CounterBehaviour::kSaturating, 4, 1e15};

INSTANTIATE_TEST_SUITE_P(
    Table, CounterStepTest,
    ::testing::Values(
        CounterCase{"increase", k64, 100, 150, 1, true, 50, false, false, false},
        CounterCase{"measured_dt", k64, 100, 400, 2.5, true, 300, false, false, false},
        CounterCase{"reset64", k64, 1000, 7, 1, true, 7, true, false, false},
        CounterCase{"wrap32", k32, 0xFFFFFF00u, 0x10, 1, true, 0x110, false, true, false},
        // A drop that would imply 4e9/s on a counter capped at 1e6/s is a reset, not a wrap.
        CounterCase{"implausible_wrap_is_reset", k32, 0x10, 0x5, 1, true, 5, true, false, false},
        CounterCase{"wrap32_value_above_width_is_reset", k32, 0x1FFFFFFFFull, 3, 1, true, 3, true,
                    false, false},
        CounterCase{"saturated16", kSat16, 65000, 65535, 1, false, 0, false, false, true},
        CounterCase{"pma_reset_after_saturation", kSat16, 65535, 2, 1, true, 2, true, false, false},
        CounterCase{"saturating4_increase", kSat4, 3, 5, 1, true, 2, false, false, false},
        CounterCase{"saturated4", kSat4, 14, 15, 1, false, 0, false, false, true}),
    [](const ::testing::TestParamInfo<CounterCase>& info) { return info.param.name; });

TEST(CounterTrackerTest, ForgetAndStaleTimeGiveNoDelta) {
  CounterTracker tracker;
  tracker.Update(10, T0());
  EXPECT_FALSE(tracker.Update(20, T0()).valid);  // same time: re-delivered
  CounterStep step = tracker.Update(20, T0() + seconds(1));
  EXPECT_TRUE(step.valid);
  EXPECT_EQ(step.delta, 10u);  // measured against the first sample, Δt 1 s
  tracker.Forget();
  EXPECT_FALSE(tracker.Update(5, T0() + seconds(2)).valid);  // gap: no delta
  EXPECT_EQ(tracker.Update(8, T0() + seconds(3)).delta, 3u);
}

TEST(CounterTrackerTest, SaturatedFirstSampleIsFlagged) {
  CounterTracker tracker(kSat16);
  CounterStep step = tracker.Update(65535, T0());
  EXPECT_FALSE(step.valid);
  EXPECT_TRUE(step.saturated);
  step = tracker.Update(65535, T0() + seconds(1));
  EXPECT_FALSE(step.valid);
  EXPECT_TRUE(step.saturated);
}

// Point observations (gauge reads): the streak starts at the first sample that satisfies it.
TEST(HoldDownTest, PointObservationsRaiseAfterHoldAndClearAfterHoldDown) {
  HoldDown latch(seconds(3), seconds(5));
  EXPECT_FALSE(latch.Update(true, false, T0()));
  EXPECT_FALSE(latch.Update(true, false, T0() + seconds(2)));
  EXPECT_FALSE(latch.Update(false, false, T0() + seconds(3)));  // interrupted: starts over
  EXPECT_FALSE(latch.Update(true, false, T0() + seconds(4)));
  EXPECT_TRUE(latch.Update(true, false, T0() + seconds(7)));
  // Between the thresholds (neither condition): stays active.
  EXPECT_TRUE(latch.Update(false, false, T0() + seconds(20)));
  EXPECT_TRUE(latch.Update(false, true, T0() + seconds(21)));
  EXPECT_TRUE(latch.Update(false, true, T0() + seconds(25)));
  EXPECT_FALSE(latch.Update(false, true, T0() + seconds(26)));
}

TEST(LinearTrendTest, FitsSlopeAndTimeToThreshold) {
  LinearTrend trend(std::chrono::minutes(30), seconds(30));
  for (int i = 0; i <= 40; ++i) trend.Add(T0() + seconds(30 * i), 50.0 + 0.01 * 30 * i);
  auto fit = trend.Evaluate(10, std::chrono::minutes(10));
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->slope_per_second, 0.01, 1e-9);
  EXPECT_NEAR(fit->value_now, 62.0, 1e-6);
  EXPECT_NEAR(*fit->SecondsToReach(70.0), 800.0, 1e-3);
  EXPECT_FALSE(fit->SecondsToReach(60.0).has_value());  // already past
  EXPECT_LE(fit->span_seconds, 30 * 60.0);              // the lookback window is enforced
}

TEST(LinearTrendTest, NeedsEnoughHistory) {
  LinearTrend trend(std::chrono::minutes(30), seconds(30));
  for (int i = 0; i < 5; ++i) trend.Add(T0() + seconds(30 * i), 1.0);
  EXPECT_FALSE(trend.Evaluate(10, seconds(60)).has_value());
  EXPECT_FALSE(trend.Evaluate(2, std::chrono::minutes(10)).has_value());
  auto fit = trend.Evaluate(2, seconds(60));
  ASSERT_TRUE(fit.has_value());
  EXPECT_DOUBLE_EQ(fit->slope_per_second, 0.0);
}

// Families of the lookup tests: at namespace scope, as a checked read takes the family as a
// template argument (collectors/core/family_label.h).
constexpr MetricDesc kX{"fabric_x_total", "x", MetricKind::kCounter, {"netdev"}};
constexpr MetricDesc kY{"fabric_y", "y", MetricKind::kGauge, {"netdev", "lane"}};
constexpr MetricDesc kZ{"fabric_z", "z", MetricKind::kGauge, {}};

TEST(SnapshotLookupTest, FindsByFamilyAndLabels) {
  testing::SnapshotBuilder b;
  b.Counter(kX, {{"netdev", "eth0"}}, 5)
      .Counter(kX, {{"netdev", "eth1"}}, 7)
      .Gauge(kY, {{"netdev", "eth1"}, {"lane", "2"}}, 0.5);
  EXPECT_EQ(FindValue<kX>(b.families(), {{"netdev", "eth1"}}), 7.0);
  EXPECT_EQ(FindValue<kY>(b.families(), {{"lane", "2"}}), 0.5);
  EXPECT_FALSE(FindValue<kY>(b.families(), {{"lane", "3"}}).has_value());
  EXPECT_FALSE(FindValue<kZ>(b.families(), {}).has_value());
  // A builder refuses a family built with another kind than its descriptor's.
  EXPECT_THROW(b.Gauge(kX, {{"netdev", "eth2"}}, 1), std::logic_error);
  double sum = 0;
  ForEachSample(b.families(), kX, [&](const prometheus::ClientMetric& m, double v) {
    EXPECT_TRUE(Label<kX>(m, "netdev").starts_with("eth"));
    EXPECT_TRUE(LabelsMatch<kX>(m, {{"netdev", Label<kX>(m, "netdev")}}));
    EXPECT_FALSE(LabelsMatch<kX>(m, {{"netdev", "eth9"}}));
    sum += v;
  });
  EXPECT_EQ(sum, 12.0);
}

// A sample whose labels are not in the descriptor's order (a hand-made family) is read by name;
// a label the sample lacks reads "", as a label that does not apply does.
TEST(SnapshotLookupTest, ReadsLabelsOutOfOrderAndMissingOnesAsEmpty) {
  prometheus::ClientMetric sample;
  sample.label = {{"lane", "3"}, {"netdev", "eth0"}};
  EXPECT_EQ(Label<kY>(sample, "netdev"), "eth0");
  EXPECT_EQ(Label<kY>(sample, "lane"), "3");
  sample.label = {{"netdev", "eth0"}};
  EXPECT_EQ(Label<kY>(sample, "lane"), "");
  EXPECT_TRUE(LabelsMatch<kY>(sample, {{"netdev", "eth0"}, {"lane", ""}}));
  // The label's place in the descriptor is known when the read compiles.
  static_assert(LabelOf<kY>("lane").index() == 1);
}

// FamilyTag carries a family into code that treats several alike and still reads them checked.
TEST(SnapshotLookupTest, AFamilyTagReadsEachFamilyByItsOwnDescriptor) {
  testing::SnapshotBuilder b;
  b.Counter(kX, {{"netdev", "eth0"}}, 5).Gauge(kY, {{"netdev", "eth1"}, {"lane", "2"}}, 0.5);
  std::vector<std::string> netdevs;
  auto netdevs_of = [&](auto family) {
    using Tag = decltype(family);
    ForEachSample(b.families(), Tag::desc, [&](const prometheus::ClientMetric& m, double) {
      netdevs.emplace_back(Label<Tag::desc>(m, "netdev"));
    });
  };
  netdevs_of(FamilyTag<kX>{});
  netdevs_of(FamilyTag<kY>{});
  EXPECT_EQ(netdevs, (std::vector<std::string>{"eth0", "eth1"}));
  static_assert(&FamilyTag<kY>::desc == &kY);
}

TEST(FindingMergeTest, OneFindingPerSeverityAndEntity) {
  const EntityLabels eth0{{"netdev", "eth0"}};
  std::vector<Finding> merged = MergeFindings({
      {Severity::kWarning, eth0, 71, {{"temperature_celsius", 71}}, "level", false},
      {Severity::kCritical, eth0, 76, {{"temperature_celsius", 76}}, "alarm", true},
      {Severity::kWarning,
       eth0,
       12,
       {{"temperature_celsius", 71}, {"slew_celsius", 12}},
       "slew",
       false},
      {Severity::kWarning, {{"netdev", "eth1"}}, 1, {}, "other", false},
  });
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].reason, "level; slew");
  EXPECT_EQ(merged[0].value, 71);
  ASSERT_EQ(merged[0].evidence.size(), 2u);
  EXPECT_EQ(merged[0].evidence[1].name, "slew_celsius");
  EXPECT_EQ(merged[1].severity, Severity::kCritical);
  EXPECT_TRUE(merged[1].drain_eligible);
}

}  // namespace
}  // namespace fabricwatch::detect
