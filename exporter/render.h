#pragma once
// Rendering a scrape: the latest snapshot of every collector plus the self-metrics, merged by
// family name, sorted, serialised in the text exposition format 0.0.4 by prometheus-cpp's
// TextSerializer. No device I/O happens here.

#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

#include "collectors/core/status.h"

namespace fabricwatch::exporter {

inline constexpr std::string_view kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

std::string RenderText(std::vector<prometheus::MetricFamily> families);

// gzip (RFC 1952) of `data`.
Result<std::string> Gzip(std::string_view data);
// True when an Accept-Encoding header value accepts gzip (and does not give it q=0).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace fabricwatch::exporter
