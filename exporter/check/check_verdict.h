#pragma once
// `fabricwatch check`'s verdict (docs/check.md): pure functions from the findings of one look
// (and of the running agent, and of the probe) to the exit code, the NHC-style lines and the
// JSON object. No I/O, so the contract Slurm and Kubernetes rely on is tested on values
// (tests/unit/exporter/check/check_verdict_test.cc).
//
//   exit 0 healthy: no warning or critical finding (info findings do not count);
//   exit 1 warning: at least one warning, no critical;
//   exit 2 unhealthy: at least one critical.
// Text: one line per finding, critical first, in the style of LBNL NHC's log lines
//   ERROR:  fabricwatch check:  link_degraded: mlx5_0 port 1: <reason>
//   WARNING:  fabricwatch check:  config_drift: eth2: <reason> [agent]
// (a detector's reason names its entity; "[agent]": reported by the running agent).
// then the summary line
//   fabricwatch check: healthy (8 ports, 0 findings, 1.3 s)
// What could not be read and other notes are separate lines (NOTE:), written to stderr by the
// caller, so a healthy node's stdout is the summary alone.

#include <string>
#include <string_view>
#include <vector>

#include "detectors/core/detector.h"

namespace fabricwatch::exporter::check {

// Where a finding comes from.
enum class FindingSource {
  kLook,   // this run's own look at the node
  kAgent,  // the running agent's /api/v1/anomalies
  kProbe,  // --check.probe
};
std::string_view FindingSourceName(FindingSource source);  // "check", "agent", "probe"

struct CheckFinding {
  std::string detector;
  detect::Severity severity = detect::Severity::kWarning;
  detect::EntityLabels entity;
  std::string reason;
  std::vector<detect::Evidence> evidence;
  FindingSource source = FindingSource::kLook;
};

struct CheckReport {
  std::vector<CheckFinding> findings;
  // What could not be read (a collector's error, a refused capability, the state file), one
  // line each; the verdict is decided from the rest.
  std::vector<std::string> unread;
  // Other lines for the operator: the agent did not answer, a probe was unavailable.
  std::vector<std::string> notes;
  size_t ports = 0;  // RDMA ports seen
  double elapsed_seconds = 0;
  std::string agent_url;        // "" when not asked
  bool agent_answered = false;  // the agent's findings are part of `findings`
};

enum class Verdict { kHealthy = 0, kWarning = 1, kUnhealthy = 2 };
Verdict VerdictOf(const std::vector<CheckFinding>& findings);
std::string_view VerdictName(Verdict verdict);  // "healthy", "warning", "unhealthy"
inline int ExitCode(Verdict verdict) { return static_cast<int>(verdict); }

// The agent's findings merged into the look's: a finding both report (detector, severity,
// entity) is kept once, as the look saw it. Sorted: critical first, then detector, entity.
std::vector<CheckFinding> MergeFindings(std::vector<CheckFinding> look,
                                        std::vector<CheckFinding> agent);

// The stdout lines: one per warning or critical finding, then the summary.
std::vector<std::string> FindingLines(const CheckReport& report);
std::string SummaryLine(const CheckReport& report);
// The stderr lines: what could not be read, then the notes.
std::vector<std::string> NoteLines(const CheckReport& report);

// --check.output=json: one object, one line.
std::string ReportJson(const CheckReport& report);

}  // namespace fabricwatch::exporter::check
