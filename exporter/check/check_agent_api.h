#pragma once
// The running agent's findings for `fabricwatch check` (docs/check.md): GET
// <agent-url>/api/v1/anomalies (exporter/pages/routes.cc; the JSON of exporter/pages/pages.cc
// AnomaliesJson) over plain HTTP, bounded by a short timeout. The agent has watched the node
// over time, so it holds the findings one look cannot make (flaps, storms, error rates, drifts).
//
// Only http:// URLs; no proxy from the environment (the request must reach this node's agent),
// no redirect followed, a body over kMaxAgentBodyBytes is an error. An agent behind basic auth
// or TLS (--web.config.file) answers 401 or nothing: the check says so and decides without it.
//
// libcurl is loaded on the call, not linked (collectors/sys/curl_library.h, docs/libraries.md):
// without it the answer is kUnavailable naming the library and its package.
//
// Thread-safety: none needed (one call per run).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "exporter/check/check_verdict.h"

namespace fabricwatch::exporter::check {

inline constexpr std::string_view kDefaultAgentUrl = "http://127.0.0.1:9868";
inline constexpr size_t kMaxAgentBodyBytes = 8 << 20;

// The findings of an /api/v1/anomalies body, marked FindingSource::kAgent. kInvalidArgument when
// it is not {"anomalies": [{detector, severity, entity, reason, ...}, ...]}.
Result<std::vector<CheckFinding>> ParseAgentAnomalies(std::string_view body);

// GETs and parses <base_url>/api/v1/anomalies. kUnavailable: nothing answered (refused, timed
// out); other codes: an answer that is not the agent's (status, body).
Result<std::vector<CheckFinding>> FetchAgentFindings(const std::string& base_url,
                                                     std::chrono::milliseconds timeout);

}  // namespace fabricwatch::exporter::check
