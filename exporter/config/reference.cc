// The generated reference: the metric tables (--help-metrics, README "Metric reference") and the
// README's collector and detector tables, all from the registries, so the documentation cannot
// drift from the code (registry_test compares them with README.md).

#include "base/duration.h"
#include "collectors/registry.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/registry.h"
#include "exporter/config/config.h"
#include "exporter/http/http_metrics.h"
#include "exporter/http/web_security_metrics.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/series_budget.h"
#include "exporter/privileges.h"
#include "exporter/probe/probe_runner.h"
#include "exporter/remediation/hook_runner.h"

namespace fabricwatch::exporter {
namespace {

std::string MetricTable(std::span<const MetricDesc> metrics) {
  std::string out = "| metric | type | labels | description |\n|---|---|---|---|\n";
  for (const MetricDesc& desc : metrics) {
    std::string labels;
    for (std::string_view label : desc.labels) {
      if (!labels.empty()) labels += ", ";
      labels += "`" + std::string(label) + "`";
    }
    const char* type = desc.kind == MetricKind::kCounter   ? "counter"
                       : desc.kind == MetricKind::kInfo    ? "info"
                       : desc.kind == MetricKind::kUntyped ? "untyped"
                                                           : "gauge";
    std::string help(desc.help);
    for (char& c : help) {
      if (c == '|') c = '/';
    }
    out += "| `" + std::string(desc.name) + "` | " + type + " | " + labels + " | " + help + " |\n";
  }
  return out + "\n";
}

// `text` safe inside a Markdown table cell.
std::string Cell(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '|') c = '/';
  }
  return out;
}

template <typename Spec>
std::string OptionList(std::span<const Spec> options) {
  std::string out;
  for (const Spec& option : options) {
    if (!out.empty()) out += "<br>";
    out += "`" + std::string(option.key) + "`";
    if (!option.default_value.empty()) out += " " + Cell(option.default_value);
  }
  return out.empty() ? "—" : out;
}

}  // namespace

std::string RegistryTablesMarkdown() {
  std::string out =
      "| collector | default | interval | options (default) | collects |\n|---|---|---|---|---|\n";
  for (const CollectorInfo& info : CollectorRegistry()) {
    out += "| `" + std::string(info.name) + "` | " +
           (info.enabled_by_default ? "enabled" : "disabled") + " | " +
           FormatDuration(info.default_interval) + " | " + OptionList(info.options) + " | " +
           Cell(info.description) + " |\n";
  }
  out += "\n| detector | default | reads (collectors) | finds |\n|---|---|---|---|\n";
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    std::string reads;
    for (const std::string& collector : detect::InputCollectors(info.inputs)) {
      reads += (reads.empty() ? "`" : ", `") + collector + "`";
    }
    out += "| `" + std::string(info.name) + "` | " +
           (info.enabled_by_default ? "enabled" : "disabled") + " | " + reads + " | " +
           Cell(info.description) + " |\n";
  }
  return out;
}

std::string MetricReferenceMarkdown() {
  std::string out =
      "### The series budget: families /metrics trims by default\n\n"
      "`--metrics.include=FAMILY` exports one of them whole again, `--metrics.all` all of "
      "them (README \"Series budget\").\n\n" +
      SeriesBudgetMarkdown() +
      "### The agent itself (always exported; `fabricwatch_collector_device_reads` with "
      "`--metrics.include`)\n\n" +
      MetricTable(SelfMetricDescs());
  out += "### The HTTP server (always exported)\n\n" + MetricTable(HttpMetricDescs());
  out += "### The web configuration (`--web.config.file`; the protection gauge always)\n\n" +
         MetricTable(WebSecurityMetricDescs());
  out += "### Node-drain hooks (always exported; `hook` series per configured hook)\n\n" +
         MetricTable(HookRunner::MetricDescs());
  out +=
      "### The active RDMA probe (with `probe.enabled`; per-port series once the port was "
      "probed)\n\n" +
      MetricTable(probe::ProbeRunner::MetricDescs());
  out += "### Privileges (one series per privileged feature in use: README \"Privileges\")\n\n" +
         MetricTable(PrivilegeLog::Metrics());
  for (const CollectorInfo& info : CollectorRegistry()) {
    out += "### Collector `" + std::string(info.name) + "`\n\n" + MetricTable(info.metrics);
  }
  out += "### Anomalies (every detector, docs/design.md §5)\n\n" +
         MetricTable(detect::AnomalyTracker::Metrics()) + "### The detector engine\n\n" +
         MetricTable(DetectorEngine::Metrics());
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    out += "### Detector `" + std::string(info.name) + "`\n\n" + MetricTable(info.metrics);
  }
  return out;
}

}  // namespace fabricwatch::exporter
