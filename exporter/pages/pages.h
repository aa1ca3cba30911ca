#pragma once
// Bodies of the JSON endpoints (/api/v1/anomalies, /api/v1/link-events) and the text helpers
// the status page shares with them (status_html.h).

#include <map>
#include <string>

#include "detectors/core/anomaly_tracker.h"
#include "exporter/config/config.h"
#include "exporter/pipeline/self_metrics.h"

namespace fabricwatch::sys {
class LinkEventLog;
class RdmaPortEventLog;
}  // namespace fabricwatch::sys

namespace fabricwatch::exporter {

// JSON (docs/design.md §5): {"anomalies":[{"detector":"link_flap","severity":"critical",
//   "entity":{"netdev":"eth0"},"started":"<RFC 3339>","started_timestamp":<unix s>,
//   "value":5,"evidence":{"flap_penalty":4870,...},"reason":"...","drain_eligible":true}]}
std::string AnomaliesJson(const std::vector<detect::ActiveAnomaly>& anomalies);
// JSON: {"listening":true,"overruns":0,"total":N,"events":[{"time":"...","netdev":"eth0",...}],
//        "rdma_port_events":{"listening":true,"devices_open":N,
//                            "events":[{"time":"...","device":"mlx5_0","port":1,"event":"port_err"}]}}
// `wall_offset` is added to the events' times (Clock::WallOffset(): they are the agent's).
std::string LinkEventsJson(const sys::LinkEventLog* log, const sys::RdmaPortEventLog* rdma_log,
                           size_t max_events, std::chrono::system_clock::duration wall_offset = {});
// HTML-escapes text for the status page.
std::string HtmlEscape(std::string_view text);
std::string Rfc3339(std::chrono::system_clock::time_point time);

}  // namespace fabricwatch::exporter
