#include "exporter/pages/pages.h"

#include <ctime>
#include <nlohmann/json.hpp>

#include "base/metric_sink.h"
#include "collectors/sys/link_events.h"
#include "collectors/sys/verbs_events.h"

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

std::string LinkEventsJson(const sys::LinkEventLog* log, const sys::RdmaPortEventLog* rdma_log,
                           size_t max_events, std::chrono::system_clock::duration wall_offset) {
  nlohmann::json out;
  out["listening"] = log != nullptr && log->listening();
  out["overruns"] = log != nullptr ? log->overruns() : 0;
  out["total"] = log != nullptr ? log->total() : 0;
  nlohmann::json events = nlohmann::json::array();
  if (log != nullptr) {
    for (const sys::LinkEvent& event : log->Recent(max_events)) {
      events.push_back({{"time", Rfc3339(event.time + wall_offset)},
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
      rdma_events.push_back({{"time", Rfc3339(event.time + wall_offset)},
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
