#include "detectors/core/counter.h"

#include <gtest/gtest.h>

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
const auto kT0 = std::chrono::system_clock::time_point(seconds(1'700'000'000));

struct Case {
  const char* name;
  CounterSpec spec;
  uint64_t previous;
  uint64_t current;
  bool valid;
  uint64_t delta;
  bool reset, wrapped, saturated;
};

class CounterTableTest : public ::testing::TestWithParam<Case> {};

TEST_P(CounterTableTest, step) {
  const Case& c = GetParam();
  CounterTracker tracker(c.spec);
  CounterStep first = tracker.Update(c.previous, kT0);
  EXPECT_FALSE(first.valid) << "first sample gives no delta";
  CounterStep step = tracker.Update(c.current, kT0 + seconds(2));
  EXPECT_EQ(step.valid, c.valid);
  if (c.valid) {
    EXPECT_EQ(step.delta, c.delta);
    EXPECT_DOUBLE_EQ(step.seconds, 2.0);
    EXPECT_DOUBLE_EQ(step.rate(), static_cast<double>(c.delta) / 2);
  }
  EXPECT_EQ(step.reset, c.reset);
  EXPECT_EQ(step.wrapped, c.wrapped);
  EXPECT_EQ(step.saturated, c.saturated);
}

constexpr CounterSpec kMono{CounterBehaviour::kMonotonic64, 64, 1e15};
constexpr CounterSpec kWrap32{CounterBehaviour::kWrapping32, 32, 1e6};
constexpr CounterSpec kSat8{CounterBehaviour::kSaturating, 8, 1e15};
constexpr CounterSpec kSat16{CounterBehaviour::kSaturating, 16, 1e15};

INSTANTIATE_TEST_SUITE_P(
    Counters, CounterTableTest,
    ::testing::Values(
        Case{"increase", kMono, 100, 150, true, 50, false, false, false},
        Case{"unchanged", kMono, 100, 100, true, 0, false, false, false},
        // Driver reload: current is the delta since the reset (NVSentinel rule, §0.2).
        Case{"reset64", kMono, 1'000'000, 7, true, 7, true, false, false},
        // 2^32 - 10 -> 5: 15 in 2 s is plausible, a wrap.
        Case{"wrap32_plausible", kWrap32, 4294967286ULL, 5, true, 15, false, true, false},
        // 1000 -> 5 implies ~2^32 in 2 s, far above 1e6/s: a reset, not a wrap.
        Case{"wrap32_implausible", kWrap32, 1000, 5, true, 5, true, false, false},
        Case{"sat8_counting", kSat8, 10, 12, true, 2, false, false, false},
        Case{"sat8_at_ceiling", kSat8, 250, 255, false, 0, false, false, true},
        Case{"sat16_at_ceiling", kSat16, 65000, 65535, false, 0, false, false, true},
        Case{"sat16_cleared", kSat16, 65535, 3, true, 3, true, false, false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CounterTrackerTest, saturated_stays_untrusted_and_forget_starts_over) {
  CounterTracker tracker(kSat8);
  EXPECT_TRUE(tracker.Update(255, kT0).saturated);
  CounterStep again = tracker.Update(255, kT0 + seconds(1));
  EXPECT_TRUE(again.saturated);
  EXPECT_FALSE(again.valid);
  tracker.Forget();
  EXPECT_FALSE(tracker.Update(3, kT0 + seconds(2)).valid) << "after Forget, a first sample";
  EXPECT_EQ(tracker.Update(4, kT0 + seconds(3)).delta, 1u);
}

TEST(CounterTrackerTest, non_increasing_time_gives_no_delta) {
  CounterTracker tracker;
  tracker.Update(1, kT0);
  EXPECT_FALSE(tracker.Update(5, kT0).valid);
}

}  // namespace
}  // namespace fabricwatch::detect
