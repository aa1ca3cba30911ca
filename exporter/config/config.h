#pragma once
// The agent's configuration: flags in the Prometheus exporter style, plus an optional YAML file
// (--config.file). Precedence: built-in defaults < YAML file < flags given on the command line.
//
// YAML schema (unknown keys are errors, so a typo never silently does nothing):
//   collectors:
//     <name>:              # a registered collector, e.g. netdev
//       enabled: true
//       interval: 1s       # Prometheus duration: 100ms, 1s, 5m
//       <option>: value    # collector options, e.g. device-exclude: "^(lo|docker.*)$"
//   detectors:
//     escalation-count: 3  # engine-wide: warnings of one entity that escalate (0: off)
//     escalation-window: 1h
//     <name>:              # a registered detector, e.g. link_flap
//       enabled: true
//       <option>: value    # detector options (README "Detectors"), e.g. hard-window: 10s
//   hooks:                 # node-drain hooks, see exporter/remediation/hook_config.h (default:
//   none, dry run)

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "collectors/core/collector.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "exporter/http/http_limits.h"
#include "exporter/probe/probe_config.h"
#include "exporter/remediation/hook_config.h"

namespace fabricwatch::exporter {

inline constexpr std::string_view kDefaultListenAddress = ":9868";

struct CollectorConfig {
  bool enabled = false;
  std::chrono::milliseconds interval{1000};
  CollectorOptions options;
};

struct DetectorConfig {
  bool enabled = false;
  detect::DetectorOptions options;  // only those set; the detector applies its defaults
};

struct Config {
  std::string listen_address{kDefaultListenAddress};
  // --web.config.file: exporter-toolkit's web configuration (TLS, client certificates, basic
  // auth, headers; exporter/http/web_config.h). Empty: plain HTTP, no auth.
  std::string web_config_file;
  // --web.healthz-unauthenticated: /healthz answers without basic auth (default: everything is
  // authenticated, exporter-toolkit's behaviour).
  bool web_healthz_unauthenticated = false;
  std::string telemetry_path = "/metrics";
  // --metrics.all, --metrics.include: the series budget (exporter/pipeline/series_budget.h).
  bool metrics_all = false;
  std::vector<std::string> metrics_include;
  // --path.sysfs, --path.ethtool and the --path.<source> of every source a collector declares
  // (collectors/core/roots.h). roots.host is not set here: ResolvedRoots(config)
  // (exporter/collector_sources.h) measures it when collectors are built.
  Roots roots;
  std::string config_file;
  bool config_check = false;
  bool shape_print = false;  // --shape.print: print the fabric shape as YAML and exit
  std::string shape_file;    // --shape.file (applied as detectors.link_degraded.shape-file)
  std::string log_level = "info";
  std::string log_format = "logfmt";
  // Every registered collector has an entry, enabled or not.
  std::map<std::string, CollectorConfig, std::less<>> collectors;
  // Every registered detector has an entry, enabled or not.
  std::map<std::string, DetectorConfig, std::less<>> detectors;
  std::string state_file;  // empty: detector state is not persisted
  // Escalation of repeated warnings (detectors/core/escalation.h): `detectors.escalation-count`
  // / --detector.escalation-count (0: off) and `detectors.escalation-window`.
  uint64_t escalation_count = 3;
  std::chrono::milliseconds escalation_window = std::chrono::hours(1);
  HookConfig hooks;  // default: no hooks, dry run
  HttpLimits http;   // --web.max-connections, --web.*-timeout, --web.max-request-size
  // The active RDMA probe (`probe:`, --probe.*; exporter/probe/probe_config.h): off by default.
  probe::ProbeConfig probe;
};

// What the command line asked for besides running.
enum class Action { kRun, kHelp, kVersion, kHelpMetrics, kHelpRegistry };

struct ParsedCommandLine {
  Action action = Action::kRun;
  Config config;
  std::string output;  // --help / --version / --help-metrics text
};

// Parses argv (and the YAML file it names). Errors are InvalidArgument with a message that names
// the flag or the YAML key and what was expected.
Result<ParsedCommandLine> ParseCommandLine(int argc, const char* const* argv);

// Applies a YAML document to `config` (exposed for tests). `source` names it in errors.
Status ApplyYaml(const std::string& yaml_text, const std::string& source, Config& config);

// The engine-wide detector settings: "escalation-count" (0 … 1000) and "escalation-window" (a
// duration > 0). False when `key` is neither; an invalid value is InvalidArgument naming `where`.
bool IsEngineDetectorKey(std::string_view key);
Status ApplyEngineDetectorOption(std::string_view key, const std::string& value,
                                 const std::string& where, Config& config);

// Checks cross-field constraints (paths exist, telemetry path shape, at least one collector).
Status Validate(const Config& config);

// The configuration with every registered collector and detector at its registry default.
Config RegistryDefaults();

// The metric reference of every registered collector, as a Markdown table (--help-metrics).
std::string MetricReferenceMarkdown();
// The tables of registered collectors and detectors with their options and defaults, as
// Markdown (--help-registry; the README's "Collectors" and "Detectors" tables).
std::string RegistryTablesMarkdown();

}  // namespace fabricwatch::exporter
