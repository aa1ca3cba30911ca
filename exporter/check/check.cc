#include "exporter/check/check.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "base/duration.h"
#include "exporter/check/check_agent_api.h"
#include "exporter/check/check_look.h"
#include "exporter/check/check_verdict.h"
#include "exporter/collector_sources.h"
#include "exporter/config/config.h"
#include "exporter/logging.h"
#include "exporter/pipeline/event_sources.h"
#include "exporter/probe/probe.h"

namespace fabricwatch::exporter::check {
namespace {

// Not a verdict: the command line or the configuration could not be used (docs/check.md).
constexpr int kUsageExit = 3;
// --check.agent-timeout bounds: curl takes 0 as "no timeout" (CURLOPT_TIMEOUT_MS), and a check
// in a prolog or a readiness probe must not wait long for an agent that does not answer.
constexpr auto kMaxAgentTimeout = std::chrono::seconds(30);

constexpr std::string_view kUsage =
    "Usage: fabricwatch check [agent flags] [--check.output=text|json] "
    "[--check.agent-url=URL|\"\"] [--check.agent-timeout=DURATION] [--check.probe]\n"
    "\n"
    "A one-shot health verdict of this node (docs/check.md): every enabled collector once, the\n"
    "detectors that decide from one look (link shape, configuration, PCIe, kernel log, module\n"
    "thresholds), the running agent's active findings, and optionally the active RDMA probe.\n"
    "Exit 0 healthy, 1 warning, 2 unhealthy, 3 the check could not run.\n"
    "\n"
    "  --check.output=text|json     NHC-style lines and a summary (default), or one JSON object\n"
    "  --check.agent-url=URL        the running agent, asked for its active findings\n"
    "                               (default http://127.0.0.1:9868; \"\" does not ask)\n"
    "  --check.agent-timeout=DUR    how long the agent may take to answer, above 0 and at most\n"
    "                               30s (default 1s)\n"
    "  --check.probe                probe every ACTIVE RDMA port (probe: section, --probe.*)\n"
    "\n"
    "Every agent flag applies (--path.sysfs, --config.file, --state.file, --shape.file, the\n"
    "--collector.* and --detector.* flags); the agent's own help follows.\n\n";

struct CheckOptions {
  bool json = false;
  std::string agent_url = std::string(kDefaultAgentUrl);
  std::chrono::milliseconds agent_timeout{1000};
  bool probe = false;
  bool help = false;
};

// Takes the --check.* flags out of argv (both --flag=value and --flag value); the rest is the
// agent's command line. Errors name the flag.
Result<CheckOptions> TakeCheckFlags(int argc, char** argv, std::vector<char*>& rest) {
  CheckOptions options;
  rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg(argv[i]);
    if (arg == "--help" || arg == "-h") options.help = true;
    if (!arg.starts_with("--check.")) {
      rest.push_back(argv[i]);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string_view name = arg.substr(0, eq);
    if (name == "--check.probe") {
      if (eq != std::string_view::npos && arg.substr(eq + 1) != "true") {
        if (arg.substr(eq + 1) != "false") {
          return Error(StatusCode::kInvalidArgument, "--check.probe: expected true or false");
        }
        continue;
      }
      options.probe = true;
      continue;
    }
    std::string value;
    if (eq != std::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      return Error(StatusCode::kInvalidArgument, std::string(name) + ": needs a value");
    }
    if (name == "--check.output") {
      if (value != "text" && value != "json") {
        return Error(StatusCode::kInvalidArgument,
                     "--check.output=\"" + value + "\": expected text or json");
      }
      options.json = value == "json";
    } else if (name == "--check.agent-url") {
      options.agent_url = value;
    } else if (name == "--check.agent-timeout") {
      auto timeout = ParseDuration(value);
      if (!timeout) return Error(timeout.error().WithContext("--check.agent-timeout"));
      if (timeout->count() <= 0 || *timeout > kMaxAgentTimeout) {
        return Error(StatusCode::kInvalidArgument,
                     "--check.agent-timeout=" + value + ": must be above 0 and at most 30s");
      }
      options.agent_timeout = *timeout;
    } else {
      return Error(StatusCode::kInvalidArgument,
                   "unknown flag " + std::string(name) + " (see fabricwatch check --help)");
    }
  }
  return options;
}

// --check.probe: every ACTIVE RDMA port the look saw, one at a time (the probe moves real
// traffic; exporter/probe/probe.h). Failed is critical, degraded a warning; unavailable says
// why and changes nothing.
void ProbePorts(const Config& config, const std::vector<SeenPort>& ports, CheckReport& report) {
  // A replay root's ports are another node's: a device of the same name here is not that port.
  if (!ResolvedRoots(config).host) {
    report.notes.push_back("--check.probe: " + config.roots.sysfs +
                           " is a replay root, not this host's /sys; its ports are not probed");
    return;
  }
  std::unique_ptr<probe::PortProber> prober;
  for (const SeenPort& seen : ports) {
    if (!seen.active) continue;
    if (prober == nullptr) prober = probe::NewVerbsProber();
    probe::ProbeTarget target{.port = seen.port, .partner = std::nullopt};
    if (auto partner = config.probe.partners.find(seen.port);
        partner != config.probe.partners.end()) {
      target.partner = partner->second;
    }
    const probe::ProbeMeasurement m = prober->Measure(target, config.probe.options);
    const probe::ProbeVerdict verdict =
        probe::ClassifyProbe(m, seen.expected_bits_per_second, config.probe.degraded_fraction);
    const std::string name = seen.port.device + "/" + std::to_string(seen.port.port);
    if (verdict == probe::ProbeVerdict::kUnavailable) {
      report.notes.push_back("probe of " + name + " unavailable: " + m.error);
      continue;
    }
    if (verdict == probe::ProbeVerdict::kHealthy) continue;
    CheckFinding f;
    f.detector = "probe";
    f.source = FindingSource::kProbe;
    f.severity = verdict == probe::ProbeVerdict::kFailed ? detect::Severity::kCritical
                                                         : detect::Severity::kWarning;
    f.entity = {{"device", seen.port.device}, {"port", std::to_string(seen.port.port)}};
    const double gbps = m.bandwidth_bytes_per_second * 8 / 1e9;
    f.reason = name + ": " + m.path + " probe " + std::string(probe::ProbeVerdictName(verdict)) +
               (verdict == probe::ProbeVerdict::kFailed
                    ? " (" + std::string(probe::ProbeOutcomeName(m.outcome)) + "): " + m.error
                    : ": " + detect::FormatFixed(gbps) + " Gb/s, expected " +
                          detect::FormatFixed(seen.expected_bits_per_second / 1e9) + " Gb/s");
    f.evidence = {
        {"probe_bandwidth_bytes_per_second", m.bandwidth_bytes_per_second},
        {"probe_latency_seconds", std::chrono::duration<double>(m.latency_median).count()}};
    report.findings.push_back(std::move(f));
  }
}

void Print(const CheckReport& report, bool json) {
  for (const std::string& line : NoteLines(report)) std::fprintf(stderr, "%s\n", line.c_str());
  if (json) {
    std::fputs(ReportJson(report).c_str(), stdout);
    return;
  }
  for (const std::string& line : FindingLines(report)) std::printf("%s\n", line.c_str());
  std::printf("%s\n", SummaryLine(report).c_str());
}

}  // namespace

int CheckMain(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<char*> rest;
  auto options = TakeCheckFlags(argc, argv, rest);
  if (!options) {
    std::fprintf(stderr, "fabricwatch check: %s\n", options.error().message().c_str());
    return kUsageExit;
  }
  auto parsed = ParseCommandLine(static_cast<int>(rest.size()), rest.data());
  if (!parsed) {
    std::fprintf(stderr, "fabricwatch check: %s\n", parsed.error().message().c_str());
    return kUsageExit;
  }
  if (options->help) std::fputs(kUsage.data(), stdout);
  if (parsed->action != Action::kRun) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  const Config& config = parsed->config;
  // The check reports what it could not read itself; the components' own lines only at debug.
  SetupLogging(config.log_level == "debug" ? "debug" : "error",
               config.log_format == "json" ? LogFormat::kJson : LogFormat::kLogfmt);
  auto look = LookOnce(config);
  if (!look) {
    std::fprintf(stderr, "fabricwatch check: %s\n", look.error().message().c_str());
    return kUsageExit;
  }
  CheckReport report;
  report.unread = std::move(look->unread);
  report.ports = look->ports.size();
  std::vector<CheckFinding> agent_findings;
  if (!options->agent_url.empty()) {
    report.agent_url = options->agent_url;
    auto agent = FetchAgentFindings(options->agent_url, options->agent_timeout);
    if (agent) {
      report.agent_answered = true;
      agent_findings = std::move(*agent);
    } else {
      report.notes.push_back(
          "no answer from the agent (" + agent.error().message() +
          "): flaps, storms, error rates and drifts need it; the verdict is this look's");
    }
  }
  if (options->probe) ProbePorts(config, look->ports, report);
  std::vector<CheckFinding> local = std::move(look->findings);
  local.insert(local.end(), std::make_move_iterator(report.findings.begin()),
               std::make_move_iterator(report.findings.end()));
  report.findings = MergeFindings(std::move(local), std::move(agent_findings));
  report.elapsed_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Print(report, options->json);
  return ExitCode(VerdictOf(report.findings));
}

}  // namespace fabricwatch::exporter::check
