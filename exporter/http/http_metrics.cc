#include "exporter/http/http_metrics.h"

namespace fabricwatch::exporter {
namespace {

constexpr MetricDesc kOpen{
    "fabricwatch_http_connections", "HTTP connections open now.", MetricKind::kGauge, {}};
constexpr MetricDesc kAccepted{"fabricwatch_http_connections_accepted_total",
                               "HTTP connections accepted.",
                               MetricKind::kCounter,
                               {}};
constexpr MetricDesc kEvicted{
    "fabricwatch_http_connections_evicted_total",
    "HTTP connections closed to make room for a new one (at --web.max-connections, or out of "
    "file descriptors): the oldest that had not sent a complete request head.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kRejected{
    "fabricwatch_http_connections_rejected_total",
    "HTTP connections refused at --web.max-connections with none to evict.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kTimeouts{
    "fabricwatch_http_timeouts_total",
    "HTTP connections closed by a timeout: kind header (TLS handshake and request head not done "
    "within --web.header-timeout), idle (keep-alive) or write.",
    MetricKind::kCounter,
    {"kind"}};
constexpr MetricDesc kTls{"fabricwatch_http_tls_failures_total",
                          "TLS handshakes that failed, client certificates refused included.",
                          MetricKind::kCounter,
                          {}};
constexpr MetricDesc kOverloaded{
    "fabricwatch_http_overloaded_total",
    "Requests answered 503 because the handler or password-check queue was full.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kAcceptPauses{
    "fabricwatch_http_accept_pauses_total",
    "Times accepting paused for 100 ms because no file descriptor was left (EMFILE/ENFILE).",
    MetricKind::kCounter,
    {}};

constexpr MetricDesc kAll[] = {kOpen,     kAccepted, kEvicted,    kRejected,
                               kTimeouts, kTls,      kOverloaded, kAcceptPauses};

}  // namespace

std::span<const MetricDesc> HttpMetricDescs() { return kAll; }

void ExportHttpStats(const HttpStats& stats, MetricSink& sink) {
  const auto d = [](uint64_t v) { return static_cast<double>(v); };
  sink.Add(kOpen, {}, d(stats.connections_open));
  sink.Add(kAccepted, {}, d(stats.accepted));
  sink.Add(kEvicted, {}, d(stats.evicted));
  sink.Add(kRejected, {}, d(stats.rejected));
  sink.Add(kTimeouts, {{"kind", "header"}}, d(stats.header_timeouts));
  sink.Add(kTimeouts, {{"kind", "idle"}}, d(stats.idle_timeouts));
  sink.Add(kTimeouts, {{"kind", "write"}}, d(stats.write_timeouts));
  sink.Add(kTls, {}, d(stats.tls_failures));
  sink.Add(kOverloaded, {}, d(stats.overloaded));
  sink.Add(kAcceptPauses, {}, d(stats.accept_pauses));
}

}  // namespace fabricwatch::exporter
