#pragma once
// Agent: the composition root. From a parsed Config it builds every part of the agent out of the
// registries (collectors/core/collector_info.h, detectors/core/detector_info.h): the kernel event
// listeners the enabled collectors declare, one ethtool source per collector that reads one,
// the collectors, the detectors and their engine, the drain hooks, the snapshot store, the
// scheduler and the HTTP routes. main() parses flags, handles signals and runs it; a SIGHUP
// reload creates a new Agent from the new Config, stops the old one and starts the new one.
//
//   auto agent = Agent::Create(config);   // builds, starts nothing; errors name the part
//   agent->Start();                        // loads the state file; HTTP server, detector engine,
//                                          // scheduler, hooks
//   ... wait for a stop signal ...
//   agent->Stop();                         // false: an HTTP client or a stuck collector could
//                                          // not be stopped in time
//
// Thread-safety: Create/Start/Stop from one thread.

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "base/agent_clock.h"
#include "collectors/core/collector.h"
#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/fd_budget.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/kmsg_cursor.h"
#include "collectors/sys/sysfs.h"
#include "exporter/config/config.h"
#include "exporter/http/http_server.h"
#include "exporter/http/render_cache.h"
#include "exporter/http/web_security.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/event_sources.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/series_budget.h"
#include "exporter/pipeline/snapshot_store.h"
#include "exporter/pipeline/transition_history.h"
#include "exporter/privileges.h"
#include "exporter/remediation/hook_runner.h"
#include "exporter/remediation/process_launcher.h"

namespace fabricwatch::exporter {

class Agent {
 public:
  // Builds everything `config` enables. Fails (with the part's name) when a collector or
  // detector rejects its options; the HTTP server is bound only by Start().
  static Result<std::unique_ptr<Agent>> Create(const Config& config);
  ~Agent();

  // --config.check: collects every enabled collector once and prints a summary to stdout.
  // Returns the process exit code (0: every collector usable, 1 otherwise).
  int ConfigCheck();

  // --shape.print: collects the collectors the fabric shape reads once and prints the shape as
  // YAML (detectors/link_degraded/port_shape.h). Returns the exit code (1 without rdma).
  int PrintShape();

  // Loads the --web.config.file settings (TLS, basic auth, headers; plain HTTP without one),
  // binds the HTTP server and starts the engine, the scheduler and the hooks.
  Status Start();

  // The HTTP ports bound by Start() (resolves port 0); empty before.
  std::vector<int> ports() const;

  // Stops everything at once; the state file is saved in any case. HTTP and the collectors get
  // a bounded wait; false when a route was still rendering at the end of it, or a collection
  // was stuck in a read (logged by the scheduler): an HTTP worker or a collector thread may
  // still use the agent, so the caller must leave without destroying it.
  bool Stop();

  // Loads --web.config.file and everything it names (Start() does it when it has not been done).
  // A SIGHUP reload calls it on the new agent before it stops the running one, so an invalid web
  // configuration keeps the running agent (exporter/main.cc). While the agent runs, the server
  // re-reads the files by itself when they change (WebSecurity::RequestCheck).
  // `running`: on a SIGHUP reload, the running agent's generation, which the new file may not
  // weaken by a missing field (exporter/http/web_security_rules.h).
  Status LoadWebConfig(std::shared_ptr<const WebSecurityState> running = nullptr);

  // The web security settings the HTTP server enforces; null before Start().
  std::shared_ptr<WebSecurity> web_security() const { return web_security_; }

 private:
  explicit Agent(const Config& config);
  Status Build();

  Config config_;
  // Detection time: wall time at start advanced by the monotonic clock, so that no window jumps
  // with a step of the wall clock; displayed times are rebased by its measured offset (issue 39
  // item 7). Collectors, event listeners, the engine and the hooks all read it.
  const AgentClock clock_;
  const sys::RealFileSystem filesystem_;
  // The counter files the collectors may keep open: what the open-file limit leaves after the
  // reserve for HTTP and the state file (exporter/file_limit.h).
  sys::FdBudget fd_budget_;
  const sys::SysFs sysfs_;
  EventSources events_;
  // The kmsg collector's position in the kernel log, shared with the engine's state file; it
  // outlives collectors rebuilt by a reload, which resume from it.
  sys::KmsgCursor kmsg_cursor_;
  // Raised findings so far: a raise wakes the jobs collector, so the finding's jobs are known
  // within a scan rather than at the next 30 s one (docs/design.md §5.10).
  std::atomic<uint64_t> raised_findings_{0};
  // Before the ethtool sources, which report to it.
  std::unique_ptr<PrivilegeLog> privileges_;
  std::vector<std::unique_ptr<sys::EthtoolSource>> ethtool_sources_;
  std::vector<ScheduledCollector> collectors_;
  PosixProcessLauncher hook_launcher_;
  // The last hour's anomaly transitions for the status page; a tracker observer, so declared
  // before the engine that calls it.
  TransitionHistory transition_history_;
  // probe.enabled only; the hooks ask it to confirm drains (hooks.confirm_with_probe).
  std::unique_ptr<probe::ProbeRunner> prober_;
  std::unique_ptr<HookRunner> hooks_;
  std::unique_ptr<DetectorEngine> engine_;
  std::unique_ptr<SnapshotStore> store_;
  std::unique_ptr<SelfMetrics> self_metrics_;
  std::unique_ptr<Scheduler> scheduler_;
  std::optional<SeriesBudget> series_budget_;  // before the cache whose render uses it
  std::unique_ptr<RenderCache> metrics_cache_;
  std::unique_ptr<RenderCache> status_cache_;
  std::shared_ptr<WebSecurity> web_security_;
  std::unique_ptr<HttpServer> server_;
  std::atomic<const HttpServer*> server_for_metrics_{nullptr};  // what /metrics reports on
};

}  // namespace fabricwatch::exporter
