#pragma once
// The web configuration's own metrics (WebSecurity::Stats, web_security.h): reloads by outcome,
// security changes by kind, and what the running generation protects, so that an alert can
// page on a port that lost TLS or auth (README "Security"). Exported with the agent's own
// families on every scrape (routes.cc); listed in the metric reference (reference.cc).

#include <span>

#include "base/metric_sink.h"
#include "exporter/http/web_security.h"

namespace fabricwatch::exporter {

std::span<const MetricDesc> WebSecurityMetricDescs();
void ExportWebSecurity(const WebSecurity& security, MetricSink& sink);

}  // namespace fabricwatch::exporter
