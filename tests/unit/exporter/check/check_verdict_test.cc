// `fabricwatch check`'s verdict (exporter/check/check_verdict.h, docs/check.md): exit codes, the
// NHC-style lines, the summary, the JSON object, the merge with the running agent's findings and
// the parsing of its /api/v1/anomalies answer.

#include "exporter/check/check_verdict.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "exporter/check/check_agent_api.h"
#include "exporter/check/check_look.h"
#include "exporter/config/config.h"

namespace fabricwatch::exporter::check {
namespace {

using detect::Severity;

CheckFinding Finding(std::string detector, Severity severity, std::string device,
                     std::string reason, FindingSource source = FindingSource::kLook) {
  return CheckFinding{.detector = std::move(detector),
                      .severity = severity,
                      .entity = {{"device", std::move(device)}, {"port", "1"}},
                      .reason = std::move(reason),
                      .evidence = {{"lanes", 1}},
                      .source = source};
}

TEST(CheckVerdictTest, exit_codes_follow_the_worst_finding) {
  EXPECT_EQ(VerdictOf({}), Verdict::kHealthy);
  EXPECT_EQ(ExitCode(VerdictOf({})), 0);
  EXPECT_EQ(VerdictOf({Finding("x", Severity::kInfo, "mlx5_0", "info")}), Verdict::kHealthy);
  EXPECT_EQ(ExitCode(VerdictOf({Finding("x", Severity::kWarning, "mlx5_0", "w")})), 1);
  EXPECT_EQ(ExitCode(VerdictOf({Finding("x", Severity::kWarning, "mlx5_0", "w"),
                                Finding("y", Severity::kCritical, "mlx5_1", "c")})),
            2);
  EXPECT_EQ(VerdictName(Verdict::kUnhealthy), "unhealthy");
}

TEST(CheckVerdictTest, a_healthy_node_prints_the_summary_alone) {
  CheckReport report;
  report.ports = 8;
  report.elapsed_seconds = 1.26;
  EXPECT_TRUE(FindingLines(report).empty());
  EXPECT_EQ(SummaryLine(report), "fabricwatch check: healthy (8 ports, 0 findings, 1.3 s)");
  EXPECT_TRUE(NoteLines(report).empty());
}

TEST(CheckVerdictTest, findings_print_as_nhc_lines_critical_first) {
  CheckReport report;
  report.ports = 1;
  report.elapsed_seconds = 0.04;
  report.findings = MergeFindings(
      {Finding("config_drift", Severity::kWarning, "mlx5_1", "eth1: MTU 1500, expected 9000"),
       Finding("link_degraded", Severity::kCritical, "mlx5_0",
               "mlx5_0 port 1 lost lanes: trained at 1X NDR"),
       Finding("driver_fault", Severity::kInfo, "mlx5_2", "not shown")},
      {});
  const std::vector<std::string> lines = FindingLines(report);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(
      lines[0],
      "ERROR:  fabricwatch check:  link_degraded: mlx5_0 port 1 lost lanes: trained at 1X NDR");
  EXPECT_EQ(lines[1], "WARNING:  fabricwatch check:  config_drift: eth1: MTU 1500, expected 9000");
  EXPECT_EQ(SummaryLine(report), "fabricwatch check: unhealthy (1 port, 2 findings, 0.0 s)");
}

TEST(CheckVerdictTest, the_agents_findings_are_merged_once_and_marked) {
  const auto look = Finding("link_degraded", Severity::kCritical, "mlx5_0", "from the look");
  const auto same = Finding("link_degraded", Severity::kCritical, "mlx5_0", "from the agent",
                            FindingSource::kAgent);
  const auto flap = Finding("link_flap", Severity::kWarning, "mlx5_3", "mlx5_3 port 1: flapping",
                            FindingSource::kAgent);
  CheckReport report;
  report.findings = MergeFindings({look}, {same, flap});
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findings[0].reason, "from the look");
  EXPECT_EQ(FindingLines(report)[1],
            "WARNING:  fabricwatch check:  link_flap: mlx5_3 port 1: flapping [agent]");
}

TEST(CheckVerdictTest, a_three_label_entity_is_merged_whatever_the_order_of_its_labels) {
  // The look's entity in the contract order; the agent's from its JSON, keys sorted.
  CheckFinding look;
  look.detector = "config_drift";
  look.severity = Severity::kWarning;
  look.entity = {{"netdev", "enp54s0f0np0"}, {"device", "mlx5_0"}, {"port", "1"}};
  look.reason = "from the look";
  CheckFinding agent = look;
  agent.entity = {{"device", "mlx5_0"}, {"netdev", "enp54s0f0np0"}, {"port", "1"}};
  agent.reason = "from the agent";
  agent.source = FindingSource::kAgent;
  CheckFinding other = agent;  // another port: kept
  other.entity = {{"device", "mlx5_0"}, {"netdev", "enp54s0f1np1"}, {"port", "2"}};
  const auto merged = MergeFindings({look}, {agent, other});
  ASSERT_EQ(merged.size(), 2u);
  const auto port1 = std::find_if(merged.begin(), merged.end(), [](const CheckFinding& f) {
    return f.reason == "from the look";
  });
  ASSERT_NE(port1, merged.end());
  EXPECT_EQ(port1->entity, look.entity);  // the look's own order is kept for printing
  const auto port2 = port1 == merged.begin() ? merged.begin() + 1 : merged.begin();
  EXPECT_EQ(port2->entity, other.entity);
  EXPECT_EQ(port2->source, FindingSource::kAgent);
}

TEST(CheckVerdictTest, what_could_not_be_read_is_a_note_line_each) {
  CheckReport report;
  report.unread = {"collector kmsg: /dev/kmsg: permission denied"};
  report.notes = {"no answer from the agent (refused)"};
  const auto lines = NoteLines(report);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(
      lines[0],
      "NOTE:  fabricwatch check:  could not read collector kmsg: /dev/kmsg: permission denied");
  EXPECT_EQ(lines[1], "NOTE:  fabricwatch check:  no answer from the agent (refused)");
}

TEST(CheckVerdictTest, json_has_verdict_findings_unread_and_elapsed) {
  CheckReport report;
  report.ports = 8;
  report.elapsed_seconds = 0.5;
  report.agent_url = "http://127.0.0.1:9868";
  report.unread = {"the state file: permission denied"};
  report.findings = {Finding("link_degraded", Severity::kCritical, "mlx5_0", "lost lanes")};
  const nlohmann::json j = nlohmann::json::parse(ReportJson(report));
  EXPECT_EQ(j["verdict"], "unhealthy");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["ports"], 8);
  EXPECT_EQ(j["elapsed_seconds"], 0.5);
  EXPECT_EQ(j["unread"][0], "the state file: permission denied");
  EXPECT_EQ(j["agent"]["url"], "http://127.0.0.1:9868");
  EXPECT_EQ(j["agent"]["answered"], false);
  ASSERT_EQ(j["findings"].size(), 1u);
  const nlohmann::json& f = j["findings"][0];
  EXPECT_EQ(f["detector"], "link_degraded");
  EXPECT_EQ(f["severity"], "critical");
  EXPECT_EQ(f["entity"]["device"], "mlx5_0");
  EXPECT_EQ(f["entity"]["port"], "1");
  EXPECT_EQ(f["reason"], "lost lanes");
  EXPECT_EQ(f["evidence"]["lanes"], 1);
  EXPECT_EQ(f["source"], "check");
}

TEST(CheckVerdictTest, json_replaces_invalid_utf8_rather_than_throwing) {
  CheckReport report;
  report.findings = {Finding("driver_fault", Severity::kWarning, "mlx5_0", "bad \xff byte")};
  EXPECT_NO_THROW(nlohmann::json::parse(ReportJson(report)));
}

TEST(CheckAgentApiTest, parses_the_agents_anomalies) {
  const auto findings = ParseAgentAnomalies(R"({"anomalies": [
      {"detector": "pfc_storm", "severity": "critical",
       "entity": {"netdev": "eth0", "priority": "3", "role": "source"},
       "evidence": {"tx_pause_ratio": 1.0}, "reason": "eth0 priority 3: storm",
       "started": "2026-11-28T00:00:00Z", "log": [], "jobs": []}]})");
  ASSERT_TRUE(findings) << findings.error().ToString();
  ASSERT_EQ(findings->size(), 1u);
  const CheckFinding& f = findings->front();
  EXPECT_EQ(f.detector, "pfc_storm");
  EXPECT_EQ(f.severity, Severity::kCritical);
  EXPECT_EQ(f.source, FindingSource::kAgent);
  EXPECT_EQ(f.reason, "eth0 priority 3: storm");
  EXPECT_EQ(f.entity.size(), 3u);
  ASSERT_EQ(f.evidence.size(), 1u);
  EXPECT_EQ(f.evidence[0].name, "tx_pause_ratio");
}

TEST(CheckAgentApiTest, refuses_what_is_not_the_agents_answer) {
  EXPECT_FALSE(ParseAgentAnomalies("<html>"));
  EXPECT_FALSE(ParseAgentAnomalies(R"({"anomalies": {}})"));
  EXPECT_FALSE(ParseAgentAnomalies(R"({"anomalies": [{"severity": "critical"}]})"));
  EXPECT_FALSE(ParseAgentAnomalies(R"({"anomalies": [{"detector": "x", "severity": "dire"}]})"));
  auto empty = ParseAgentAnomalies(R"({"anomalies": []})");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
}

TEST(CheckAgentApiTest, nothing_answering_is_unavailable_and_only_http_is_asked) {
  // Port 9 (discard) on loopback: nothing listens there on a test machine.
  auto none = FetchAgentFindings("http://127.0.0.1:9", std::chrono::milliseconds(500));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnavailable);
  auto https = FetchAgentFindings("https://127.0.0.1:9868", std::chrono::milliseconds(500));
  ASSERT_FALSE(https);
  EXPECT_EQ(https.error().code(), StatusCode::kInvalidArgument);
}

TEST(CheckLookTest, the_longest_hold_follows_the_configuration) {
  auto parsed = ParseCommandLine(1, std::vector<const char*>{"fabricwatch"}.data());
  ASSERT_TRUE(parsed);
  auto hold = LongestHold(parsed->config);
  ASSERT_TRUE(hold) << hold.error().ToString();
  // pcie_degraded downtrain-for and optical_drift threshold-warning-for: 5m by default.
  EXPECT_EQ(*hold, std::chrono::minutes(5));
  const char* argv[] = {"fabricwatch", "--detector.pcie_degraded.downtrain-for=20m"};
  auto longer = ParseCommandLine(2, argv);
  ASSERT_TRUE(longer) << longer.error().ToString();
  EXPECT_EQ(*LongestHold(longer->config), std::chrono::minutes(20));
  // The rate-based detectors are not among the one-look ones.
  for (const OneLookDetector& d : OneLookDetectors()) {
    EXPECT_NE(d.name, "link_flap");
    EXPECT_NE(d.name, "pfc_storm");
    EXPECT_NE(d.name, "ber_growth");
  }
}

}  // namespace
}  // namespace fabricwatch::exporter::check
