#include "exporter/check/check_verdict.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "detectors/core/anomaly_tracker.h"

namespace fabricwatch::exporter::check {
namespace {

// Critical first, then by detector and entity, so the first line is the worst.
bool WorseFirst(const CheckFinding& a, const CheckFinding& b) {
  return std::make_tuple(-static_cast<int>(a.severity), a.detector, detect::EntityText(a.entity),
                         a.source) < std::make_tuple(-static_cast<int>(b.severity), b.detector,
                                                     detect::EntityText(b.entity), b.source);
}

std::string FormatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", seconds);
  return text;
}

size_t CountingFindings(const std::vector<CheckFinding>& findings) {
  return static_cast<size_t>(std::count_if(findings.begin(), findings.end(), [](const auto& f) {
    return f.severity != detect::Severity::kInfo;
  }));
}

}  // namespace

std::string_view FindingSourceName(FindingSource source) {
  switch (source) {
    case FindingSource::kLook:
      return "check";
    case FindingSource::kAgent:
      return "agent";
    case FindingSource::kProbe:
      return "probe";
  }
  return "check";
}

Verdict VerdictOf(const std::vector<CheckFinding>& findings) {
  Verdict verdict = Verdict::kHealthy;
  for (const CheckFinding& f : findings) {
    if (f.severity == detect::Severity::kCritical) return Verdict::kUnhealthy;
    if (f.severity == detect::Severity::kWarning) verdict = Verdict::kWarning;
  }
  return verdict;
}

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kHealthy:
      return "healthy";
    case Verdict::kWarning:
      return "warning";
    case Verdict::kUnhealthy:
      return "unhealthy";
  }
  return "unhealthy";
}

std::vector<CheckFinding> MergeFindings(std::vector<CheckFinding> look,
                                        std::vector<CheckFinding> agent) {
  using Key = std::tuple<std::string, detect::Severity, detect::EntityLabels>;
  // The entity's labels sorted: the agent's JSON object comes back with its keys sorted, the
  // look's in the detector's contract order ({device, port, netdev} against {device, netdev,
  // port}); the same entity must be one key either way.
  auto key = [](const CheckFinding& f) {
    detect::EntityLabels entity = f.entity;
    std::sort(entity.begin(), entity.end());
    return Key{f.detector, f.severity, std::move(entity)};
  };
  std::set<Key> seen;
  for (const CheckFinding& f : look) seen.insert(key(f));
  for (CheckFinding& f : agent) {
    if (seen.insert(key(f)).second) look.push_back(std::move(f));
  }
  std::sort(look.begin(), look.end(), WorseFirst);
  return look;
}

std::vector<std::string> FindingLines(const CheckReport& report) {
  std::vector<std::string> lines;
  for (const CheckFinding& f : report.findings) {
    if (f.severity == detect::Severity::kInfo) continue;
    // NHC pads the level and the program name with two spaces (nhc's die/log lines).
    std::string line = f.severity == detect::Severity::kCritical ? "ERROR:  " : "WARNING:  ";
    line += "fabricwatch check:  " + f.detector + ": " + f.reason;
    if (f.source == FindingSource::kAgent) line += " [agent]";
    lines.push_back(std::move(line));
  }
  return lines;
}

std::string SummaryLine(const CheckReport& report) {
  const size_t findings = CountingFindings(report.findings);
  return "fabricwatch check: " + std::string(VerdictName(VerdictOf(report.findings))) + " (" +
         std::to_string(report.ports) + (report.ports == 1 ? " port, " : " ports, ") +
         std::to_string(findings) + (findings == 1 ? " finding, " : " findings, ") +
         FormatSeconds(report.elapsed_seconds) + " s)";
}

std::vector<std::string> NoteLines(const CheckReport& report) {
  std::vector<std::string> lines;
  for (const std::string& what : report.unread) {
    lines.push_back("NOTE:  fabricwatch check:  could not read " + what);
  }
  for (const std::string& note : report.notes) {
    lines.push_back("NOTE:  fabricwatch check:  " + note);
  }
  return lines;
}

std::string ReportJson(const CheckReport& report) {
  const Verdict verdict = VerdictOf(report.findings);
  nlohmann::json findings = nlohmann::json::array();
  for (const CheckFinding& f : report.findings) {
    nlohmann::json entity = nlohmann::json::object();
    for (const auto& [name, value] : f.entity) entity[name] = value;
    nlohmann::json evidence = nlohmann::json::object();
    for (const detect::Evidence& e : f.evidence) evidence[e.name] = e.value;
    findings.push_back({{"detector", f.detector},
                        {"severity", detect::SeverityName(f.severity)},
                        {"entity", entity},
                        {"reason", f.reason},
                        {"evidence", evidence},
                        {"source", FindingSourceName(f.source)}});
  }
  nlohmann::json out{{"verdict", VerdictName(verdict)},
                     {"exit_code", ExitCode(verdict)},
                     {"ports", report.ports},
                     {"findings", findings},
                     {"unread", report.unread},
                     {"notes", report.notes},
                     {"agent", {{"url", report.agent_url}, {"answered", report.agent_answered}}},
                     {"elapsed_seconds", report.elapsed_seconds}};
  // Reasons quote sysfs and kernel log strings: invalid UTF-8 is replaced, never thrown on.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fabricwatch::exporter::check
