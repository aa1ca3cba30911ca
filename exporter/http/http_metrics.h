#pragma once
// The HTTP server's own metrics (HttpStats, http_server.h): connections open, evicted and
// refused, timeouts by kind, TLS failures, overload and fd shortage. Exported with the agent's
// own families on every scrape (routes.cc); listed in the metric reference (reference.cc).

#include <span>

#include "collectors/core/metric_sink.h"
#include "exporter/http/http_server.h"

namespace fabricwatch::exporter {

std::span<const MetricDesc> HttpMetricDescs();
void ExportHttpStats(const HttpStats& stats, MetricSink& sink);

}  // namespace fabricwatch::exporter
