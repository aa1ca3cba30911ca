#include "exporter/pages/routes.h"

#include <chrono>
#include <utility>
#include <vector>

#include "exporter/http/http_metrics.h"
#include "exporter/pages/pages.h"
#include "exporter/http/render.h"
#include "exporter/pages/status_html.h"
#include "exporter/http/web_security_metrics.h"

namespace fabricwatch::exporter {
namespace {

constexpr size_t kLinkEventsShown = 256;
// A render is shared for at most this long (against 1 s sampling).
constexpr std::chrono::milliseconds kRenderMaxAge{100};

// A collector's *_timestamp_seconds family holds times of the agent's clock (the detectors read
// them as such: optical_drift the last DOM read): shown in wall time, 0 ("never") kept.
bool IsTimestampFamily(const prometheus::MetricFamily& family) {
  constexpr std::string_view kSuffix = "_timestamp_seconds";
  return family.type == prometheus::MetricType::Gauge && family.name.ends_with(kSuffix);
}

prometheus::MetricFamily Rebased(const prometheus::MetricFamily& family, double seconds) {
  prometheus::MetricFamily out = family;
  for (prometheus::ClientMetric& metric : out.metric) {
    if (metric.gauge.value != 0) metric.gauge.value += seconds;
  }
  return out;
}

}  // namespace

std::chrono::system_clock::duration ShownWallOffset(const RouteSources& sources) {
  return sources.clock != nullptr ? sources.clock->WallOffset()
                                  : std::chrono::system_clock::duration{};
}

std::vector<detect::ActiveAnomaly> ShownAnomalies(const RouteSources& sources) {
  std::vector<detect::ActiveAnomaly> anomalies = sources.engine.tracker().Active();
  const auto offset = ShownWallOffset(sources);
  if (offset.count() == 0) return anomalies;
  for (detect::ActiveAnomaly& anomaly : anomalies) anomaly = detect::ToWall(anomaly, offset);
  return anomalies;
}

AgentFamilies GatherFamilies(const RouteSources& sources) {
  AgentFamilies out;
  // The agent's own families are small and made per render; the snapshots' families are read
  // where they lie (held by `snapshots` until the caller is done with them).
  out.own = sources.self_metrics.Collect();
  std::vector<prometheus::MetricFamily> detected = sources.engine.Collect();
  out.own.insert(out.own.end(), std::make_move_iterator(detected.begin()),
                 std::make_move_iterator(detected.end()));
  MetricSink hook_sink;
  sources.hooks.Export(hook_sink);
  if (const HttpServer* server = sources.http_server ? sources.http_server->load() : nullptr) {
    ExportHttpStats(server->stats(), hook_sink);
  }
  if (sources.privileges != nullptr) sources.privileges->Export(hook_sink);
  if (sources.web_security != nullptr) ExportWebSecurity(*sources.web_security, hook_sink);
  for (auto& family : hook_sink.TakeFamilies()) out.own.push_back(std::move(family));
  out.snapshots = sources.store.AllLatest();
  for (const prometheus::MetricFamily& family : out.own) out.all.push_back(&family);
  const auto offset = ShownWallOffset(sources);
  if (offset.count() != 0) {
    size_t timestamps = 0;  // reserved: `all` points into `rebased`
    for (const auto& snapshot : out.snapshots) {
      for (const auto& family : snapshot->families) timestamps += IsTimestampFamily(family);
    }
    out.rebased.reserve(timestamps);
  }
  const double offset_seconds = std::chrono::duration<double>(offset).count();
  for (const auto& snapshot : out.snapshots) {
    for (const prometheus::MetricFamily& family : snapshot->families) {
      if (offset.count() != 0 && IsTimestampFamily(family)) {
        out.rebased.push_back(Rebased(family, offset_seconds));
        out.all.push_back(&out.rebased.back());
      } else {
        out.all.push_back(&family);
      }
    }
  }
  return out;
}

std::unique_ptr<RenderCache> MakeMetricsCache(const RouteSources& sources) {
  return std::make_unique<RenderCache>(
      [sources, last_size = size_t{0}]() mutable {
        AgentFamilies families = GatherFamilies(sources);
        std::string text;
        text.reserve(last_size + last_size / 8);  // one allocation for a body like the last one
        AppendExposition(families.all, text, sources.series_filter);
        last_size = text.size();
        return text;
      },
      kRenderMaxAge);
}

std::map<std::string, Route> AgentRoutes(const RouteSources& sources, RenderCache& metrics_cache,
                                         RenderCache& status_cache) {
  std::map<std::string, Route> routes;
  routes[sources.config.telemetry_path] =
      Route{.content_type = std::string(kExpositionContentType),
            .body = {},
            .gzip = true,
            .shared_body = [&metrics_cache] { return metrics_cache.Get(); }};
  routes["/"] = Route{.content_type = "text/html; charset=utf-8",
                      .body = {},
                      .gzip = true,
                      .shared_body = [&status_cache] { return status_cache.Get(); },
                      .headers = status::StatusPageHeaders()};
  routes["/healthz"] =
      Route{"text/plain; charset=utf-8", [] { return std::string("ok\n"); }, false, {}};
  routes["/api/v1/anomalies"] = Route{
      "application/json", [sources] { return AnomaliesJson(ShownAnomalies(sources)); }, true, {}};
  routes["/api/v1/link-events"] =
      Route{"application/json",
            [sources] {
              return LinkEventsJson(sources.link_events, sources.rdma_events, kLinkEventsShown,
                                    ShownWallOffset(sources));
            },
            true,
            {}};
  return routes;
}

}  // namespace fabricwatch::exporter
