// Configuration-drift scenarios (issue 21) through the simulator, the real collectors and every
// default detector, on simulated time (tests/testing/sim_pipeline.h): the configured expectation
// (roce-priority, mtu, trust) is authoritative end to end — quiet when the node matches it, one
// finding per port and setting when it does not — findings clear once the setting is fixed, and
// the MRRS half of mps_mismatch is named on the NIC function. The per-fault detection cases are
// each fault scenario's `expect:` block, run by scenario_test.cc with the other detectors';
// healthy presets stay quiet in shape_scenario_test.cc and scenario_test.cc's QuietScenarioTest.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tests/testing/sim_pipeline.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::testing {
namespace {

using detect::AnomalyTransition;

sim::Scenario Shipped(const std::string& name) {
  auto scenario = sim::LoadScenario(SourcePath("tools/fabricsim/scenarios/" + name + ".yaml"));
  EXPECT_TRUE(scenario) << scenario.error().ToString();
  return scenario ? *scenario : sim::Scenario{};
}

sim::Scenario Healthy(double seconds) {
  sim::Scenario scenario;
  scenario.source = "healthy hgx-roce";
  scenario.preset = "hgx-roce";
  scenario.duration_s = seconds;
  return scenario;
}

std::unique_ptr<SimPipeline> Make(sim::Scenario scenario, const TempDir& dir,
                                  const detect::DetectorOptions& config_drift = {}) {
  PipelineOptions options;
  options.detector_options["config_drift"] = config_drift;
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

std::string Label(const AnomalyTransition& t, const std::string& name) {
  for (const auto& [key, value] : t.finding.entity) {
    if (key == name) return value;
  }
  return "";
}

TEST(ConfigScenarioTest, a_node_that_matches_its_configuration_is_quiet) {
  TempDir dir;
  auto p = Make(Healthy(600), dir, {{"roce-priority", "3"}, {"mtu", "9000"}, {"trust", "dscp"}});
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(600).ok());
  EXPECT_TRUE(p->transitions().empty()) << Transitions(*p);
  EXPECT_EQ(p->collector_errors(), 0u) << p->collector_error_text();
}

TEST(ConfigScenarioTest, the_configuration_overrides_eight_agreeing_ports) {
  // Every port runs PFC on 3 and MTU 9000; the configuration asks for priority 4 and MTU 4200.
  // On each of the eight RoCE ports: PFC off on 4 (the configured priority) and the MTU. PFC on
  // 3 is not named: all the siblings agree on it, and the configuration does not forbid a
  // second lossless priority.
  TempDir dir;
  auto p = Make(Healthy(120), dir, {{"roce-priority", "4"}, {"mtu", "4200"}});
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(120).ok());
  std::set<std::string> pfc4, mtu, other;
  for (const auto& t : p->transitions()) {
    ASSERT_TRUE(t.raised) << Transitions(*p);
    ASSERT_EQ(t.detector, "config_drift") << Transitions(*p);
    const std::string setting = Label(t, "setting");
    if (setting == "pfc" && Label(t, "priority") == "4") {
      pfc4.insert(Label(t, "netdev"));
    } else if (setting == "mtu") {
      mtu.insert(Label(t, "netdev"));
      EXPECT_NE(t.finding.reason.find("MTU 9000, expected 4200 from the configuration"),
                std::string::npos)
          << t.finding.reason;
    } else {
      other.insert(detect::EntityText(t.finding.entity));
    }
  }
  EXPECT_EQ(pfc4.size(), 8u) << Transitions(*p);
  EXPECT_EQ(mtu.size(), 8u) << Transitions(*p);
  EXPECT_TRUE(other.empty()) << Transitions(*p);
}

TEST(ConfigScenarioTest, pfc_off_clears_after_the_fix_and_mrrs_is_named_on_the_nic) {
  TempDir dir;
  auto p = Make(Shipped("pfc_off"), dir);
  ASSERT_NE(p, nullptr);
  ASSERT_TRUE(p->RunUntil(360).ok());
  // Injected at 60 s for 4 min: raised at +30 s, cleared within clear-for (10 s) + 2 s of 300 s.
  ASSERT_EQ(p->transitions().size(), 2u) << Transitions(*p);
  EXPECT_FALSE(p->transitions()[1].raised);
  EXPECT_LE(p->SimSeconds(p->transitions()[1].time), 300 + 10 + 2) << Transitions(*p);

  TempDir second;
  auto mrrs = Make(Shipped("mps_mismatch"), second);
  ASSERT_NE(mrrs, nullptr);
  ASSERT_TRUE(mrrs->RunUntil(480).ok());
  bool named = false;
  for (const auto& t : mrrs->transitions()) {
    EXPECT_EQ(t.detector, "config_drift") << Transitions(*mrrs);
    if (t.raised && Label(t, "setting") == "max_read_request") {
      EXPECT_EQ(Label(t, "role"), "nic") << Transitions(*mrrs);
      EXPECT_EQ(t.finding.value, 4096);
      named = true;
    }
  }
  EXPECT_TRUE(named) << Transitions(*mrrs);
}

}  // namespace
}  // namespace fabricwatch::testing
