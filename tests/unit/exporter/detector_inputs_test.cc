// Meta-tests of the typed contract between detectors and collectors (detectors/core/inputs.h):
// every family, kind and label a registered detector declares it reads is exported by the
// registered collector it names, and the checker itself catches a wrong name, label, kind or
// collector.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "collectors/core/registry.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/counter.h"
#include "detectors/core/inputs.h"
#include "detectors/core/registry.h"

namespace fabricwatch::detect {
namespace {

using ::testing::HasSubstr;

std::optional<std::span<const MetricDesc>> RegisteredCollectorMetrics(std::string_view name) {
  const CollectorInfo* info = FindCollector(name);
  if (info == nullptr) return std::nullopt;
  return info->metrics;
}

TEST(DetectorInputsTest, every_registered_detector_reads_only_what_collectors_export) {
  for (const DetectorInfo& info : DetectorRegistry()) {
    EXPECT_FALSE(info.inputs.empty()) << info.name << " declares no inputs";
    for (const std::string& problem :
         CheckMetricInputs(info.name, info.inputs, RegisteredCollectorMetrics)) {
      ADD_FAILURE() << problem;
    }
  }
}

// The engine feeds a detector the collectors of its inputs() (detector_engine.cc); they are
// derived from the declaration, so the two cannot drift apart.
TEST(DetectorInputsTest, inputs_name_the_collectors_of_the_declaration) {
  for (const DetectorInfo& info : DetectorRegistry()) {
    auto detector = info.factory({});
    ASSERT_TRUE(detector) << info.name;
    EXPECT_EQ((*detector)->inputs(), InputCollectors(info.inputs)) << info.name;
    EXPECT_EQ((*detector)->name(), info.name);
  }
}

// A counter the detectors track saturates or wraps as its collector declares (MetricDesc::range);
// SpecFor() carries that to the CounterTracker.
TEST(DetectorInputsTest, counter_semantics_come_from_the_collector) {
  const CounterSpec symbol = SpecFor(rdma::kSymbolErrors);
  EXPECT_EQ(symbol.behaviour, CounterBehaviour::kSaturating);
  EXPECT_EQ(symbol.width, 16u);
  EXPECT_EQ(SpecFor(rdma::kLinkDowned).width, 8u);
  EXPECT_EQ(SpecFor(rdma::kPortRate).behaviour, CounterBehaviour::kMonotonic64);
}

// The checker catches each kind of mistake a detector author can make.
TEST(DetectorInputsTest, check_catches_a_wrong_name_label_kind_or_collector) {
  // A family name with a typo (one letter short), as a detector might define by hand.
  constexpr MetricDesc kTypo{
      "fabric_rdma_port_symbol_error_total", "", MetricKind::kCounter, {"device", "port"}};
  // The right name, read as a gauge.
  constexpr MetricDesc kWrongKind{
      "fabric_rdma_port_symbol_errors_total", "", MetricKind::kGauge, {"device", "port"}};
  const MetricInput inputs[] = {
      {"rdma", &kTypo, {"device", "port"}},
      {"rdma", &rdma::kSymbolErrors, {"device", "lane"}},  // no such label
      {"rdma", &kWrongKind, {"device"}},
      {"netdev", &rdma::kSymbolErrors, {"device"}},  // another collector's family
      {"no_such_collector", &rdma::kSymbolErrors, {}},
      {"rdma", &rdma::kSymbolErrors, {"device", "port"}},  // right: no problem
  };
  const std::vector<std::string> problems =
      CheckMetricInputs("fake", inputs, RegisteredCollectorMetrics);
  ASSERT_EQ(problems.size(), 5u) << ::testing::PrintToString(problems);
  EXPECT_THAT(problems[0], HasSubstr("fabric_rdma_port_symbol_error_total, which collector "
                                     "'rdma' does not export"));
  EXPECT_THAT(problems[1], HasSubstr("label 'lane'"));
  EXPECT_THAT(problems[2], HasSubstr("another kind"));
  EXPECT_THAT(problems[3], HasSubstr("collector 'netdev' does not export"));
  EXPECT_THAT(problems[4], HasSubstr("'no_such_collector', which is not registered"));
}

TEST(DetectorInputsTest, input_collectors_are_distinct_in_first_seen_order) {
  const MetricInput inputs[] = {{"rdma", &rdma::kPortInfo, {}},
                                {"netdev", &rdma::kPortInfo, {}},
                                {"rdma", &rdma::kPortState, {}}};
  EXPECT_EQ(InputCollectors(inputs), (std::vector<std::string>{"rdma", "netdev"}));
}

}  // namespace
}  // namespace fabricwatch::detect
