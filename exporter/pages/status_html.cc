#include "exporter/pages/status_html.h"

#include <cmath>
#include <ctime>

#include "base/metric_sink.h"
#include "exporter/pages/pages.h"
#include "exporter/pages/status_assets.h"
#include "exporter/version.h"

namespace fabricwatch::exporter::status {
namespace {

// The text marks that go with the colours: a marked value never relies on colour alone.
constexpr std::string_view kBadMark = "\u26a0 ";   // ⚠
constexpr std::string_view kOkMark = "\u2713 ";    // ✓
constexpr std::string_view kNearMark = " \u2605";  // ★
constexpr size_t kEventsShown = 30;

// Escaped, and bounded like a label value (a 10 KB node description stays out of the page).
std::string E(std::string_view text) { return HtmlEscape(BoundLabelValue(text)); }

double Seconds(detect::TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string Number(double value, const char* format) {
  if (std::isinf(value)) return value < 0 ? "-\u221e" : "\u221e";
  char buf[64];
  snprintf(buf, sizeof(buf), format, value);
  return buf;
}

// "<time datetime=RFC3339>2026-11-26 11:03:02</time>" (UTC)
std::string Clock(detect::TimePoint time) {
  const time_t seconds = std::chrono::system_clock::to_time_t(time);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char clock[32];
  strftime(clock, sizeof(clock), "%Y-%m-%d %H:%M:%S", &utc);
  return "<time datetime=\"" + Rfc3339(time) + "\">" + clock + "</time>";
}

// Clock() and "(5m 12s ago)"
std::string When(detect::TimePoint time, detect::TimePoint now) {
  return Clock(time) + " (" + AgeText(Seconds(now) - Seconds(time)) + " ago)";
}

// A table cell of a Reading: value, its mark and note.
std::string ReadingCell(const Reading& r, const std::string& text) {
  std::string cell = r.abnormal ? "<td class=\"bad\">" + std::string(kBadMark) : "<td>";
  cell += r.value ? E(text) : "\u2014";
  if (r.abnormal) cell += "<small>" + E(r.why) + "</small>";
  if (!r.detail.empty() && r.value) cell += "<small>" + E(r.detail) + "</small>";
  return cell + "</td>";
}

void Summary(const StatusModel& m, std::string& html) {
  std::string cls = "ok";
  std::string text;
  if (m.waiting_for_samples) {
    cls = "wait";
    text =
        "\u231b Waiting for the first samples: the agent has just started and no collector "
        "has finished a collection yet.";
  } else if (!m.anomalies.empty() || m.AbnormalPorts() > 0) {
    cls = "bad";
    text = std::string(kBadMark) + std::to_string(m.anomalies.size()) + " active anomal" +
           (m.anomalies.size() == 1 ? "y" : "ies") + " (" + std::to_string(m.CriticalAnomalies()) +
           " critical); " + std::to_string(m.AbnormalPorts()) + " of " +
           std::to_string(m.ports.size()) + " ports abnormal.";
  } else if (m.ports.empty()) {
    cls = "wait";
    text = std::string(kBadMark) + "No fabric port found (no RDMA port under the sysfs root).";
  } else if (!m.collectors_pending.empty()) {
    cls = "wait";
    text = "\u231b No anomaly so far; still waiting for the first sample of:";
    for (const std::string& name : m.collectors_pending) text += " " + name;
  } else {
    text = std::string(kOkMark) + "OK: no active anomaly; all " + std::to_string(m.ports.size()) +
           " ports as expected.";
  }
  html += "<p class=\"summary " + cls + "\" id=\"summary\" data-state=\"" + cls + "\">" +
          HtmlEscape(text) + "</p>\n";
}

void Header(const StatusModel& m, std::string& html) {
  html += "<header><h1>" + E(m.hostname) + "</h1>\n";
  Summary(m, html);
  html += "<p class=\"meta\">fabricwatch " + E(kVersion) + " (revision " + E(kRevision) + ")";
  if (m.uptime_seconds) html += " \u00b7 up " + AgeText(*m.uptime_seconds);
  html += " \u00b7 sysfs <code>" + E(m.sysfs_root) + "</code>";
  html += " \u00b7 rendered " + Clock(m.now) + " UTC \u00b7 refreshes every " +
          std::to_string(kRefreshSeconds) +
          " s <span id=\"refresh-state\"></span></p>\n"
          "<nav><a href=\"#anomalies\">Anomalies</a><a href=\"#ports\">Ports</a>"
          "<a href=\"#history\">History</a><a href=\"#events\">Link events</a>"
          "<a href=\"#topology\">GPU\u2194NIC</a><a href=\"#agent\">Agent</a>"
          "<a href=\"/api/v1/anomalies\">anomalies JSON</a>"
          "<a href=\"/api/v1/link-events\">link events JSON</a><a href=\"/healthz\">health</a>"
          "</nav></header>\n";
}

// One name-value pair of a <dl>; `value` is HTML already.
std::string Fact(std::string_view name, const std::string& value) {
  return "<div><dt>" + E(name) + "</dt><dd>" + value + "</dd></div>";
}

void Anomaly(const detect::ActiveAnomaly& a, detect::TimePoint now, std::string& html) {
  const std::string severity(detect::SeverityName(a.finding.severity));
  const std::string entity = detect::EntityText(a.finding.entity);
  html += "<article class=\"anomaly " + E(severity) + "\" data-detector=\"" + E(a.detector) +
          "\" data-entity=\"" + E(entity) + "\" data-severity=\"" + E(severity) +
          "\"><h3><span class=\"badge\">" + std::string(kBadMark) + E(severity) + "</span> " +
          E(a.detector) + " \u2014 " + E(entity) + "</h3>\n<p class=\"reason\">" +
          E(a.finding.reason) + "</p>\n<dl>";
  std::string jobs = a.finding.jobs.empty() ? "none known" : "";
  for (size_t i = 0; i < a.finding.jobs.size(); ++i) jobs += (i ? ", " : "") + E(a.finding.jobs[i]);
  html +=
      Fact("since", When(a.started, now) + (a.restored ? " (restored from the state file)" : "")) +
      Fact("value", Number(a.finding.value, "%g")) +
      Fact("drain-eligible", a.finding.drain_eligible ? "yes" : "no") +
      Fact("peer", a.finding.peer.empty() ? "unknown" : E(a.finding.peer)) + Fact("jobs", jobs) +
      "</dl>\n<dl class=\"evidence\">";
  for (const detect::Evidence& e : a.finding.evidence) {
    html += Fact(e.name, Number(e.value, "%g"));
  }
  html += "</dl>\n";
  if (!a.finding.log.empty()) {
    html += "<pre class=\"log\">";
    for (const LogLine& line : a.finding.log) {
      html += E(Rfc3339(line.time)) + " " + E(line.text) + "\n";
    }
    html += "</pre>\n";
  }
  html += "</article>\n";
}

void Anomalies(const StatusModel& m, std::string& html) {
  html += "<section id=\"anomalies\"><h2>Active anomalies (" + std::to_string(m.anomalies.size()) +
          ")</h2>\n";
  if (m.waiting_for_samples) {
    html += "<p>Not evaluated yet: waiting for the first samples.</p>\n";
  } else if (m.anomalies.empty()) {
    html += "<p>" + std::string(kOkMark) + "None.</p>\n";
  }
  for (const detect::ActiveAnomaly& a : m.anomalies) Anomaly(a, m.now, html);
  html += "</section>\n";
}

void PortRowHtml(const PortRow& p, std::string& html) {
  html += "<tr data-port=\"" + E(p.device + "/" + p.port) + "\" data-netdev=\"" + E(p.netdev) +
          "\" data-status=\"" + (p.abnormal ? "abnormal" : "ok") + "\">";
  html += p.abnormal ? "<td class=\"bad st\">" + std::string(kBadMark) + "abnormal</td>"
                     : "<td class=\"ok st\">" + std::string(kOkMark) + "ok</td>";
  // The RDMA port, and below it its netdev and link layer.
  html += "<td><strong>" + E(p.device) + "/" + E(p.port) + "</strong><small>" +
          (p.netdev.empty() ? "no netdev" : E(p.netdev)) + " \u00b7 " + E(p.link_layer) +
          "</small></td>";
  const std::string state = p.state ? PortStateName(*p.state) : "\u2014";
  html += p.state_abnormal ? "<td class=\"bad\">" + std::string(kBadMark) + E(state) + "<small>" +
                                 E(p.state_why) + "</small></td>"
                           : "<td>" + E(state) + "</td>";
  html += ReadingCell(p.rate_gbps, p.rate_gbps.value ? Number(*p.rate_gbps.value, "%g Gb/s") : "");
  html += ReadingCell(p.width, p.width.value ? Number(*p.width.value, "%gx") : "");
  html += ReadingCell(p.ber, !p.ber.value        ? ""
                             : *p.ber.value == 0 ? "0"
                                                 : Number(*p.ber.value, "%.2e"));
  html +=
      ReadingCell(p.pfc_pause, p.pfc_pause.value ? Number(*p.pfc_pause.value * 100, "%.1f%%") : "");
  html += ReadingCell(p.temperature_celsius, p.temperature_celsius.value
                                                 ? Number(*p.temperature_celsius.value, "%.1f °C")
                                                 : "");
  html += ReadingCell(p.rx_power_dbm,
                      p.rx_power_dbm.value ? Number(*p.rx_power_dbm.value, "%.1f dBm") : "");
  html += "<td>" + (p.peer_name.empty() ? "\u2014" : E(p.peer_name) + " " + E(p.peer_port)) +
          (p.peer_source.empty() ? "" : "<small>" + E(p.peer_source) + "</small>") + "</td><td>";
  for (size_t i = 0; i < p.jobs.size(); ++i) html += (i ? "<br>" : "") + E(p.jobs[i]);
  html += p.jobs.empty() ? "\u2014</td>" : "</td>";
  html += p.anomalies.empty() ? "<td>\u2014</td>" : "<td class=\"bad\">";
  for (size_t i = 0; i < p.anomalies.size(); ++i) {
    html += (i ? "<br>" : std::string(kBadMark)) + E(p.anomalies[i]);
  }
  html += p.anomalies.empty() ? "</tr>\n" : "</td></tr>\n";
}

void Ports(const StatusModel& m, std::string& html) {
  html += "<section id=\"ports\"><h2>Fabric ports (" + std::to_string(m.ports.size()) + ", " +
          std::to_string(m.AbnormalPorts()) + " abnormal)</h2>\n";
  if (m.ports.empty()) {
    html += m.waiting_for_samples ? "<p>Waiting for the first samples.</p>\n"
                                  : "<p>No RDMA port found.</p>\n";
    html += "</section>\n";
    return;
  }
  html +=
      "<div class=\"scroll\"><table id=\"port-grid\"><thead><tr><th>status</th>"
      "<th>port \u00b7 netdev</th><th>state</th><th>rate</th><th>width</th><th>BER</th>"
      "<th>PFC pause</th><th>module temp</th><th>Rx power</th><th>peer</th><th>jobs</th>"
      "<th>anomalies</th></tr></thead><tbody>\n";
  for (const PortRow& p : m.ports) PortRowHtml(p, html);
  html += "</tbody></table></div></section>\n";
}

void History(const StatusModel& m, std::string& html) {
  html += "<section id=\"history\"><h2>Transitions in the last hour (" +
          std::to_string(m.transitions.size()) + ")</h2>\n";
  if (m.transitions.empty()) {
    html += "<p>None since the agent started or in the last hour.</p></section>\n";
    return;
  }
  html +=
      "<div class=\"scroll\"><table><thead><tr><th>time</th><th>transition</th><th>severity</th>"
      "<th>detector</th><th>entity</th><th>reason</th></tr></thead><tbody>\n";
  for (const detect::AnomalyTransition& t : m.transitions) {
    html += "<tr><td>" + When(t.time, m.now) + "</td>" +
            (t.raised ? "<td class=\"bad\">" + std::string(kBadMark) + "raised</td>"
                      : "<td class=\"ok\">" + std::string(kOkMark) + "cleared</td>") +
            "<td>" + E(detect::SeverityName(t.finding.severity)) + "</td><td>" + E(t.detector) +
            "</td><td>" + E(detect::EntityText(t.finding.entity)) + "</td><td class=\"wrap\">" +
            E(t.finding.reason) + "</td></tr>\n";
  }
  html += "</tbody></table></div></section>\n";
}

void Events(const StatusModel& m, std::string& html) {
  html +=
      "<section id=\"events\"><h2>Recent link events</h2>\n<p class=\"meta\">netlink link "
      "listener: " +
      std::string(m.link_events_listening ? "listening" : "not listening") +
      " \u00b7 RDMA port events: " + (m.rdma_events_listening ? "listening" : "not listening") +
      "</p>\n";
  if (m.events.empty()) {
    html += "<p>None since the agent started.</p></section>\n";
    return;
  }
  html +=
      "<div class=\"scroll\"><table><thead><tr><th>time</th><th>port</th><th>event</th></tr>"
      "</thead><tbody>\n";
  for (size_t i = 0; i < m.events.size() && i < kEventsShown; ++i) {
    const EventRow& e = m.events[i];
    html += "<tr><td>" + When(e.time, m.now) + "</td><td>" + E(e.subject) + "</td>" +
            (e.bad ? "<td class=\"bad\">" + std::string(kBadMark) : "<td>") + E(e.what) +
            "</td></tr>\n";
  }
  html += "</tbody></table></div></section>\n";
}

void Topology(const StatusModel& m, std::string& html) {
  const TopologyMap& t = m.topology;
  html += "<section id=\"topology\"><h2>GPU \u2194 NIC paths</h2>\n";
  if (t.gpus.empty()) {
    html += "<p>No GPU-NIC pair known (collector topology off, or no GPU).</p></section>\n";
    return;
  }
  html +=
      "<p class=\"meta\">PCIe path level of each GPU (row) to each NIC (column): PIX, PXB "
      "(through PCIe switches only: GPUDirect RDMA runs well), PHB, NODE, SYS (through the "
      "CPU). " +
      std::string(kNearMark) +
      " marks a GPU's nearest NIC.</p>\n<div class=\"scroll\"><table><thead><tr><th>GPU</th>";
  for (const std::string& nic : t.nics) html += "<th>" + E(nic) + "</th>";
  html += "</tr></thead><tbody>\n";
  for (const std::string& gpu : t.gpus) {
    html += "<tr><td>" + E(gpu) + "</td>";
    for (const std::string& nic : t.nics) {
      auto it = t.level.find({gpu, nic});
      const bool near = t.nearest.contains({gpu, nic});
      html += std::string(near ? "<td class=\"near\">" : "<td>") +
              (it == t.level.end() ? "\u2014" : E(PathLevelName(it->second))) +
              (near ? std::string(kNearMark) : "") + "</td>";
    }
    html += "</tr>\n";
  }
  html += "</tbody></table></div></section>\n";
}

void Agent(const StatusModel& m, std::string& html) {
  html +=
      "<section id=\"agent\"><h2>Agent health</h2>\n<div class=\"scroll\"><table><thead><tr>"
      "<th>collector</th><th>status</th><th>last sample</th><th>interval</th><th>series</th>"
      "<th>errors</th><th>privileges missing</th></tr></thead><tbody>\n";
  for (const CollectorRow& c : m.collectors) {
    const CollectorHealth& h = c.health;
    std::string status;
    bool bad = false;
    if (!h.has_run) {
      status = "not run yet";
    } else if (h.stale) {
      bad = true;
      status = "stale: " + h.last_status.ToString();
    } else if (!h.success) {
      bad = true;
      status = "failing: " + h.last_status.ToString();
    } else {
      status = "ok";
    }
    html += "<tr data-collector=\"" + E(c.name) + "\"><td>" + E(c.name) + "</td>" +
            (bad ? "<td class=\"bad wrap\">" + std::string(kBadMark) : "<td class=\"wrap\">") +
            E(status) + "</td><td>" + (c.age_seconds ? AgeText(*c.age_seconds) + " ago" : "never") +
            "</td><td>" + Number(std::chrono::duration<double>(h.interval).count(), "%g s") +
            "</td><td>" + std::to_string(h.series) + "</td><td>" + std::to_string(h.errors_total) +
            "</td>" +
            (c.privileges_missing.empty() ? "<td>\u2014"
                                          : "<td class=\"bad\">" + std::string(kBadMark));
    for (size_t i = 0; i < c.privileges_missing.size(); ++i) {
      html += (i ? ", " : "") + E(c.privileges_missing[i]);
    }
    html += "</td></tr>\n";
  }
  html += "</tbody></table></div></section>\n";
}

}  // namespace

std::string AgeText(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[48];
  if (s >= 86400) {
    snprintf(buf, sizeof(buf), "%ldd %ldh", s / 86400, s % 86400 / 3600);
  } else if (s >= 3600) {
    snprintf(buf, sizeof(buf), "%ldh %ldm", s / 3600, s % 3600 / 60);
  } else if (s >= 60) {
    snprintf(buf, sizeof(buf), "%ldm %lds", s / 60, s % 60);
  } else {
    snprintf(buf, sizeof(buf), "%lds", s);
  }
  return buf;
}

std::string RenderStatusPage(const StatusModel& model) {
  std::string html;
  html.reserve(64 * 1024);
  const std::string state = model.waiting_for_samples ? "waiting"
                            : (!model.anomalies.empty() || model.AbnormalPorts() > 0)
                                ? std::to_string(model.anomalies.size()) + " anomalies"
                                : "ok";
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>" +
      E(model.hostname) + " \u2014 fabricwatch: " + E(state) +
      "</title>\n<noscript><meta http-equiv=\"refresh\" content=\"" +
      std::to_string(kRefreshSeconds) + "\"></noscript>\n<style>" + std::string(kStatusStyle) +
      "</style></head>\n<body><main id=\"status\">\n";
  Header(model, html);
  Anomalies(model, html);
  Ports(model, html);
  History(model, html);
  Events(model, html);
  Topology(model, html);
  Agent(model, html);
  html += "</main><script>" + std::string(kStatusScript) + "</script></body></html>\n";
  return html;
}

std::vector<std::pair<std::string, std::string>> StatusPageHeaders() {
  return {{"Content-Security-Policy", StatusPagePolicy()}};
}

}  // namespace fabricwatch::exporter::status
