#include "exporter/http/pages.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "collectors/core/duration.h"
#include "collectors/core/metric_sink.h"
#include "collectors/core/registry.h"
#include "collectors/sys/link_events.h"
#include "collectors/sys/verbs_events.h"
#include "exporter/version.h"

namespace fabricwatch::exporter {

std::string HtmlEscape(std::string_view raw) {
  // The page says charset=utf-8: invalid bytes (a hostile node description) become U+FFFD first.
  const std::string text = SanitizeUtf8(raw);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Rfc3339(std::chrono::system_clock::time_point time) {
  using namespace std::chrono;
  const auto since = time.time_since_epoch();
  const time_t seconds = duration_cast<std::chrono::seconds>(since).count();
  const long millis = static_cast<long>(duration_cast<milliseconds>(since).count() % 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  snprintf(buf + n, sizeof(buf) - n, ".%03ldZ", millis);
  return buf;
}

std::string AnomaliesJson(const std::vector<detect::ActiveAnomaly>& anomalies) {
  nlohmann::json list = nlohmann::json::array();
  for (const detect::ActiveAnomaly& a : anomalies) {
    nlohmann::json entity = nlohmann::json::object();
    for (const auto& [name, value] : a.finding.entity) entity[name] = value;
    nlohmann::json evidence = nlohmann::json::object();
    for (const detect::Evidence& e : a.finding.evidence) evidence[e.name] = e.value;
    // The kernel log lines behind the finding, with their times (issue 23).
    nlohmann::json log = nlohmann::json::array();
    for (const LogLine& line : a.finding.log) {
      log.push_back(
          {{"time", Rfc3339(line.time)},
           {"timestamp", std::chrono::duration<double>(line.time.time_since_epoch()).count()},
           {"text", line.text}});
    }
    list.push_back(
        {{"detector", a.detector},
         {"severity", detect::SeverityName(a.finding.severity)},
         {"entity", entity},
         {"started", Rfc3339(a.started)},
         {"started_timestamp", std::chrono::duration<double>(a.started.time_since_epoch()).count()},
         {"value", a.finding.value},
         {"evidence", evidence},
         {"log", log},
         {"peer", a.finding.peer},
         {"jobs", a.finding.jobs},
         {"reason", a.finding.reason},
         {"drain_eligible", a.finding.drain_eligible}});
  }
  return nlohmann::json{{"anomalies", list}}.dump(-1, ' ', false,
                                                  nlohmann::json::error_handler_t::replace) +
         "\n";
}

std::string LandingPage(const Config& config, const std::map<std::string, CollectorHealth>& health,
                        const std::vector<detect::ActiveAnomaly>& anomalies) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>fabricwatch</title>"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}</style></head><body>\n"
      "<h1>fabricwatch</h1>\n<p>RDMA fabric exporter and watchdog, version " +
      HtmlEscape(kVersion) + " (revision " + HtmlEscape(kRevision) + ").</p>\n<ul><li><a href=\"" +
      HtmlEscape(config.telemetry_path) +
      "\">Metrics</a></li><li><a href=\"/healthz\">Health</a></li>"
      "<li><a href=\"/api/v1/link-events\">Link events</a> (JSON)</li>"
      "<li><a href=\"/api/v1/anomalies\">Active anomalies</a> (JSON)</li></ul>\n"
      "<p>sysfs root: <code>" +
      HtmlEscape(config.sysfs_path) +
      "</code></p>\n"
      "<h2>Collectors</h2>\n<table><tr><th>collector</th><th>enabled</th><th>interval</th>"
      "<th>status</th><th>series</th><th>errors</th><th>last sample age</th></tr>\n";
  for (const CollectorInfo& info : CollectorRegistry()) {
    const std::string name(info.name);
    auto c = config.collectors.find(name);
    const bool enabled = c != config.collectors.end() && c->second.enabled;
    html += "<tr><td>" + HtmlEscape(name) + "</td><td>" + (enabled ? "yes" : "no") + "</td>";
    auto h = health.find(name);
    if (!enabled || h == health.end()) {
      html += "<td></td><td></td><td></td><td></td><td></td></tr>\n";
      continue;
    }
    const CollectorHealth& s = h->second;
    // A status quotes what the collector read (a file's content, a device string): bounded as
    // a label value is (docs/design.md §5.6).
    std::string status = !s.has_run ? "not run yet" : BoundLabelValue(s.last_status.ToString());
    char age[32] = "";
    if (s.has_run) snprintf(age, sizeof(age), "%.1fs", now - s.last_sample_timestamp);
    html += "<td>" + FormatDuration(s.interval) + "</td><td>" + HtmlEscape(status) + "</td><td>" +
            std::to_string(s.series) + "</td><td>" + std::to_string(s.errors_total) + "</td><td>" +
            age + "</td></tr>\n";
  }
  html += "</table>\n<h2>Active anomalies</h2>\n";
  if (anomalies.empty()) {
    html += "<p>None.</p>\n";
  } else {
    html +=
        "<table><tr><th>detector</th><th>severity</th><th>entity</th><th>since</th>"
        "<th>drain-eligible</th><th>reason</th></tr>\n";
    for (const detect::ActiveAnomaly& a : anomalies) {
      html += "<tr><td>" + HtmlEscape(a.detector) + "</td><td>" +
              HtmlEscape(detect::SeverityName(a.finding.severity)) + "</td><td>" +
              HtmlEscape(detect::EntityText(a.finding.entity)) + "</td><td>" +
              HtmlEscape(Rfc3339(a.started)) + "</td><td>" +
              (a.finding.drain_eligible ? "yes" : "no") + "</td><td>" +
              HtmlEscape(BoundLabelValue(a.finding.reason)) + "</td></tr>\n";
    }
    html += "</table>\n";
  }
  html += "</body></html>\n";
  return html;
}

std::string LinkEventsJson(const sys::LinkEventLog* log, const sys::RdmaPortEventLog* rdma_log,
                           size_t max_events) {
  nlohmann::json out;
  out["listening"] = log != nullptr && log->listening();
  out["overruns"] = log != nullptr ? log->overruns() : 0;
  out["total"] = log != nullptr ? log->total() : 0;
  nlohmann::json events = nlohmann::json::array();
  if (log != nullptr) {
    for (const sys::LinkEvent& event : log->Recent(max_events)) {
      events.push_back({{"time", Rfc3339(event.time)},
                        {"netdev", event.netdev},
                        {"ifindex", event.ifindex},
                        {"carrier", event.carrier_up ? "up" : "down"},
                        {"operstate", event.operstate},
                        {"inferred", event.inferred}});
    }
  }
  out["events"] = std::move(events);
  nlohmann::json rdma;
  rdma["listening"] = rdma_log != nullptr && rdma_log->listening();
  rdma["devices_open"] = rdma_log != nullptr ? rdma_log->devices_open() : 0;
  nlohmann::json rdma_events = nlohmann::json::array();
  if (rdma_log != nullptr) {
    for (const sys::RdmaPortEvent& event : rdma_log->Recent(max_events)) {
      rdma_events.push_back({{"time", Rfc3339(event.time)},
                             {"device", event.device},
                             {"port", event.port},
                             {"event", event.event}});
    }
  }
  rdma["events"] = std::move(rdma_events);
  out["rdma_port_events"] = std::move(rdma);
  // Invalid UTF-8 in a netdev name is replaced rather than throwing.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace fabricwatch::exporter
