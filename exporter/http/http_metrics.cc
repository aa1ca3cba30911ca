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
    "HTTP connections closed to make room for a new one (at --web.max-connections, at "
    "--web.max-connections-per-address, or out of file descriptors): the oldest that had not "
    "sent a complete request head, else the oldest idle keep-alive one, each of the source "
    "address holding the most of them, else the oldest response that made no progress.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kRejected{
    "fabricwatch_http_connections_rejected_total",
    "HTTP connections refused at --web.max-connections with none to evict.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kStalledEvicted{
    "fabricwatch_http_connections_stalled_evicted_total",
    "Of fabricwatch_http_connections_evicted_total, responses whose client had not "
    "acknowledged 16 KiB for 1 s (it stopped reading), closed with a reset.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kPerAddressRejected{
    "fabricwatch_http_connections_per_address_rejected_total",
    "HTTP connections refused because their source address (IPv4, or IPv6 /64) already had "
    "--web.max-connections-per-address open, none of them evictable.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kAuthFailures{
    "fabricwatch_http_auth_failures_total",
    "Requests with basic-auth credentials that were refused (401): wrong password, unknown user "
    "or malformed credentials. Requests without credentials are not counted.",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kAuthLimited{
    "fabricwatch_http_auth_limited_total",
    "Requests answered 429 without a password check because their source address had too many "
    "failed logins (10 in a row, then one per 6 s).",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kBcryptRuns{"fabricwatch_http_bcrypt_runs_total",
                                 "bcrypt computations run for basic auth (a cached success "
                                 "runs none; an unknown user runs one against a dummy hash).",
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

constexpr MetricDesc kAll[] = {kOpen,       kAccepted,           kEvicted,      kStalledEvicted,
                               kRejected,   kPerAddressRejected, kTimeouts,     kTls,
                               kOverloaded, kAcceptPauses,       kAuthFailures, kAuthLimited,
                               kBcryptRuns};

}  // namespace

std::span<const MetricDesc> HttpMetricDescs() { return kAll; }

void ExportHttpStats(const HttpStats& stats, MetricSink& sink) {
  const auto d = [](uint64_t v) { return static_cast<double>(v); };
  sink.Add(kOpen, {}, d(stats.connections_open));
  sink.Add(kAccepted, {}, d(stats.accepted));
  sink.Add(kEvicted, {}, d(stats.evicted));
  sink.Add(kStalledEvicted, {}, d(stats.stalled_evicted));
  sink.Add(kRejected, {}, d(stats.rejected));
  sink.Add(kPerAddressRejected, {}, d(stats.per_address_rejected));
  sink.Add(kTimeouts, {{"kind", "header"}}, d(stats.header_timeouts));
  sink.Add(kTimeouts, {{"kind", "idle"}}, d(stats.idle_timeouts));
  sink.Add(kTimeouts, {{"kind", "write"}}, d(stats.write_timeouts));
  sink.Add(kTls, {}, d(stats.tls_failures));
  sink.Add(kOverloaded, {}, d(stats.overloaded));
  sink.Add(kAcceptPauses, {}, d(stats.accept_pauses));
  sink.Add(kAuthFailures, {}, d(stats.auth_failures));
  sink.Add(kAuthLimited, {}, d(stats.auth_limited));
  sink.Add(kBcryptRuns, {}, d(stats.bcrypt_runs));
}

}  // namespace fabricwatch::exporter
