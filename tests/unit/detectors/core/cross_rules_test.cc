// Cross-detector rules (detectors/core/cross_rules.h): one fault gives one finding.
#include "detectors/core/cross_rules.h"

#include <gtest/gtest.h>

#include "collectors/rdma/rdma_metrics.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect {
namespace {

Finding Make(Severity severity, EntityLabels entity, std::vector<Evidence> evidence = {}) {
  Finding f;
  f.severity = severity;
  f.entity = std::move(entity);
  f.evidence = std::move(evidence);
  f.reason = "test";
  return f;
}

// mlx5_0/1 is RoCE on eth0 (ACTIVE unless `roce_state`), mlx5_2/1 InfiniBand on ib0 (ACTIVE
// unless `ib_state`).
Families Ports(double roce_state = 4, double ib_state = 4) {
  testing::Families f;
  f.Gauge(rdma::kPortInfo,
          {{"device", "mlx5_0"},
           {"port", "1"},
           {"link_layer", "Ethernet"},
           {"netdev", "eth0"},
           {"speed", "HDR"}},
          1);
  f.Gauge(rdma::kPortInfo,
          {{"device", "mlx5_2"},
           {"port", "1"},
           {"link_layer", "InfiniBand"},
           {"netdev", "ib0"},
           {"speed", "NDR"}},
          1);
  f.Gauge(rdma::kPortState, {{"device", "mlx5_0"}, {"port", "1"}}, roce_state);
  f.Gauge(rdma::kPortState, {{"device", "mlx5_2"}, {"port", "1"}}, ib_state);
  return f.families();
}

const EntityLabels kStormSource{{"netdev", "eth0"}, {"priority", "3"}, {"role", "source"}};
const EntityLabels kEth0{{"netdev", "eth0"}};
const EntityLabels kEth1{{"netdev", "eth1"}};
const EntityLabels kIbPort{{"device", "mlx5_2"}, {"port", "1"}};

NodeModel NodeOf(const Families& rdma_families) {
  NodeModelBuilder builder;
  builder.Observe(rdma::kCollector, rdma_families);
  return builder.model();
}

bool HasEvidence(const Finding& f, std::string_view name) {
  for (const Evidence& e : f.evidence) {
    if (e.name == name) return true;
  }
  return false;
}

TEST(CrossRulesTest, table_names_each_rule_once_with_its_reason) {
  std::set<std::string_view> names;
  for (const CrossRule& rule : CrossRuleTable()) {
    EXPECT_TRUE(names.insert(rule.name).second) << rule.name;
    EXPECT_FALSE(rule.why.empty());
    EXPECT_EQ(rule.owner, "link_flap");
  }
  EXPECT_EQ(names.size(), 3u);
}

TEST(CrossRulesTest, ports_are_matched_across_netdev_and_device_port) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports());
  const CrossRulePort roce = PortId{"mlx5_0", 1};
  const CrossRulePort ib = PortId{"mlx5_2", 1};
  EXPECT_EQ(CrossRules::PortOf(kEth0, node), roce);
  EXPECT_EQ(CrossRules::PortOf({{"netdev", "ib0"}}, node), ib);  // IPoIB is its IB port
  EXPECT_EQ(CrossRules::PortOf(kIbPort, node), ib);
  // Not an RDMA port: matches only itself.
  EXPECT_EQ(CrossRules::PortOf(kEth1, node), CrossRulePort{std::string("eth1")});
  EXPECT_EQ(CrossRules::PortOf({{"device", "mlx5_0"}}, node), std::nullopt);
}

TEST(CrossRulesTest, storm_on_a_flapping_link_is_suppressed_and_attached_to_the_flap) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports());
  FindingsByDetector findings;
  findings["pfc_storm"] = {Make(Severity::kCritical, kStormSource)};
  findings["link_flap"] = {Make(Severity::kCritical, kEth0)};
  auto started = rules.Apply(findings, node);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].rule->name, "storm_on_flapping_link");
  EXPECT_TRUE(findings["pfc_storm"].empty());
  ASSERT_EQ(findings["link_flap"].size(), 1u);
  EXPECT_TRUE(HasEvidence(findings["link_flap"][0], "pfc_storm_suppressed"));
  EXPECT_NE(findings["link_flap"][0].reason.find("pfc_storm"), std::string::npos);
  EXPECT_EQ((rules.counts()[{"pfc_storm", "storm_on_flapping_link"}]), 1u);

  // Still suppressed at the next evaluation: not counted again.
  findings["pfc_storm"] = {Make(Severity::kCritical, kStormSource)};
  findings["link_flap"] = {Make(Severity::kCritical, kEth0)};
  EXPECT_TRUE(rules.Apply(findings, node).empty());
  EXPECT_TRUE(findings["pfc_storm"].empty());
  EXPECT_EQ((rules.counts()[{"pfc_storm", "storm_on_flapping_link"}]), 1u);
}

TEST(CrossRulesTest, storm_on_another_port_or_beside_a_maintenance_finding_is_kept) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports());
  FindingsByDetector findings;
  findings["pfc_storm"] = {Make(Severity::kCritical, kStormSource)};
  findings["link_flap"] = {Make(Severity::kCritical, kEth1), Make(Severity::kInfo, kEth0)};
  EXPECT_TRUE(rules.Apply(findings, node).empty());
  EXPECT_EQ(findings["pfc_storm"].size(), 1u);
  EXPECT_EQ((rules.counts()[{"pfc_storm", "storm_on_flapping_link"}]), 0u);
}

TEST(CrossRulesTest, ber_on_a_port_that_is_not_active_is_suppressed) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports(/*roce_state=*/1));  // DOWN
  FindingsByDetector findings;
  findings["ber_growth"] = {Make(Severity::kCritical, kEth0), Make(Severity::kCritical, kIbPort)};
  auto started = rules.Apply(findings, node);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].rule->name, "ber_on_down_port");
  ASSERT_EQ(findings["ber_growth"].size(), 1u);
  EXPECT_EQ(findings["ber_growth"][0].entity, kIbPort);  // ACTIVE: evaluated
}

TEST(CrossRulesTest, ber_on_a_port_link_flap_reports_down_is_suppressed) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports());
  FindingsByDetector findings;
  findings["ber_growth"] = {Make(Severity::kWarning, kIbPort), Make(Severity::kWarning, kEth0)};
  // A slow-flapping warning of a port that is up again does not explain BER; an outage does.
  findings["link_flap"] = {
      Make(Severity::kWarning, kIbPort, {{"down_seconds", 4}}),
      Make(Severity::kWarning, kEth0, {{"down_seconds", 0}, {"slow_window_down_events", 2}})};
  auto started = rules.Apply(findings, node);
  ASSERT_EQ(started.size(), 1u);
  ASSERT_EQ(findings["ber_growth"].size(), 1u);
  EXPECT_EQ(findings["ber_growth"][0].entity, kEth0);
  EXPECT_TRUE(HasEvidence(findings["link_flap"][0], "ber_growth_suppressed"));
  EXPECT_FALSE(HasEvidence(findings["link_flap"][1], "ber_growth_suppressed"));
}

TEST(CrossRulesTest, link_flap_owns_the_outage_of_a_port_it_saw_go_down) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports());
  FindingsByDetector findings;
  findings["link_degraded"] = {
      Make(Severity::kCritical, kIbPort, {{"port_state", 1}, {"phys_state", 3}}),
      // Width loss of the same port: not an outage, kept.
      Make(Severity::kWarning, kIbPort, {{"width_lanes", 2}})};
  findings["link_flap"] = {Make(Severity::kCritical, kIbPort, {{"down_seconds", 40}})};
  auto started = rules.Apply(findings, node);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].rule->name, "outage_of_port_seen_up");
  ASSERT_EQ(findings["link_degraded"].size(), 1u);
  EXPECT_EQ(findings["link_degraded"][0].severity, Severity::kWarning);
  EXPECT_TRUE(HasEvidence(findings["link_flap"][0], "link_degraded_suppressed"));
}

TEST(CrossRulesTest, a_never_up_port_alone_stays_link_degraded) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports(4, 1));
  FindingsByDetector findings;
  findings["link_degraded"] = {Make(Severity::kCritical, kIbPort, {{"port_state", 1}})};
  findings["link_flap"] = {};
  EXPECT_TRUE(rules.Apply(findings, node).empty());
  EXPECT_EQ(findings["link_degraded"].size(), 1u);
}

TEST(CrossRulesTest, a_suppression_that_ends_and_starts_again_is_counted_twice) {
  CrossRules rules;
  const NodeModel node = NodeOf(Ports());
  for (int round = 0; round < 2; ++round) {
    FindingsByDetector findings;
    findings["pfc_storm"] = {Make(Severity::kCritical, kStormSource)};
    findings["link_flap"] = {Make(Severity::kCritical, kEth0)};
    EXPECT_EQ(rules.Apply(findings, node).size(), 1u);
    FindingsByDetector quiet;
    quiet["pfc_storm"] = {Make(Severity::kCritical, kStormSource)};
    EXPECT_TRUE(rules.Apply(quiet, node).empty());
    EXPECT_EQ(quiet["pfc_storm"].size(), 1u);  // no flap: the storm is the storm's
  }
  EXPECT_EQ((rules.counts()[{"pfc_storm", "storm_on_flapping_link"}]), 2u);
  MetricSink sink;
  rules.Export(sink);
  auto families = sink.TakeFamilies();
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "fabricwatch_findings_suppressed_total");
  EXPECT_EQ(families[0].metric.size(), 3u);  // every rule, from 0
}

}  // namespace
}  // namespace fabricwatch::detect
