// Meta-tests of the typed contract between detectors and collectors (detectors/core/inputs.h):
// every family, kind and label a registered detector declares it reads is exported by the
// registered collector its family's contract header names, and the checker itself catches a wrong
// name, label, kind or collector.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <type_traits>

#include "collectors/registry.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/counter.h"
#include "detectors/core/inputs.h"
#include "detectors/core/node_model.h"
#include "detectors/registry.h"

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

// The node model (detectors/core/node_model.h) reads collectors' families like a detector; its
// declaration is held against the same tables, and names the collectors the engine feeds it.
TEST(DetectorInputsTest, the_node_model_reads_only_what_collectors_export) {
  for (const std::string& problem :
       CheckMetricInputs("node_model", NodeModelBuilder::Inputs(), RegisteredCollectorMetrics)) {
    ADD_FAILURE() << problem;
  }
  const auto collectors = NodeModelBuilder::Collectors();
  EXPECT_EQ(InputCollectors(NodeModelBuilder::Inputs()),
            std::vector<std::string>(collectors.begin(), collectors.end()));
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

// Families a detector author might get wrong, at namespace scope because a MetricInput keeps
// their address. A family with a typo in its name (one letter short), as if defined by hand:
constexpr rdma::Family kTypo{
    "fabric_rdma_port_symbol_error_total", "", MetricKind::kCounter, {"device", "port"}};
// The right name, read as a gauge:
constexpr rdma::Family kWrongKind{
    "fabric_rdma_port_symbol_errors_total", "", MetricKind::kGauge, {"device", "port"}};
// The right name with a label the collector does not export:
constexpr rdma::Family kWrongLabels{
    "fabric_rdma_port_symbol_errors_total", "", MetricKind::kCounter, {"device", "lane"}};
// The rdma family declared in netdev's contract header:
constexpr netdev::Family kMisplaced{
    "fabric_rdma_port_symbol_errors_total", "", MetricKind::kCounter, {"device", "port"}};
// A family of a collector the registry does not have:
constexpr std::string_view kNoSuchCollector = "no_such_collector";
constexpr FamilyOf<kNoSuchCollector> kOrphan{
    "fabric_rdma_port_symbol_errors_total", "", MetricKind::kCounter, {"device", "port"}};

// The checker catches each kind of mistake a detector author can still make. A label the family
// does not declare, or a family without a collector (a plain MetricDesc), does not compile.
TEST(DetectorInputsTest, check_catches_a_wrong_name_label_kind_or_collector) {
  const MetricInput inputs[] = {
      {kTypo, {"device", "port"}},
      {kWrongLabels, {"device", "lane"}},  // another label set, and 'lane' is not exported
      {kWrongKind, {"device"}},
      {kMisplaced, {"device"}},
      {kOrphan, {}},
      {rdma::kSymbolErrors, {"device", "port"}},  // right: no problem
  };
  const std::vector<std::string> problems =
      CheckMetricInputs("fake", inputs, RegisteredCollectorMetrics);
  ASSERT_EQ(problems.size(), 6u) << ::testing::PrintToString(problems);
  EXPECT_THAT(problems[0], HasSubstr("fabric_rdma_port_symbol_error_total, which collector "
                                     "'rdma' does not export"));
  EXPECT_THAT(problems[1], HasSubstr("another label set"));
  EXPECT_THAT(problems[2], HasSubstr("label 'lane'"));
  EXPECT_THAT(problems[3], HasSubstr("another kind"));
  EXPECT_THAT(problems[4], HasSubstr("collector 'netdev' does not export"));
  EXPECT_THAT(problems[5], HasSubstr("'no_such_collector', which is not registered"));
}

// The collector of an input is the one its family's contract header declares (issue 36): a row
// names the family alone, and a descriptor bound to no collector cannot be an input.
TEST(DetectorInputsTest, the_collector_comes_with_the_family) {
  constexpr MetricInput kInput{rdma::kPortState, {"device", "port"}};
  static_assert(kInput.collector == rdma::kCollector);
  static_assert(kInput.desc == &rdma::kPortState);
  static_assert(MetricInput{optics::kRxPower, {"lane"}}.collector == "optics");
  static_assert(std::is_constructible_v<MetricInput, const rdma::Family&, LabelNames>);
  static_assert(!std::is_constructible_v<MetricInput, const MetricDesc&, LabelNames>);
  EXPECT_EQ(kInput.labels.size(), 2u);
}

// Every registered detector's input names a collector whose contract header declared it, and that
// collector is registered under that name.
TEST(DetectorInputsTest, every_input_collector_is_registered) {
  for (const DetectorInfo& info : DetectorRegistry()) {
    for (const MetricInput& input : info.inputs) {
      EXPECT_NE(FindCollector(input.collector), nullptr)
          << info.name << " reads " << input.desc->name << " from " << input.collector;
    }
  }
}

TEST(DetectorInputsTest, input_collectors_are_distinct_in_first_seen_order) {
  const MetricInput inputs[] = {{rdma::kPortInfo, {}}, {netdev::kMtu, {}}, {rdma::kPortState, {}}};
  EXPECT_EQ(InputCollectors(inputs), (std::vector<std::string>{"rdma", "netdev"}));
}

// A detector asks which collector a snapshot is from by the contract header's constant.
TEST(DetectorInputsTest, a_snapshot_is_from_the_collector_its_name_says) {
  const std::vector<prometheus::MetricFamily> none;
  const SnapshotView view{rdma::kCollector, TimePoint{}, none};
  EXPECT_TRUE(view.From<rdma::kCollector>());
  EXPECT_FALSE(view.From<netdev::kCollector>());
  const std::string copied(rdma::kCollector);  // the engine's Snapshot holds a copy of the name
  EXPECT_TRUE((SnapshotView{copied, TimePoint{}, none}.From<rdma::kCollector>()));
}

}  // namespace
}  // namespace fabricwatch::detect
