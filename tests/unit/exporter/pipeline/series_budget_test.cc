// The series budget (exporter/pipeline/series_budget.h): each rule on a render, the flags that
// bring families back, and the rules table against the code and the shipped rules and dashboards.
// The per-node figure is measured by e2e.series_budget_test on the simulator's nodes.
#include "exporter/pipeline/series_budget.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "collectors/core/device_reads.h"
#include "base/metric_sink.h"
#include "collectors/registry.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/registry.h"
#include "detectors/link_flap/link_flap_metrics.h"
#include "exporter/http/http_metrics.h"
#include "exporter/http/render.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/privileges.h"
#include "exporter/remediation/hook_runner.h"
#include "tests/testing/families.h"

namespace fabricwatch::exporter {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

prometheus::MetricFamily Family(std::string name, prometheus::MetricType type,
                                std::vector<std::pair<Labels, double>> samples) {
  return fabricwatch::testing::MakeFamily(std::move(name), type, std::move(samples));
}

constexpr auto kGauge = prometheus::MetricType::Gauge;
constexpr auto kCounter = prometheus::MetricType::Counter;

std::string Render(const std::vector<prometheus::MetricFamily>& families, SeriesFilter* filter) {
  std::vector<const prometheus::MetricFamily*> pointers;
  for (const auto& family : families) pointers.push_back(&family);
  std::string out;
  AppendExposition(pointers, out, filter);
  return out;
}

size_t Lines(const std::string& text, std::string_view prefix) {
  size_t n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) n += line.starts_with(prefix) ? 1 : 0;
  return n;
}

SeriesBudget Budget(SeriesBudgetOptions options = {}) {
  auto budget = SeriesBudget::Create(options);
  EXPECT_TRUE(budget.has_value()) << budget.error().ToString();
  return std::move(*budget);
}

TEST(SeriesBudgetTest, OffFamiliesAreDroppedWholeOthersPassUntouched) {
  SeriesBudget budget = Budget();
  const std::vector<prometheus::MetricFamily> families = {
      Family("fabric_pcie_acs_capable", kGauge, {{{{"device", "0000:10:01.0"}}, 1}}),
      Family("fabric_netdev_receive_bytes_total", kCounter, {{{{"netdev", "eth0"}}, 0}})};
  const std::string text = Render(families, &budget);
  EXPECT_EQ(text.find("fabric_pcie_acs_capable"), std::string::npos) << text;  // no HELP either
  EXPECT_EQ(Lines(text, "fabric_netdev_receive_bytes_total{"), 1u);            // zero counters stay
}

TEST(SeriesBudgetTest, NonZeroIsStickySoAReturnToZeroIsSeen) {
  SeriesBudget budget = Budget();
  auto flags = [](double a, double b) {
    return std::vector<prometheus::MetricFamily>{
        Family("fabric_optics_alarm_flag", kGauge,
               {{{{"netdev", "eth0"}, {"quantity", "rx_power"}}, a},
                {{{"netdev", "eth0"}, {"quantity", "tx_power"}}, b}})};
  };
  EXPECT_EQ(Lines(Render(flags(0, 0), &budget), "fabric_optics_alarm_flag{"), 0u);
  EXPECT_EQ(Lines(Render(flags(1, 0), &budget), "fabric_optics_alarm_flag{"), 1u);
  const std::string cleared = Render(flags(0, 0), &budget);
  EXPECT_NE(cleared.find("fabric_optics_alarm_flag{netdev=\"eth0\",quantity=\"rx_power\"} 0"),
            std::string::npos)
      << cleared;
  EXPECT_EQ(Lines(cleared, "fabric_optics_alarm_flag{"), 1u);
}

std::vector<prometheus::MetricFamily> PriorityNode(double prio6_bytes) {
  std::vector<prometheus::MetricFamily> families;
  families.push_back(Family("fabric_pfc_enabled", kGauge,
                            {{{{"netdev", "eth0"}, {"priority", "3"}}, 1},
                             {{{"netdev", "eth0"}, {"priority", "6"}}, 0},
                             {{{"netdev", "eth1"}, {"priority", "3"}}, 0}}));
  families.push_back(
      Family("fabric_ethtool_priority_bytes_total", kCounter,
             {{{{"netdev", "eth0"}, {"priority", "0"}, {"direction", "rx"}}, 0},
              {{{"netdev", "eth0"}, {"priority", "3"}, {"direction", "rx"}}, 0},
              {{{"netdev", "eth0"}, {"priority", "6"}, {"direction", "rx"}}, prio6_bytes}}));
  families.push_back(Family("fabric_ethtool_priority_receive_discards_total", kCounter,
                            {{{{"netdev", "eth0"}, {"priority", "3"}}, 0},
                             {{{"netdev", "eth0"}, {"priority", "6"}}, 0},
                             {{{"netdev", "eth1"}, {"priority", "3"}}, 0}}));
  return families;
}

TEST(SeriesBudgetTest, PrioritiesWithPfcOrTrafficStayAndStay) {
  SeriesBudget budget = Budget();
  std::string text = Render(PriorityNode(0), &budget);
  // PFC on eth0 priority 3: its zero counters are exported (rate() needs them); 0 and 6 idle.
  EXPECT_EQ(Lines(text, "fabric_ethtool_priority_bytes_total{"), 1u) << text;
  EXPECT_NE(text.find("priority=\"3\",direction=\"rx\"} 0"), std::string::npos);
  // Priority 6 starts to carry traffic: it is exported from then on, also when it stops.
  text = Render(PriorityNode(5e9), &budget);
  EXPECT_EQ(Lines(text, "fabric_ethtool_priority_bytes_total{"), 2u) << text;
  EXPECT_EQ(Lines(Render(PriorityNode(5e9), &budget), "fabric_ethtool_priority_bytes_total{"), 2u);
  // Drops are judged on the lossless priorities only: eth0 priority 3, not the busy 6.
  EXPECT_EQ(Lines(text, "fabric_ethtool_priority_receive_discards_total{"), 1u) << text;
  // The PFC flags themselves: the enabled one.
  EXPECT_EQ(Lines(text, "fabric_pfc_enabled{"), 1u);
}

TEST(SeriesBudgetTest, InfiniBandCountersOnlyOnInfiniBandPortsPcieEndpointsAlarmThresholds) {
  SeriesBudget budget = Budget();
  const std::vector<prometheus::MetricFamily> families = {
      Family("fabric_rdma_port_info", kGauge,
             {{{{"device", "mlx5_0"}, {"port", "1"}, {"link_layer", "InfiniBand"}}, 1},
              {{{"device", "mlx5_1"}, {"port", "1"}, {"link_layer", "Ethernet"}}, 1}}),
      Family(
          "fabric_rdma_port_vl15_dropped_total", kCounter,
          {{{{"device", "mlx5_0"}, {"port", "1"}}, 0}, {{{"device", "mlx5_1"}, {"port", "1"}}, 0}}),
      Family("fabric_pcie_link_width_lanes", kGauge,
             {{{{"device", "0000:17:00.0"}, {"role", "nic"}}, 16},
              {{{"device", "0000:18:00.0"}, {"role", "gpu"}}, 16},
              {{{"device", "0000:16:01.0"}, {"role", "bridge"}}, 16}}),
      Family("fabric_optics_rx_power_threshold_watts", kGauge,
             {{{{"netdev", "eth0"}, {"threshold", "low_alarm"}}, 1e-5},
              {{{"netdev", "eth0"}, {"threshold", "low_warning"}}, 2e-5},
              {{{"netdev", "eth0"}, {"threshold", "high_alarm"}}, 2e-3}})};
  const std::string text = Render(families, &budget);
  EXPECT_EQ(Lines(text, "fabric_rdma_port_vl15_dropped_total{device=\"mlx5_0\""), 1u) << text;
  EXPECT_EQ(Lines(text, "fabric_rdma_port_vl15_dropped_total{"), 1u);
  EXPECT_EQ(Lines(text, "fabric_pcie_link_width_lanes{"), 2u);
  EXPECT_EQ(text.find("role=\"bridge\""), std::string::npos);
  EXPECT_EQ(Lines(text, "fabric_optics_rx_power_threshold_watts{"), 2u);
  EXPECT_EQ(text.find("low_warning"), std::string::npos);
}

TEST(SeriesBudgetTest, IncludeAndAllBringFamiliesBack) {
  const std::vector<prometheus::MetricFamily> families = {
      Family("fabric_pcie_acs_capable", kGauge, {{{{"device", "a"}}, 1}}),
      Family("fabric_pcie_device_info", kGauge, {{{{"device", "a"}}, 1}}),
      Family("fabric_optics_alarm_flag", kGauge, {{{{"netdev", "eth0"}}, 0}})};
  SeriesBudget exact = Budget({.all = false, .include = {"fabric_pcie_acs_capable"}});
  std::string text = Render(families, &exact);
  EXPECT_EQ(Lines(text, "fabric_pcie_acs_capable{"), 1u);
  EXPECT_EQ(Lines(text, "fabric_pcie_device_info{"), 0u);
  SeriesBudget prefix = Budget({.all = false, .include = {"fabric_pcie_*"}});
  text = Render(families, &prefix);
  EXPECT_EQ(Lines(text, "fabric_pcie_acs_capable{") + Lines(text, "fabric_pcie_device_info{"), 2u);
  EXPECT_EQ(Lines(text, "fabric_optics_alarm_flag{"), 0u);
  SeriesBudget all = Budget({.all = true, .include = {}});
  EXPECT_EQ(Render(families, &all), Render(families, nullptr));
}

TEST(SeriesBudgetTest, AnIncludeThatNamesNothingIsAnError) {
  auto budget = SeriesBudget::Create({.all = false, .include = {"fabric_pcie_acs_capabel"}});
  ASSERT_FALSE(budget.has_value());
  EXPECT_NE(budget.error().ToString().find("--metrics.include: \"fabric_pcie_acs_capabel\""),
            std::string::npos)
      << budget.error().ToString();
  // A family the budget exports whole anyway: nothing to bring back, also an error.
  EXPECT_FALSE(SeriesBudget::Create({.all = false, .include = {"fabric_netdev_info"}}));
}

// Every family the agent can export, from the registries (as the metric reference is made).
std::map<std::string, MetricKind> KnownFamilies() {
  std::map<std::string, MetricKind> known;
  auto add = [&known](std::span<const MetricDesc> descs) {
    for (const MetricDesc& d : descs) known[std::string(d.name)] = d.kind;
  };
  add(SelfMetricDescs());
  add(HttpMetricDescs());
  add(HookRunner::MetricDescs());
  add(PrivilegeLog::Metrics());
  add(detect::AnomalyTracker::Metrics());
  add(DetectorEngine::Metrics());
  for (const CollectorInfo& info : CollectorRegistry()) add(info.metrics);
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) add(info.metrics);
  return known;
}

TEST(SeriesBudgetTest, RulesAreSortedUniqueAndNameRealFamilies) {
  const auto known = KnownFamilies();
  std::string_view previous;
  for (const FamilyBudgetRule& rule : SeriesBudgetRules()) {
    EXPECT_LT(previous, rule.family) << "rules must be sorted and unique";
    previous = rule.family;
    auto it = known.find(std::string(rule.family));
    ASSERT_NE(it, known.end()) << rule.family << " is not a family of any collector or detector";
    EXPECT_FALSE(rule.why.empty()) << rule.family;
    // A counter is never dropped for being zero: rate() would lose the first increment.
    if (rule.rule == ExportRule::kNonZero) {
      const bool event_counter = rule.family == "fabric_ethtool_module_events_total";
      EXPECT_TRUE(it->second != MetricKind::kCounter || event_counter)
          << rule.family << ": a counter under kNonZero";
    }
  }
}

// The rules are the families' own declarations (MetricDesc::budget), not a table of names: every
// descriptor the agent exports that declares a rule is among them with that rule and reason, and
// nothing else is.
TEST(SeriesBudgetTest, RulesAreWhatTheFamiliesDeclare) {
  std::map<std::string_view, const MetricDesc*> declared;
  auto add = [&declared](std::span<const MetricDesc> descs) {
    for (const MetricDesc& d : descs) {
      if (d.budget.rule != ExportRule::kAll) declared.emplace(d.name, &d);
    }
  };
  add(SelfMetricDescs());
  add(HttpMetricDescs());
  add(HookRunner::MetricDescs());
  add(PrivilegeLog::Metrics());
  add(detect::AnomalyTracker::Metrics());
  add(DetectorEngine::Metrics());
  for (const CollectorInfo& info : CollectorRegistry()) add(info.metrics);
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) add(info.metrics);
  ASSERT_EQ(SeriesBudgetRules().size(), declared.size());
  for (const FamilyBudgetRule& rule : SeriesBudgetRules()) {
    auto it = declared.find(rule.family);
    ASSERT_NE(it, declared.end()) << rule.family;
    EXPECT_EQ(rule.rule, it->second->budget.rule) << rule.family;
    EXPECT_EQ(rule.why, it->second->budget.why) << rule.family;
  }
  // One of each kind of declaration site: a collector's contract header, a collector's own
  // table, a detector's contract header and the agent's own.
  EXPECT_EQ(declared.at(rdma::kPortState.name)->budget.rule, ExportRule::kOff);
  EXPECT_EQ(declared.at("fabric_optics_lane_tx_fault")->budget.rule, ExportRule::kNonZero);
  EXPECT_EQ(declared.at(detect::link_flap::kPenalty.name)->budget.rule, ExportRule::kNonZero);
  EXPECT_EQ(declared.at(kDeviceReads.name)->budget.rule, ExportRule::kOff);
}

// A rule reads its labels (the netdev and priority of a per-priority rule) as labels of its shape
// (ExportRuleShape), checked when it compiles; every family under the rule must declare them too,
// or the rule would read "" from it and drop every series.
TEST(SeriesBudgetTest, EveryFamilyUnderARuleHasTheLabelsTheRuleReads) {
  std::map<std::string, LabelNames, std::less<>> labels;
  auto add = [&labels](std::span<const MetricDesc> descs) {
    for (const MetricDesc& d : descs) labels[std::string(d.name)] = d.labels;
  };
  for (const CollectorInfo& info : CollectorRegistry()) add(info.metrics);
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) add(info.metrics);
  size_t checked = 0;
  for (const FamilyBudgetRule& rule : SeriesBudgetRules()) {
    const MetricDesc* shape = ExportRuleShape(rule.rule);
    if (shape == nullptr) continue;
    auto it = labels.find(rule.family);
    if (it == labels.end()) continue;  // RulesAreSortedUniqueAndNameRealFamilies reports it
    for (std::string_view label : shape->labels) {
      EXPECT_NE(std::find(it->second.begin(), it->second.end(), label), it->second.end())
          << rule.family << " (" << ExportRuleName(rule.rule) << ") has no label " << label;
    }
    ++checked;
  }
  EXPECT_GT(checked, 10u);
  EXPECT_EQ(ExportRuleShape(ExportRule::kOff), nullptr);
  EXPECT_EQ(ExportRuleShape(ExportRule::kNonZero), nullptr);
}

// "every detector, alert and dashboard panel still works" (issue 26): what they read is
// exported. A family that is off must not appear in a shipped rule or panel.
TEST(SeriesBudgetTest, NoShippedRuleOrPanelReadsAFamilyThatIsOff) {
  namespace fs = std::filesystem;
  const fs::path root = FABRICWATCH_SOURCE_DIR;
  std::vector<fs::path> files;
  for (const char* dir : {"alerts", "dashboards"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".yml" || ext == ".json")) {
        files.push_back(entry.path());
      }
    }
  }
  ASSERT_GT(files.size(), 5u);
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    const std::string body = text.str();
    for (const FamilyBudgetRule& rule : SeriesBudgetRules()) {
      if (rule.rule != ExportRule::kOff) continue;
      // A whole-name match: fabric_pcie_link_max_width_lanes must not hit ..._max_width_lanes_x.
      for (size_t pos = body.find(rule.family); pos != std::string::npos;
           pos = body.find(rule.family, pos + 1)) {
        const size_t end = pos + rule.family.size();
        const bool whole =
            end == body.size() ||
            !(std::isalnum(static_cast<unsigned char>(body[end])) || body[end] == '_');
        EXPECT_FALSE(whole) << file << " reads " << rule.family
                            << ", which the series budget does not export";
      }
    }
  }
}

}  // namespace
}  // namespace fabricwatch::exporter
