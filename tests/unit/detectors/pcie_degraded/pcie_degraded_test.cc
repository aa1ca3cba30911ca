// pcie_degraded scenarios: width/speed downtraining, AER growth, and hours of healthy topology
// reads with GPU idle downshifts, a hot-unplug/re-plug and AER counter resets.

#include "detectors/pcie_degraded/pcie_degraded.h"

#include <gtest/gtest.h>

#include <random>

#include "collectors/topology/topology_metrics.h"
#include "tests/unit/detectors/scenario.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;
using testing::FindingLog;
using testing::SnapshotBuilder;
using testing::T0;

constexpr char kNic[] = "0000:3b:00.0";
constexpr char kGpu[] = "0000:18:00.0";

struct Pci {
  std::string device;
  std::string role;
  double speed = 32e9, max_speed = 32e9, width = 16, max_width = 16;
  double correctable = 0, nonfatal = 0, fatal = 0;
};

void AddPci(SnapshotBuilder& b, const Pci& p) {
  const testing::Labels l{{"device", p.device}, {"role", p.role}};
  b.Gauge(topology::kSpeed, l, p.speed);
  b.Gauge(topology::kMaxSpeed, l, p.max_speed);
  b.Gauge(topology::kWidth, l, p.width);
  b.Gauge(topology::kMaxWidth, l, p.max_width);
  for (const auto& [severity, value] : std::vector<std::pair<std::string, double>>{
           {"correctable", p.correctable}, {"nonfatal", p.nonfatal}, {"fatal", p.fatal}}) {
    b.Counter(topology::kAer, {{"device", p.device}, {"role", p.role}, {"severity", severity}},
              value);
  }
}

void Feed(FindingLog& log, TimePoint t, const std::vector<Pci>& functions) {
  SnapshotBuilder b;
  for (const auto& p : functions) AddPci(b, p);
  log.Feed("topology", t, b);
}

std::unique_ptr<Detector> Make(const DetectorOptions& options = {}) {
  auto made = MakePcieDegradedDetector(options);
  EXPECT_TRUE(made.has_value());
  return std::move(*made);
}

const std::string kNicCritical = std::string("critical{device=") + kNic + ",role=nic}";
const std::string kNicWarning = std::string("warning{device=") + kNic + ",role=nic}";

TEST(PcieDegradedTest, WidthDowntrainIsCriticalAndClearsAfterHoldDown) {
  auto detector = Make();
  FindingLog log(*detector);
  Pci nic{kNic, "nic"};
  Pci gpu{kGpu, "gpu"};
  nic.width = 8;
  for (int i = 0; i <= 10; ++i) Feed(log, T0() + minutes(i), {nic, gpu});
  ASSERT_TRUE(log.Active(kNicCritical));
  EXPECT_EQ(*log.FirstRaise(kNicCritical), T0() + minutes(5));  // downtrain_for 5m
  const Finding& f = log.active().at(kNicCritical);
  EXPECT_EQ(f.entity, (EntityLabels{{"device", kNic}, {"role", "nic"}}));
  EXPECT_DOUBLE_EQ(f.value, 8);
  EXPECT_TRUE(f.drain_eligible);
  EXPECT_NE(f.reason.find("x8 of x16"), std::string::npos) << f.reason;
  nic.width = 16;
  for (int i = 11; i <= 30; ++i) Feed(log, T0() + minutes(i), {nic, gpu});
  EXPECT_FALSE(log.Active(kNicCritical));
  EXPECT_EQ(*log.LastClear(kNicCritical), T0() + minutes(21));  // clear_for 10m
  EXPECT_EQ(log.raises().size(), 1u);
}

TEST(PcieDegradedTest, NicSpeedDowntrainWarnsGpuIdleSpeedDoesNot) {
  auto detector = Make();
  FindingLog log(*detector);
  Pci nic{kNic, "nic"};
  Pci gpu{kGpu, "gpu"};
  nic.speed = 16e9;
  gpu.speed = 2.5e9;  // idle downshift
  for (int i = 0; i <= 6; ++i) Feed(log, T0() + minutes(i), {nic, gpu});
  EXPECT_TRUE(log.Active(kNicWarning));
  EXPECT_EQ(log.active().size(), 1u);
  // With check_gpu_speed the GPU is checked too.
  auto strict = Make({{"check-gpu-speed", "true"}});
  FindingLog strict_log(*strict);
  for (int i = 0; i <= 6; ++i) Feed(strict_log, T0() + minutes(i), {nic, gpu});
  EXPECT_TRUE(strict_log.Active(std::string("warning{device=") + kGpu + ",role=gpu}"));
}

TEST(PcieDegradedTest, AerGrowth) {
  auto detector = Make();
  FindingLog log(*detector);
  Pci nic{kNic, "nic"};
  nic.correctable = 100;
  Feed(log, T0(), {nic});
  nic.correctable = 105;
  Feed(log, T0() + minutes(1), {nic});
  EXPECT_TRUE(log.active().empty());
  nic.correctable = 112;  // 12 in 2 min ≥ 10 per 10 min
  Feed(log, T0() + minutes(2), {nic});
  ASSERT_TRUE(log.Active(kNicWarning));
  EXPECT_DOUBLE_EQ(log.active().at(kNicWarning).value, 12);
  nic.nonfatal = 1;
  Feed(log, T0() + minutes(3), {nic});
  ASSERT_TRUE(log.Active(kNicCritical));
  for (int i = 4; i <= 30; ++i) Feed(log, T0() + minutes(i), {nic});
  EXPECT_TRUE(log.active().empty());
}

TEST(PcieDegradedTest, HealthyHoursWithUnplugAndResetsRaiseNothing) {
  auto detector = Make();
  FindingLog log(*detector);
  std::mt19937 rng(8);
  std::bernoulli_distribution idle(0.5);
  std::bernoulli_distribution rare_error(1.0 / 60);
  Pci nic{kNic, "nic"};
  Pci gpu{kGpu, "gpu"};
  Pci bridge{"0000:17:00.0", "bridge"};
  bridge.max_speed = 64e9;  // Gen5 root port above a Gen4 switch: reads downtrained forever
  bridge.speed = 16e9;
  for (int i = 0; i < 6 * 60; ++i) {  // 6 h, one topology read per minute
    gpu.speed = idle(rng) ? 2.5e9 : 32e9;
    if (rare_error(rng)) nic.correctable += 1;
    if (i == 120) gpu.correctable = 0;  // counters cleared (re-enumeration)
    std::vector<Pci> present{gpu, bridge};
    const bool unplugged = i >= 200 && i < 215;  // NIC hot-unplug for 15 min
    if (i == 215) nic.correctable = 0;           // re-plugged: counters start over
    if (!unplugged) present.push_back(nic);
    Feed(log, T0() + minutes(i), present);
  }
  EXPECT_TRUE(log.raises().empty()) << log.raises().begin()->first;
  MetricSink sink;
  detector->Export(sink);
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_EQ(sink.sample_count(), 6u);  // 2 functions × 3 series; the bridge is not tracked
}

TEST(PcieDegradedTest, OptionsAreValidated) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"downtrain-for", "x"},
                                                        {"check-gpu-speed", "1"},
                                                        {"aer-correctable-warning", "0"},
                                                        {"aer-correctable-clear", "50"},
                                                        {"typo", "1"}}) {
    auto made = MakePcieDegradedDetector({{key, value}});
    ASSERT_FALSE(made.has_value()) << key;
    EXPECT_NE(made.error().message().find(key), std::string::npos) << made.error().message();
  }
}

}  // namespace
}  // namespace fabricwatch::detect
