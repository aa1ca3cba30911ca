#pragma once
// Agent: the composition root. From a parsed Config it builds every part of the agent out of the
// registries (collectors/core/registry.h, detectors/core/registry.h): the kernel event
// listeners the enabled collectors declare, one ethtool source per collector that reads one,
// the collectors, the detectors and their engine, the drain hooks, the snapshot store, the
// scheduler and the HTTP routes. main() parses flags, handles signals and runs it.
//
//   auto agent = Agent::Create(config);   // builds, starts nothing; errors name the part
//   agent->Start();                        // HTTP server, detector engine, scheduler, hooks
//   ... wait for a stop signal ...
//   agent->Stop();                         // false: an HTTP client could not be dropped in time
//
// Thread-safety: Create/Start/Stop from one thread.

#include <memory>
#include <vector>

#include "collectors/core/collector.h"
#include "collectors/core/status.h"
#include "collectors/sys/ethtool.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "exporter/config/config.h"
#include "exporter/http/http_server.h"
#include "exporter/http/render_cache.h"
#include "exporter/pipeline/detector_engine.h"
#include "exporter/pipeline/event_sources.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/snapshot_store.h"
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

  // Binds the HTTP server and starts the engine, the scheduler and the hooks.
  Status Start();

  // Stops everything at once. HTTP gets a bounded wait; false when a client still held a
  // connection at the end of it: civetweb workers may still call the routes, so the caller must
  // leave without destroying the agent.
  bool Stop();

 private:
  explicit Agent(const Config& config);
  Status Build();

  Config config_;
  const SystemClock clock_;
  const sys::RealFileSystem filesystem_;
  const sys::SysFs sysfs_;
  EventSources events_;
  // Before the ethtool sources, which report to it.
  std::unique_ptr<PrivilegeLog> privileges_;
  std::vector<std::unique_ptr<sys::EthtoolSource>> ethtool_sources_;
  std::vector<ScheduledCollector> collectors_;
  PosixProcessLauncher hook_launcher_;
  std::unique_ptr<HookRunner> hooks_;
  std::unique_ptr<DetectorEngine> engine_;
  std::unique_ptr<SnapshotStore> store_;
  std::unique_ptr<SelfMetrics> self_metrics_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<RenderCache> metrics_cache_;
  std::unique_ptr<HttpServer> server_;
};

}  // namespace fabricwatch::exporter
