// Fabric-shape scenarios (issue 20) through the simulator, the real collectors and every default
// detector, on simulated time (tests/testing/sim_pipeline.h): every preset stays quiet for hours
// when healthy; a node whose ports all run HDR is quiet without a manifest and raises one finding
// per port with a manifest that says NDR; an agent restarted through the state file keeps the
// learned expectation (it still knows the HCA that went missing before the restart).
// The per-fault detection cases are each fault scenario's `expect:` block (scenario_test.cc).

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>

#include "tests/testing/sim_pipeline.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::testing {
namespace {

using detect::Severity;

sim::Scenario Healthy(const std::string& preset, double seconds) {
  sim::Scenario scenario;
  scenario.source = "healthy " + preset;
  scenario.preset = preset;
  scenario.duration_s = seconds;
  return scenario;
}

std::unique_ptr<SimPipeline> Make(sim::Scenario scenario, const TempDir& dir,
                                  PipelineOptions options = {}) {
  auto pipeline = SimPipeline::Create(std::move(scenario), dir.Path("root"), std::move(options));
  EXPECT_TRUE(pipeline) << pipeline.error().ToString();
  return pipeline ? std::move(*pipeline) : nullptr;
}

std::string Transitions(const SimPipeline& p) {
  std::string out;
  for (const auto& t : p.transitions()) {
    out += std::string("  ") + (t.raised ? "raise " : "clear ") + t.detector + " {" +
           detect::EntityText(t.finding.entity) + "} at " + std::to_string(p.SimSeconds(t.time)) +
           ": " + t.finding.reason + "\n";
  }
  return out.empty() ? "  (none)\n" : out;
}

class HealthyPresetTest : public ::testing::TestWithParam<std::string> {};

// Hours of a healthy node of each preset: 2 min at 1 s steps, then 20 s steps (as
// QuietScenarioTest in scenario_test.cc). hgx-roce is QuietScenarioTest's "healthy" case.
TEST_P(HealthyPresetTest, stays_quiet_for_hours_with_no_configuration) {
  TempDir dir;
  auto p = Make(Healthy(GetParam(), 120), dir);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(120).ok());
  ASSERT_TRUE(p->RunUntil(3 * 3600, 20).ok());
  EXPECT_TRUE(p->transitions().empty()) << Transitions(*p);
  EXPECT_EQ(p->collector_errors(), 0u) << p->collector_error_text();
}

INSTANTIATE_TEST_SUITE_P(Presets, HealthyPresetTest,
                         ::testing::Values("hgx-ib", "hgx-ib-hdr", "roce-small"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ShapeScenarioTest, an_all_hdr_node_raises_one_finding_per_port_with_a_manifest_saying_ndr) {
  TempDir dir;
  const std::string manifest = dir.Path("sku.yaml");
  std::ofstream(manifest) << "# the HGX SKU: eight InfiniBand ports at 4X NDR\n"
                             "groups:\n  - link_layer: InfiniBand\n    count: 8\n"
                             "    lane_speed: NDR\n    width: 4\n";
  PipelineOptions options;
  options.detector_options["link_degraded"] = {{"shape-file", manifest}};
  auto p = Make(Healthy("hgx-ib-hdr", 120), dir, options);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(120).ok());
  std::set<std::string> ports;
  for (const auto& t : p->transitions()) {
    ASSERT_TRUE(t.raised) << Transitions(*p);
    EXPECT_EQ(t.detector, "link_degraded") << Transitions(*p);
    EXPECT_EQ(t.finding.severity, Severity::kWarning) << Transitions(*p);
    EXPECT_NE(t.finding.reason.find("manifest"), std::string::npos) << t.finding.reason;
    EXPECT_LE(p->SimSeconds(t.time), 32) << Transitions(*p);
    ports.insert(detect::EntityText(t.finding.entity));
  }
  EXPECT_EQ(ports.size(), 8u) << Transitions(*p);
  EXPECT_EQ(p->transitions().size(), 8u) << Transitions(*p);
}

TEST(ShapeScenarioTest, a_restart_keeps_the_learned_expectation) {
  // mlx5_4 disappears at +60 s for 3 min; the agent restarts at +90 s. The new agent has never
  // seen mlx5_4: only the history in the state file tells it the HCA is missing.
  TempDir dir;
  PipelineOptions options;
  options.state_file = dir.Path("state.json");
  auto scenario = sim::LoadScenario(SourcePath("tools/fabricsim/scenarios/hca_missing.yaml"));
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  auto p = Make(*scenario, dir, options);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(90).ok());
  p->Restart();
  ASSERT_TRUE(p->RunUntil(230).ok());
  const detect::EntityLabels entity{{"device", "mlx5_4"}, {"port", "1"}};
  bool raised = false;
  for (const auto& t : p->transitions()) {
    if (t.raised && t.detector == "link_degraded" && t.finding.entity == entity &&
        t.finding.severity == Severity::kCritical) {
      raised = true;
      // missing-for (2 min) counts again from the restart.
      EXPECT_GE(p->SimSeconds(t.time), 90 + 120);
      EXPECT_NE(t.finding.reason.find("missing"), std::string::npos) << t.finding.reason;
    }
  }
  EXPECT_TRUE(raised) << Transitions(*p) << p->log();
  // Without the state file the restarted agent knows nothing of mlx5_4.
  TempDir bare;
  auto q = Make(*scenario, bare);
  ASSERT_TRUE(q->RunUntil(90).ok());
  q->Restart();
  ASSERT_TRUE(q->RunUntil(230).ok());
  EXPECT_TRUE(q->transitions().empty()) << Transitions(*q);
}

}  // namespace
}  // namespace fabricwatch::testing
