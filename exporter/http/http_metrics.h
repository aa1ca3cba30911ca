#pragma once
// The HTTP server's own metrics (HttpStats, http_server.h): connections open, evicted and
// refused (at the cap and per source address), timeouts by kind, TLS failures, overload, fd
// shortage, failed and rate-limited basic-auth logins and bcrypt runs. Exported with the agent's
// own families on every scrape (routes.cc); listed in the metric reference (reference.cc).

#include <span>

#include "base/metric_sink.h"
#include "exporter/http/http_server.h"

namespace fabricwatch::exporter {

std::span<const MetricDesc> HttpMetricDescs();
void ExportHttpStats(const HttpStats& stats, MetricSink& sink);

}  // namespace fabricwatch::exporter
