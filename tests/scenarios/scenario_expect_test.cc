// The `expect:` block of a scenario file (tools/fabricsim/scenario.h): what the scenario tests
// read from it, and the errors that name the file, the line and the key of a bad one, so a typo
// fails the load instead of asserting less.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tools/fabricsim/scenario.h"

namespace fabricwatch::sim {
namespace {

constexpr std::string_view kEvents = R"(preset: hgx-ib
duration: 2m
events:
  - at: 20s
    fault: link_flap
    device: mlx5_2
    count: 5
    period: 2s
)";

constexpr std::string_view kFinding = R"(expect:
  detector: link_flap
  severity: critical
  entity: {device: $device, port: 1}
  drain_eligible: true
  within: 9s
  within_reason: 5th down at +8 s
  run: 1m
)";

Result<Scenario> Parse(std::string_view expect) {
  return ParseScenario(std::string(kEvents) + std::string(expect), "flap.yaml");
}

// The error of `expect` (which must fail), for matching.
std::string ErrorOf(std::string_view expect) {
  auto scenario = Parse(expect);
  EXPECT_FALSE(scenario) << expect;
  return scenario ? "" : scenario.error().ToString();
}

TEST(ScenarioExpectTest, a_finding_reads_every_field_with_the_first_events_fault) {
  auto scenario =
      Parse(std::string(kFinding) +
            "  not_before: 8s\n  one_finding: true\n  restart: {at: 45s, until: 110s}\n");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  ASSERT_TRUE(scenario->expect);
  const ScenarioExpectation& e = *scenario->expect;
  EXPECT_FALSE(e.quiet);
  EXPECT_EQ(e.fault, "link_flap");
  EXPECT_EQ(e.detector, "link_flap");
  EXPECT_EQ(e.severity, "critical");
  const std::vector<std::pair<std::string, std::string>> entity = {{"device", "$device"},
                                                                   {"port", "1"}};
  EXPECT_EQ(e.entity, entity);
  EXPECT_TRUE(e.drain_eligible);
  EXPECT_EQ(e.within_s, 9);
  EXPECT_EQ(e.within_reason, "5th down at +8 s");
  ASSERT_TRUE(e.not_before_s);
  EXPECT_EQ(*e.not_before_s, 8);
  EXPECT_EQ(e.run_s, 60);
  EXPECT_TRUE(e.one_finding);
  EXPECT_EQ(e.at_raise, "");
  ASSERT_TRUE(e.restart);
  EXPECT_EQ(e.restart->at_s, 45);
  EXPECT_EQ(e.restart->until_s, 110);
}

TEST(ScenarioExpectTest, the_entity_keeps_the_files_label_order) {
  auto scenario = Parse(R"(expect:
  detector: config_drift
  severity: warning
  entity: {netdev: $netdev, priority: 3, role: np, setting: ecn}
  drain_eligible: false
  within: 32s
  within_reason: hold-for
  run: 180s
)");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  const std::vector<std::pair<std::string, std::string>> entity = {
      {"netdev", "$netdev"}, {"priority", "3"}, {"role", "np"}, {"setting", "ecn"}};
  EXPECT_EQ(scenario->expect->entity, entity);
  EXPECT_FALSE(scenario->expect->drain_eligible);
  EXPECT_FALSE(scenario->expect->one_finding);
  EXPECT_FALSE(scenario->expect->not_before_s);
  EXPECT_FALSE(scenario->expect->restart);
}

TEST(ScenarioExpectTest, a_quiet_scenario_may_allow_one_documented_finding) {
  auto scenario = Parse("expect:\n  quiet: true\n  allow: {detector: link_flap, severity: info}\n");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  ASSERT_TRUE(scenario->expect);
  EXPECT_TRUE(scenario->expect->quiet);
  ASSERT_TRUE(scenario->expect->allow);
  EXPECT_EQ(scenario->expect->allow->detector, "link_flap");
  EXPECT_EQ(scenario->expect->allow->severity, "info");
}

TEST(ScenarioExpectTest, a_scenario_without_the_block_expects_nothing) {
  auto scenario = Parse("");
  ASSERT_TRUE(scenario) << scenario.error().ToString();
  EXPECT_FALSE(scenario->expect);
}

TEST(ScenarioExpectTest, a_bad_block_is_an_error_naming_the_file_line_and_key) {
  struct Case {
    std::string expect;
    std::string error;  // a part of the message
  };
  const std::string finding(kFinding);
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = finding;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  const Case cases[] = {
      {"expect: [link_flap]\n", "flap.yaml:9:9: expect: expected a mapping"},
      {finding + "  whithin: 3s\n",
       "flap.yaml:17:3: expect.whithin: unknown key (known: detector, severity,"},
      {replace("  run: 1m\n", ""), "flap.yaml:10:3: expect: missing expect.run"},
      {replace("severity: critical", "severity: fatal"),
       "flap.yaml:11:13: expect.severity: unknown severity \"fatal\""},
      {replace("drain_eligible: true", "drain_eligible: yes"), "expect.drain_eligible"},
      {replace("within: 9s", "within: soon"), "flap.yaml:14:11: expect.within:"},
      {replace("within: 9s", "within: 2m"), "within: must be positive and no longer than run:"},
      {replace("entity: {device: $device, port: 1}", "entity: mlx5_2"),
       "flap.yaml:12:11: expect.entity: expected a mapping"},
      {replace("entity: {device: $device, port: 1}", "entity: {device: [a]}"),
       "expect.entity.device: expected text"},
      {finding + "  fault: link_down\n",
       "flap.yaml:17:10: expect.fault: no event of the scenario injects \"link_down\""},
      {finding + "  at_raise: hotter\n", "expect.at_raise: unknown check \"hotter\""},
      {finding + "  not_before: 10s\n", "expect.not_before: after within:"},
      {finding + "  restart: {at: 45s}\n", "expect.restart: expected {at:, until:}"},
      {finding + "  restart: {at: 45s, until: 45s}\n", "at: must come before until:"},
      {finding + "  allow: {detector: link_flap, severity: info}\n",
       "expect.allow: only a quiet: true scenario"},
      {"expect:\n  quiet: true\n  detector: link_flap\n",
       "flap.yaml:11:3: expect.detector: a quiet scenario expects nothing but allow:"},
      {"expect:\n  quiet: true\n  allow: {detector: link_flap}\n",
       "expect.allow: needs detector: and severity:"},
      {"expect:\n  quiet: true\n  allow: {detector: link_flap, severity: info, why: x}\n",
       "flap.yaml:11:48: expect.allow.why: unknown key (known: detector, severity)"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(c.expect);
    EXPECT_NE(error.find(c.error), std::string::npos) << c.expect << "\ngave: " << error;
  }
}

TEST(ScenarioExpectTest, the_named_checks_are_listed) {
  ASSERT_EQ(ExpectationChecks().size(), 1u);
  EXPECT_EQ(ExpectationChecks()[0], "module_below_high_warning");
}

}  // namespace
}  // namespace fabricwatch::sim
