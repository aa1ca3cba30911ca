// Cross-detector rules through the whole detection path (issue 22 item 7): a PFC storm on a
// flapping link is one fault and raises one finding, the flap's.
#include <gtest/gtest.h>

#include <string>

#include "detectors/core/anomaly_tracker.h"
#include "tests/testing/sim_pipeline.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::testing {
namespace {

using detect::Severity;

std::string Transitions(const SimPipeline& p) {
  std::string out;
  for (const auto& t : p.transitions()) {
    out += std::string(t.raised ? "  raise " : "  clear ") + t.detector + " " +
           std::string(detect::SeverityName(t.finding.severity)) + " {" +
           detect::EntityText(t.finding.entity) + "} t=" + std::to_string(p.SimSeconds(t.time)) +
           ": " + t.finding.reason + "\n";
  }
  return out.empty() ? "  (none)\n" : out;
}

double Suppressed(SimPipeline& p, const std::string& detector, const std::string& rule) {
  for (const auto& family : p.engine().Collect()) {
    if (family.name != "fabricwatch_findings_suppressed_total") continue;
    for (const auto& m : family.metric) {
      bool d = false, r = false;
      for (const auto& l : m.label) {
        d |= l.name == "detector" && l.value == detector;
        r |= l.name == "rule" && l.value == rule;
      }
      if (d && r) return m.counter.value;
    }
  }
  return -1;
}

TEST(CrossRulesScenarioTest, storm_on_a_flapping_link_raises_only_the_flap) {
  TempDir dir;
  auto scenario = sim::LoadScenario(SourcePath("tools/fabricsim/scenarios/storm_on_flap.yaml"));
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  auto created = SimPipeline::Create(std::move(*scenario), dir.Path("root"));
  ASSERT_TRUE(created) << created.error().ToString();
  SimPipeline& p = **created;
  std::string netdev, device;
  bool storm_evidence = false;
  for (double t = 1; t <= 180; t += 1) {
    ASSERT_TRUE(p.Step(t).ok());
    for (const auto& i : p.injections()) {
      if (i.fault == "link_flap") netdev = i.netdev, device = i.device;
    }
    for (const auto& a : p.engine().tracker().Active()) {
      if (a.detector != "link_flap") continue;
      for (const auto& e : a.finding.evidence) storm_evidence |= e.name == "pfc_storm_suppressed";
    }
  }
  ASSERT_FALSE(netdev.empty());
  ASSERT_TRUE(p.RunUntil(3600, 20).ok());
  size_t criticals = 0;
  for (const auto& t : p.transitions()) {
    if (!t.raised) continue;
    EXPECT_EQ(t.detector, "link_flap") << Transitions(p);
    // A RoCE netdev's finding names its RDMA port too (issue 34).
    EXPECT_EQ(t.finding.entity,
              (detect::EntityLabels{{"device", device}, {"port", "1"}, {"netdev", netdev}}))
        << Transitions(p);
    if (t.finding.severity == Severity::kCritical) {
      ++criticals;
      EXPECT_TRUE(t.finding.drain_eligible);
    }
  }
  EXPECT_EQ(criticals, 1u) << Transitions(p);
  // Not vacuous: the storm was there, and was attached to the flap as evidence.
  EXPECT_GE(Suppressed(p, "pfc_storm", "storm_on_flapping_link"), 1) << Transitions(p);
  EXPECT_TRUE(storm_evidence) << Transitions(p);
  EXPECT_EQ(p.collector_errors(), 0u) << p.collector_error_text();
}

}  // namespace
}  // namespace fabricwatch::testing
