#pragma once
// The agent's HTTP routes: /metrics (everything merged and rendered once per 100 ms at most,
// shared among concurrent scrapers), the status page at / (likewise shared, status_page.h),
// /healthz and the JSON API. The routes read the parts they show through references; those
// parts must outlive the HTTP server.

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "exporter/config/config.h"
#include "exporter/http/http_server.h"
#include "exporter/http/render.h"
#include "exporter/http/render_cache.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/snapshot_store.h"
#include "exporter/pipeline/transition_history.h"
#include "exporter/privileges.h"
#include "exporter/remediation/hook_runner.h"

namespace fabricwatch::sys {
class LinkEventLog;
class RdmaPortEventLog;
}  // namespace fabricwatch::sys

namespace fabricwatch::exporter {

class WebSecurity;

// What the routes show.
struct RouteSources {
  const Config& config;
  const SnapshotStore& store;
  const SelfMetrics& self_metrics;
  DetectorEngine& engine;
  const HookRunner& hooks;
  const PrivilegeLog* privileges = nullptr;        // null: not reported (tests)
  const sys::LinkEventLog* link_events = nullptr;  // null: no listener
  const sys::RdmaPortEventLog* rdma_events = nullptr;
  // The server whose counters /metrics shows (fabricwatch_http_*); set once it runs.
  const std::atomic<const HttpServer*>* http_server = nullptr;
  // The anomaly transitions of the last hour, for the status page; null: none shown (tests).
  const TransitionHistory* transitions = nullptr;
  // The series budget of /metrics (exporter/pipeline/series_budget.h); null: everything.
  // Only the /metrics render uses it, one render at a time.
  SeriesFilter* series_filter = nullptr;
  // --web.config.file's reloads and protections (fabricwatch_web_*); null: not reported (tests).
  const WebSecurity* web_security = nullptr;
  // The agent's clock (base/agent_clock.h): the times shown are rebased by its
  // WallOffset(). Null: shown as they are (tests).
  const Clock* clock = nullptr;
};

// Clock::WallOffset() of the sources' clock; zero without one.
std::chrono::system_clock::duration ShownWallOffset(const RouteSources& sources);
// The active anomalies with their times in wall time.
std::vector<detect::ActiveAnomaly> ShownAnomalies(const RouteSources& sources);

// Every family /metrics serves, at one moment: the agent's own (self, engine, hooks, HTTP,
// privileges) and the latest snapshots'. `all` points into `own` and `snapshots`.
struct AgentFamilies {
  std::vector<prometheus::MetricFamily> own;
  // The snapshots' *_timestamp_seconds families rebased to wall time (only after a step).
  std::vector<prometheus::MetricFamily> rebased;
  std::vector<std::shared_ptr<const Snapshot>> snapshots;
  std::vector<const prometheus::MetricFamily*> all;
  AgentFamilies() = default;
  AgentFamilies(AgentFamilies&&) = default;  // the pointers stay valid: vectors move their storage
};
AgentFamilies GatherFamilies(const RouteSources& sources);

// The /metrics render, shared among scrapers (RenderCache). Keep it alive as long as the routes.
std::unique_ptr<RenderCache> MakeMetricsCache(const RouteSources& sources);

// Every route of the agent; /metrics serves `metrics_cache`, / serves `status_cache`
// (MakeStatusCache, exporter/pages/status_page.h).
std::map<std::string, Route> AgentRoutes(const RouteSources& sources, RenderCache& metrics_cache,
                                         RenderCache& status_cache);

}  // namespace fabricwatch::exporter
