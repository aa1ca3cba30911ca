// fabricwatch: the agent. The only place in the program that exits.

#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "collectors/core/registry.h"
#include "collectors/sys/ethtool_kernel.h"
#include "collectors/sys/ethtool_replay.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/link_events.h"
#include "collectors/sys/sysfs.h"
#include "collectors/sys/verbs_events.h"
#include "detectors/core/registry.h"
#include "detectors/core/state_file.h"
#include "exporter/config.h"
#include "exporter/detector_engine.h"
#include "exporter/file_limit.h"
#include "exporter/hook_runner.h"
#include "exporter/http_server.h"
#include "exporter/logging.h"
#include "exporter/pages.h"
#include "exporter/render.h"
#include "exporter/render_cache.h"
#include "exporter/scheduler.h"
#include "exporter/self_metrics.h"
#include "exporter/snapshot_store.h"
#include "exporter/version.h"

namespace fabricwatch::exporter {
namespace {

constexpr size_t kLinkEventsShown = 256;

// The agent's environment, for the hooks' pass_env (a hook otherwise gets a clean one).
std::map<std::string, std::string> AgentEnvironment() {
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (size_t eq = text.find('='); eq != std::string_view::npos) {
      env.emplace(text.substr(0, eq), text.substr(eq + 1));
    }
  }
  return env;
}
// How long a stop waits for in-flight HTTP requests before exiting anyway.
constexpr std::chrono::milliseconds kHttpStopBudget{400};

// Kept-open counter files cost one fd each; Go exporters get the hard limit for free, we ask.
bool IsHostSysfs(const std::string& path) {
  std::error_code ec;
  return std::filesystem::equivalent(path, "/sys", ec);
}

int ConfigCheck(const Config& config, std::vector<ScheduledCollector>& collectors,
                const Clock& clock) {
  std::printf("fabricwatch %s: configuration is valid (sysfs %s, listen %s%s%s)\n", kVersion,
              config.sysfs_path.c_str(), config.listen_address.c_str(),
              config.config_file.empty() ? "" : ", file ", config.config_file.c_str());
  std::printf("%-12s %-10s %8s %8s %10s  %s\n", "COLLECTOR", "STATUS", "SERIES", "ERRORS",
              "DURATION", "DETAIL");
  bool failed = false;
  for (ScheduledCollector& collector : collectors) {
    CollectionOutcome outcome = CollectOnce(collector, clock);
    const Status& status = outcome.run.status;
    const char* word = status.ok() ? (outcome.run.partial_errors > 0 ? "partial" : "ok")
                       : status.no_data() ? "no-data"
                                          : "FAILED";
    failed |= !status.ok() && !status.no_data();
    std::string detail = status.ok() ? "" : status.message();
    std::printf("%-12s %-10s %8zu %8zu %9.4fs  %s\n", collector.name.c_str(), word,
                outcome.run.series, outcome.run.partial_errors, outcome.run.duration_seconds,
                detail.c_str());
    for (const Status& error : outcome.errors) {
      std::printf("%-12s   partial error: %s\n", "", error.ToString().c_str());
    }
  }
  std::printf("%s\n", failed ? "config check FAILED: a collector cannot collect on this host"
                             : "config check passed");
  return failed ? 1 : 0;
}

int Main(int argc, char** argv) {
  auto parsed = ParseCommandLine(argc, argv);
  if (!parsed) {
    std::fprintf(stderr, "fabricwatch: %s\n", parsed.error().message().c_str());
    return 2;
  }
  if (parsed->action != Action::kRun) {
    std::fputs(parsed->output.c_str(), stdout);
    return 0;
  }
  const Config& config = parsed->config;
  SetupLogging(config.log_level, config.log_format == "json" ? LogFormat::kJson
                                                             : LogFormat::kLogfmt);
  auto log = GetLogger("main");
  RaiseFileLimit(*log);
  // glibc gives every thread that allocates its own malloc arena (up to 8 per core), and the
  // agent's mostly idle threads then keep ~8 MB of freed heap resident. Two arenas keep the RSS
  // near 12 MB on an 8-port node (tools/bench) without putting every thread behind one lock. An
  // operator's MALLOC_ARENA_MAX still wins.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
  // A fixed mmap threshold: each /metrics body (~0.5 MB on an 8-port RoCE node, one render per
  // 100 ms at most) gets its own mapping, given back whole when the last scraper lets go of it.
  // glibc's default threshold rises to the size of the first such block freed, and bodies then
  // come from the heap, leaving freed holes resident between renders.
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 256 * 1024);

  // Block the stop signals in every thread we start; the main thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const SystemClock clock;
  const sys::RealFileSystem filesystem;
  const sys::SysFs sysfs(config.sysfs_path, filesystem);

  // Link events come from this host's kernel, so they only describe a real /sys, not a replay.
  std::unique_ptr<sys::LinkEventLog> link_log;
  std::unique_ptr<sys::LinkEventListener> listener;
  auto netdev = config.collectors.find("netdev");
  if (!config.config_check && netdev != config.collectors.end() && netdev->second.enabled) {
    if (IsHostSysfs(config.sysfs_path)) {
      link_log = std::make_unique<sys::LinkEventLog>();
      auto started = sys::LinkEventListener::Start(*link_log, GetLogger("link_events"));
      if (started) {
        listener = std::move(*started);
      } else {
        log->warn("link-event listener not started, flaps are seen by polling only: {}",
                  started.error().ToString());
      }
    } else {
      // No log at all (not one reporting "listener down"): a replay root has no kernel events,
      // and fabricwatch_link_listener_up is not exported, as for the verbs listener.
      log->info("--path.sysfs is a replay root: the rtnetlink link-event listener is off");
    }
  }

  // IB port events from libibverbs: as above, only for the host's own devices.
  std::unique_ptr<sys::RdmaPortEventLog> rdma_log;
  std::unique_ptr<sys::VerbsPortListener> verbs_listener;
  auto rdma = config.collectors.find("rdma");
  if (!config.config_check && rdma != config.collectors.end() && rdma->second.enabled &&
      IsHostSysfs(config.sysfs_path)) {
    rdma_log = std::make_unique<sys::RdmaPortEventLog>();
    auto started = sys::VerbsPortListener::Start(*rdma_log, GetLogger("verbs_events"));
    if (started) {
      verbs_listener = std::move(*started);
    } else {
      log->warn("libibverbs port-event listener not started, IB port state comes from polling "
                "only: {}",
                started.error().ToString());
      rdma_log.reset();
    }
  }

  // ethtool data: a replay directory when --path.ethtool is set; else the kernel, but only for
  // the host's own netdevs (a replay sysfs root names netdevs this kernel does not have). One
  // source per collector that reads it: each collector samples on its own thread, and a source
  // (its netlink and ioctl sockets, its scratch buffers) serves one thread.
  const bool ethtool_replay = !config.ethtool_path.empty();
  const bool ethtool_kernel = !ethtool_replay && IsHostSysfs(config.sysfs_path);
  std::vector<std::unique_ptr<sys::EthtoolSource>> ethtool_sources;
  bool ethtool_kernel_warned = false;
  const auto new_ethtool_source = [&]() -> sys::EthtoolSource* {
    if (ethtool_replay) {
      return ethtool_sources
          .emplace_back(std::make_unique<sys::ReplayEthtool>(config.ethtool_path, filesystem))
          .get();
    }
    if (!ethtool_kernel) return nullptr;
    auto kernel = sys::KernelEthtool::Create();
    if (!kernel) {
      if (!std::exchange(ethtool_kernel_warned, true)) {
        log->warn("ethtool kernel interface unavailable: {}", kernel.error().ToString());
      }
      return nullptr;
    }
    return ethtool_sources.emplace_back(std::move(*kernel)).get();
  };

  std::vector<ScheduledCollector> collectors;
  std::vector<std::pair<std::string, std::chrono::milliseconds>> enabled;
  for (const CollectorInfo& info : CollectorRegistry()) {
    const CollectorConfig& c = config.collectors.at(std::string(info.name));
    if (!c.enabled) continue;
    auto logger = GetLogger(std::string(info.name));
    CollectorContext context{.sysfs = sysfs,
                             .link_events = link_log.get(),
                             .rdma_events = rdma_log.get(),
                             .ethtool = info.reads_ethtool ? new_ethtool_source() : nullptr,
                             .clock = clock,
                             .logger = logger,
                             .options = c.options,
                             .interval = c.interval};
    auto collector = info.factory(context);
    if (!collector) {
      std::fprintf(stderr, "fabricwatch: collector %s: %s\n", std::string(info.name).c_str(),
                   collector.error().message().c_str());
      return 2;
    }
    collectors.push_back({std::string(info.name), c.interval, std::move(*collector), logger});
    enabled.emplace_back(std::string(info.name), c.interval);
  }

  if (config.config_check) return ConfigCheck(config, collectors, clock);

  // Detectors (validated by ParseCommandLine already).
  std::vector<std::unique_ptr<detect::Detector>> detectors;
  for (const detect::DetectorInfo& info : detect::DetectorRegistry()) {
    const DetectorConfig& d = config.detectors.at(std::string(info.name));
    if (!d.enabled) continue;
    auto detector = info.factory(d.options);
    if (!detector) {
      std::fprintf(stderr, "fabricwatch: %s\n", detector.error().message().c_str());
      return 2;
    }
    detectors.push_back(std::move(*detector));
  }
  std::optional<detect::StateFile> state_file;
  if (!config.state_file.empty()) {
    // Keyed by boot ID (detection.md §0.2); the real /proc, never the replay root.
    auto boot_id = detect::ReadBootId(filesystem);
    if (!boot_id) log->warn("cannot read the boot id: {}", boot_id.error().ToString());
    state_file.emplace(config.state_file, boot_id.value_or("unknown"));
  }
  // Node-drain hooks run on their own thread; the anomaly tracker hands them its transitions
  // with hooks.OnTransition() (never blocks).
  PosixProcessLauncher hook_launcher;
  HookRunner hooks(config.hooks, hook_launcher, clock, GetLogger("hooks"), AgentEnvironment());
  DetectorEngine engine(std::move(detectors), clock, link_log.get(), std::move(state_file),
                        GetLogger("detectors"));
  engine.tracker().Subscribe(detect::LogTransitions(GetLogger("anomalies")));
  // Declared before the engine, so the runner outlives every call the engine's thread makes.
  engine.tracker().Subscribe(
      [&hooks](const detect::AnomalyTransition& transition) { hooks.OnTransition(transition); });
  engine.LoadState();

  SnapshotStore store(config.history_samples);
  store.SetPublishListener(
      [&engine](const std::shared_ptr<const Snapshot>& snapshot) { engine.Submit(snapshot); });
  SelfMetrics self_metrics(enabled);
  Scheduler scheduler(std::move(collectors), store, self_metrics, clock);

  std::map<std::string, Route> routes;
  // Everything /metrics shows, merged and rendered; RenderCache shares one render among
  // concurrent scrapers (at most 100 ms old, against 1 s sampling).
  RenderCache metrics_cache(
      [&, last_size = size_t{0}]() mutable {
        // The agent's own families are small and made per render; the snapshots' families are
        // read where they lie (held by `snapshots` until the text is written).
        std::vector<prometheus::MetricFamily> own = self_metrics.Collect();
        std::vector<prometheus::MetricFamily> detected = engine.Collect();
        own.insert(own.end(), std::make_move_iterator(detected.begin()),
                   std::make_move_iterator(detected.end()));
        MetricSink hook_sink;
        hooks.Export(hook_sink);
        for (auto& family : hook_sink.TakeFamilies()) own.push_back(std::move(family));
        const std::vector<std::shared_ptr<const Snapshot>> snapshots = store.AllLatest();
        std::vector<const prometheus::MetricFamily*> families;
        for (const prometheus::MetricFamily& family : own) families.push_back(&family);
        for (const auto& snapshot : snapshots) {
          for (const prometheus::MetricFamily& family : snapshot->families) {
            families.push_back(&family);
          }
        }
        std::string text;
        text.reserve(last_size + last_size / 8);  // one allocation for a body like the last one
        AppendExposition(families, text);
        last_size = text.size();
        return text;
      },
      std::chrono::milliseconds(100));
  routes[config.telemetry_path] = Route{.content_type = std::string(kExpositionContentType),
                                        .body = {},
                                        .gzip = true,
                                        .shared_body = [&] { return metrics_cache.Get(); }};
  routes["/"] = Route{"text/html; charset=utf-8",
                      [&] {
                        return LandingPage(config, self_metrics.Collectors(),
                                           engine.tracker().Active());
                      }, true};
  routes["/healthz"] = Route{"text/plain; charset=utf-8", [] { return std::string("ok\n"); }};
  routes["/api/v1/anomalies"] = Route{
      "application/json", [&] { return AnomaliesJson(engine.tracker().Active()); }, true};
  routes["/api/v1/link-events"] =
      Route{"application/json",
            [&] { return LinkEventsJson(link_log.get(), rdma_log.get(), kLinkEventsShown); },
            true};

  auto address = ParseListenAddress(config.listen_address);  // validated already
  auto server = HttpServer::Start(*address, std::move(routes), GetLogger("http"));
  if (!server) {
    log->error("{}", server.error().message());
    return 1;
  }
  std::string bound;
  for (int port : (*server)->ports()) bound += (bound.empty() ? "" : ",") + std::to_string(port);
  log->info("fabricwatch {} (revision {}) listening on {} (port {}), metrics at {}, sysfs {}",
            kVersion, kRevision, config.listen_address, bound, config.telemetry_path,
            config.sysfs_path);
  engine.Start();
  scheduler.Start();
  hooks.Start();

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  log->info("received {}, stopping", signal_number == SIGTERM ? "SIGTERM" : "SIGINT");
  // Stop everything at once; the listener and collectors return within their poll timeouts
  // (≤ 200 ms). HTTP gets a bounded wait: a client holding an idle connection would otherwise
  // delay civetweb's stop by up to 2 s (see http_server.h).
  const auto stop_start = std::chrono::steady_clock::now();
  std::jthread stop_listener([&] {
    listener.reset();
    verbs_listener.reset();
  });
  std::jthread stop_collectors([&] {
    scheduler.Stop();
    engine.Stop();  // after the collectors: no more snapshots; saves the state file
    hooks.Stop();  // waits for a hook already running (bounded by its timeout)
  });
  const bool http_stopped = (*server)->Stop(kHttpStopBudget);
  stop_listener.join();
  stop_collectors.join();
  log->debug("shutdown took {} ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - stop_start)
                                         .count());
  if (!http_stopped) {
    // civetweb workers may still call the routes, which reference this frame: leave without
    // unwinding it. The kernel closes the idle client connections.
    log->info("stopped (an idle HTTP client connection was dropped)");
    spdlog::shutdown();
    std::_Exit(0);
  }
  server->reset();
  log->info("stopped");
  return 0;
}

}  // namespace
}  // namespace fabricwatch::exporter

int main(int argc, char** argv) { return fabricwatch::exporter::Main(argc, argv); }
