// ber_growth's windows survive a restart through the state file (issue 22 item 6): a slow BER
// growth interrupted by a restart is raised when the uninterrupted run raises it; a corrupt or
// future bucket is dropped and counted; an unknown version is an error.

#include <gtest/gtest.h>

#include <optional>

#include "collectors/ethtool/ethtool_metrics.h"
#include "detectors/ber_growth/ber_growth.h"
#include "detectors/core/state_check.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::seconds;
using testing::FindingLog;
using testing::SnapshotBuilder;
using testing::T0;

std::unique_ptr<Detector> Make() {
  auto made = MakeBerGrowthDetector({});
  EXPECT_TRUE(made.has_value());
  return std::move(*made);
}

// 100 Gb/s with post-FEC errors at 3e-14 (3x the warning) from the start: the fixed 50 min
// window (3/X bits at 100 Gb/s) is what raises it.
struct Stream {
  double bits = 0, pcs = 0, owed = 0;
  void Feed(FindingLog& log, int s) {
    bits += 1e11;
    owed += 3e-14 * 1e11;
    pcs += std::floor(owed);
    owed -= std::floor(owed);
    SnapshotBuilder b;
    b.Counter(ethtool::kPhyReceivedBits, {{"netdev", "eth0"}}, bits);
    b.Counter(ethtool::kPhyCorrectedBits, {{"netdev", "eth0"}}, bits * 1e-8);
    b.Counter(ethtool::kPhyPcsSymbolErrors, {{"netdev", "eth0"}}, pcs);
    log.Feed("ethtool", T0() + seconds(s), b);
  }
};

constexpr char kWarning[] = "warning{netdev=eth0}";

std::optional<int> RaiseSecond(std::optional<int> restart_at) {
  auto detector = Make();
  auto log = std::make_unique<FindingLog>(*detector);
  Stream stream;
  for (int s = 0; s < 3 * 3600; ++s) {
    if (restart_at && s == *restart_at) {
      const nlohmann::json saved = nlohmann::json::parse(detector->SaveState().dump());
      detector = Make();
      StateLoadCheck check(T0() + seconds(s));
      EXPECT_TRUE(detector->LoadState(saved, check).ok());
      EXPECT_EQ(check.total_dropped(), 0u);
      log = std::make_unique<FindingLog>(*detector);
    }
    stream.Feed(*log, s);
    if (log->Active(kWarning)) return s;
  }
  return std::nullopt;
}

TEST(BerStateTest, a_restart_in_a_slow_growth_keeps_its_detection_time) {
  const auto uninterrupted = RaiseSecond(std::nullopt);
  ASSERT_TRUE(uninterrupted.has_value());
  const auto restarted = RaiseSecond(*uninterrupted / 2);
  ASSERT_TRUE(restarted.has_value()) << "the restart lost the window";
  // The first sample after the restart gives no delta (the counters are read afresh): one
  // sample later at most.
  EXPECT_NEAR(*restarted, *uninterrupted, 1) << "uninterrupted " << *uninterrupted << " s";
  // Without the state, the window starts over.
  auto fresh = Make();
  FindingLog log(*fresh);
  Stream stream;
  for (int s = *uninterrupted / 2; s <= *uninterrupted + 1; ++s) stream.Feed(log, s);
  EXPECT_FALSE(log.Active(kWarning));
}

TEST(BerStateTest, future_and_corrupt_buckets_are_dropped_and_bad_state_is_an_error) {
  auto detector = Make();
  const double now = std::chrono::duration<double>(T0().time_since_epoch()).count();
  nlohmann::json state = {{"version", 1},
                          {"eth",
                           {{"eth0",
                             {{"history",
                               {{now - 20, 10, 1e12, 0, 0, 1e12, 1e4},
                                {now + 3600, 10, 1e12, 0, 0, 1e12, 1e4},  // from the future
                                {now - 10, 10, -5, 0, 0, 1e12, 1e4}}},    // negative bits
                              {"trend", nlohmann::json::array()}}}}},
                          {"ib", nlohmann::json::object()}};
  StateLoadCheck check(T0());
  ASSERT_TRUE(detector->LoadState(state, check).ok());
  EXPECT_EQ(check.total_dropped(), 2u);
  const auto saved = detector->SaveState();
  EXPECT_EQ(saved["eth"]["eth0"]["history"].size(), 1u);

  StateLoadCheck other(T0());
  EXPECT_FALSE(Make()->LoadState({{"version", 99}}, other).ok());
  EXPECT_FALSE(Make()->LoadState({{"version", 1}, {"eth", 3}, {"ib", 4}}, other).ok());
  EXPECT_TRUE(Make()->LoadState(nlohmann::json::object(), other).ok());
}

}  // namespace
}  // namespace fabricwatch::detect
