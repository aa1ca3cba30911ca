#pragma once
// Rendering a scrape: the latest snapshot of every collector plus the self-metrics, merged by
// family name, sorted, written in the text exposition format 0.0.4. No device I/O happens here.
//
// The families are read where they lie (the published snapshots) and written straight into one
// string: no copy of a family, no ostream. prometheus-cpp's TextSerializer needs one vector of
// families, so a render through it deep-copied every snapshot (~3,300 series, label strings and
// all, on an 8-port RoCE node) and grew an ostringstream by doubling; that was most of the heap an
// agent keeps and most of a render's CPU. The output is TextSerializer's byte for byte (values as
// printf "%.16g", "Nan", "+Inf", label values escaped per the format), tested against it, except
// that HELP text is escaped as the format requires (TextSerializer writes it raw).

#include <prometheus/metric_family.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::exporter {

inline constexpr std::string_view kExpositionContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Which families and samples a render writes: the series budget (exporter/pipeline/
// series_budget.h). A render calls Prepare() once with every family, then WantFamily() once per
// name and WantSample() for each sample of a wanted family, in the order written.
class SeriesFilter {
 public:
  virtual ~SeriesFilter() = default;
  virtual void Prepare(const std::vector<const prometheus::MetricFamily*>& families) = 0;
  virtual bool WantFamily(std::string_view name) const = 0;
  virtual bool WantSample(const prometheus::MetricFamily& family,
                          const prometheus::ClientMetric& sample) = 0;
};

// Appends the exposition of `families` to `out`. Families that share a name (two sources of one
// metric) are written as one, under the HELP and TYPE of the first, their samples in the order
// given; families are sorted by name. `families` is reordered. With a `filter`, only what it
// wants is written (a family it drops whole has no HELP or TYPE either).
void AppendExposition(std::vector<const prometheus::MetricFamily*>& families, std::string& out,
                      SeriesFilter* filter = nullptr);

// The exposition of `families` as a new string (tests, tools).
std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

// gzip (RFC 1952) of `data`.
Result<std::string> Gzip(std::string_view data);
// True when an Accept-Encoding header value accepts gzip (and does not give it q=0).
bool AcceptsGzip(std::string_view accept_encoding);

}  // namespace fabricwatch::exporter
