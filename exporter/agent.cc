#include "exporter/agent.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <utility>

#include "collectors/collector_set.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/registry.h"
#include "detectors/core/state_file.h"
#include "detectors/link_degraded/port_shape.h"
#include "exporter/collector_sources.h"
#include "exporter/http/listen_address.h"
#include "exporter/file_limit.h"
#include "exporter/pages/routes.h"
#include "exporter/pages/status_page.h"
#include "exporter/http/web_security_policy.h"
#include "exporter/logging.h"
#include "exporter/privileges.h"
#include "exporter/probe/probe_sources.h"
#include "exporter/probe/process_prober.h"
#include "exporter/version.h"

namespace fabricwatch::exporter {
namespace {

// How long a stop waits for in-flight HTTP requests before giving up on them.
constexpr std::chrono::milliseconds kHttpStopBudget{400};
// How long a stop waits for the collector threads: one stuck in a read (a FIFO, a hung device)
// is left running and main() leaves without it, after the detector engine saved the state.
constexpr std::chrono::milliseconds kCollectorStopBudget{1000};

// What wakes a collector between its intervals (scheduler.h EventWake), as its registry line says:
//   - a libibverbs port event (rdma, peer): the log notifies the collector's thread, so the
//     detectors see the new IB port state within 100 ms;
//   - a raised finding (jobs): a signal of its own in `raised_wakes`, which the raised-finding
//     observer notifies (an eventfd that each waiter drains: one per waiter).
// A collector has one signal; the registry test holds that none asks for both.
// The registry bounds how often events may wake it (peer: an SMP query per port up event, issue
// 24; jobs: a /proc scan per raised finding).
EventWake WakeOf(const CollectorInfo& info, sys::RdmaPortEventLog* rdma_log,
                 std::vector<std::shared_ptr<WakeSignal>>& raised_wakes) {
  EventWake wake;
  if (info.reads_rdma_port_events && rdma_log != nullptr) {
    auto signal = std::make_shared<WakeSignal>();
    rdma_log->AddListener([signal] { signal->Notify(); });
    wake.signal = std::move(signal);
  } else if (info.wakes_on_raised_finding) {
    raised_wakes.push_back(std::make_shared<WakeSignal>());
    wake.signal = raised_wakes.back();
  }
  if (info.min_wake_gap.count() > 0) wake.min_gap = info.min_wake_gap;
  return wake;
}

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

// The active probe's runner (issue 37). Each probe is a child process (`fabricwatch probe ...
// --json`) with a hard deadline: a verbs call stuck in the driver is killed with it, never the
// agent's thread. Its callables read the store lazily.
std::unique_ptr<probe::ProbeRunner> NewProbeRunner(const Config& config, ProcessLauncher& launcher,
                                                   const Clock& clock, const SnapshotStore& store) {
  probe::ProcessProberOptions process;
  process.env = probe::ProbeChildEnvironment(environ);
  auto runner = std::make_unique<probe::ProbeRunner>(
      config.probe, std::make_unique<probe::ProcessPortProber>(launcher, process), clock,
      GetLogger("probe"), probe::JobsFromStore(store),
      probe::ExpectedRateFromStore(store, config.shape_file));
  if (config.hooks.confirm_with_probe) {
    const std::vector<probe::PortRef> ports = probe::ListRdmaPorts(config.roots.sysfs);
    if (auto warning = probe::LoopbackOnlyWarning(ports, config.probe)) {
      GetLogger("probe")->warn("{}", *warning);
    }
  }
  return runner;
}

}  // namespace

Agent::Agent(const Config& config)
    : config_(config),
      fd_budget_(KeptOpenFileBudget(OpenFileLimit()), GetLogger("main")),
      sysfs_(config_.roots.sysfs, filesystem_, &fd_budget_),
      events_(config_, clock_) {}

Agent::~Agent() {
  // The runner's policy thread asks the engine for the jobs of held drains: stop it first.
  if (hooks_) hooks_->Stop();
  // After the hooks, which ask it for probes; its callbacks only queue into the stopped runner.
  if (prober_) prober_->Stop();
}

Result<std::unique_ptr<Agent>> Agent::Create(const Config& config) {
  std::unique_ptr<Agent> agent(new Agent(config));
  if (Status s = agent->Build(); !s.ok()) return Error(s);
  return agent;
}

Status Agent::Build() {
  privileges_ = std::make_unique<PrivilegeLog>(
      FeaturesInUse(config_), EffectiveCapabilities(filesystem_), GetLogger("privileges"));
  const CollectorSources sources =
      ConfiguredCollectorSources(config_, {.sysfs = sysfs_,
                                           .clock = clock_,
                                           .filesystem = filesystem_,
                                           .privileges = *privileges_,
                                           .kmsg_cursor = &kmsg_cursor_,
                                           .link_events = events_.link_log(),
                                           .rdma_events = events_.rdma_log()});
  auto built = BuildCollectors(sources, ConfiguredCollectors(config_));
  if (!built) return built.error();
  std::vector<std::pair<std::string, std::chrono::milliseconds>> enabled;
  // One per collector the registry says a raised finding wakes (an eventfd that each waiter
  // drains: one signal per waiter), notified by the raised-finding observer below.
  std::vector<std::shared_ptr<WakeSignal>> raised_wakes;
  for (BuiltCollector& b : *built) {
    if (b.ethtool) ethtool_sources_.push_back(std::move(b.ethtool));
    enabled.emplace_back(std::string(b.info->name), b.interval);
    collectors_.push_back(
        {std::string(b.info->name), b.interval, std::move(b.collector), std::move(b.logger)});
    collectors_.back().wake = WakeOf(*b.info, events_.rdma_log(), raised_wakes);
  }
  // --config.check and --shape.print collect once themselves: no detectors, no scheduler.
  // The series budget of /metrics; an unknown --metrics.include is a configuration error, so
  // --config.check reports it too.
  auto budget = SeriesBudget::Create(
      SeriesBudgetOptions{.all = config_.metrics_all, .include = config_.metrics_include});
  if (!budget) return budget.error();
  series_budget_.emplace(std::move(*budget));
  if (config_.config_check || config_.shape_print) return Status::Ok();

  auto detectors = detect::BuildDetectors(ConfiguredDetectors(config_));
  if (!detectors) return detectors.error();
  std::optional<detect::StateFile> state_file;
  if (!config_.state_file.empty()) {
    // Keyed by boot ID (docs/detection.md §0.2); the real /proc, never the replay root.
    auto boot_id = detect::ReadBootId(filesystem_);
    if (!boot_id)
      GetLogger("main")->warn("cannot read the boot id: {}", boot_id.error().ToString());
    state_file.emplace(config_.state_file, boot_id.value_or("unknown"));
  }
  // Node-drain hooks run on their own thread; the anomaly tracker hands them its transitions
  // with OnTransition() (never blocks). The runner is declared before the engine, so it outlives
  // every call the engine's thread makes.
  // hooks.hold_drain_while_jobs asks, once a second per held drain, which jobs the engine now
  // attributes to the finding. ~Agent() stops the runner before the engine goes.
  auto current_jobs =
      [this](const detect::AnomalyTransition& t) -> std::optional<std::vector<std::string>> {
    if (engine_ == nullptr) return std::nullopt;
    for (const detect::ActiveAnomaly& a : engine_->tracker().Active()) {
      if (a.detector == t.detector && a.finding.severity == t.finding.severity &&
          a.finding.entity == t.finding.entity) {
        return a.finding.jobs;
      }
    }
    return std::nullopt;
  };
  // The active probe (issue 37), only when enabled: one thread, one probe at a time. Its
  // callables read the store lazily (made below, before anything asks for a probe).
  if (config_.probe.enabled) {
    store_ = std::make_unique<SnapshotStore>();
    prober_ = NewProbeRunner(config_, hook_launcher_, clock_, *store_);
  }
  hooks_ = std::make_unique<HookRunner>(config_.hooks, hook_launcher_, clock_, GetLogger("hooks"),
                                        AgentEnvironment(), std::move(current_jobs), prober_.get());
  EngineOptions engine_options;
  engine_options.escalation.count = config_.escalation_count;
  engine_options.escalation.window = config_.escalation_window;
  if (prober_) {
    // The port's current probe result (younger than probe.min_interval, the runner's own
    // notion of current) joins its findings' evidence: /api/v1/anomalies, the status page and
    // the state file show what the probe found (issue 37).
    engine_options.annotate = [this](detect::Finding& finding) {
      const std::optional<probe::PortRef> port = ProbePortOf(finding);
      if (!port) return;
      const std::optional<probe::ProbeReport> last = prober_->Last(*port);
      if (!last || clock_.Now() - last->time >= config_.probe.min_interval) return;
      for (const probe::ProbeEvidenceValue& e : probe::ProbeEvidence(*last)) {
        finding.evidence.push_back({std::string(e.name), e.value});
      }
    };
  }
  engine_ = std::make_unique<DetectorEngine>(std::move(*detectors), clock_, events_.link_log(),
                                             std::move(state_file), GetLogger("detectors"),
                                             engine_options);
  engine_->SetKmsgCursor(&kmsg_cursor_);
  engine_->tracker().Subscribe(detect::LogTransitions(GetLogger("anomalies")));
  engine_->tracker().Subscribe([this, raised_wakes](const detect::AnomalyTransition& t) {
    if (!t.raised) return;
    raised_findings_.fetch_add(1);
    for (const auto& wake : raised_wakes) wake->Notify();
  });
  engine_->tracker().Subscribe(
      [hooks = hooks_.get()](const detect::AnomalyTransition& t) { hooks->OnTransition(t); });
  engine_->tracker().Subscribe(
      [history = &transition_history_](const detect::AnomalyTransition& t) { history->Record(t); });

  if (store_ == nullptr) store_ = std::make_unique<SnapshotStore>();
  store_->SetPublishListener(
      [engine = engine_.get()](const std::shared_ptr<const Snapshot>& s) { engine->Submit(s); });
  self_metrics_ = std::make_unique<SelfMetrics>(enabled);
  scheduler_ = std::make_unique<Scheduler>(std::move(collectors_), *store_, *self_metrics_, clock_);
  return Status::Ok();
}

namespace {

// --web.config.file: Plain() without one; otherwise the file and everything it names, loaded and
// checked (an error names the file and the field).
Result<std::shared_ptr<WebSecurity>> LoadWebSecurity(
    const Config& config, std::shared_ptr<const WebSecurityState> running) {
  if (config.web_config_file.empty()) return WebSecurity::Plain(config.web_healthz_unauthenticated);
  auto web = WebSecurity::Load(config.web_config_file, config.web_healthz_unauthenticated,
                               GetLogger("web"), std::move(running));
  if (!web) return Error(web.error().WithContext("--web.config.file"));
  return web;
}

// What --config.check prints about the web configuration.
void PrintWebSecurity(const WebSecurityState& state) {
  std::printf("web config %s: TLS %s, basic auth %s, %zu extra response header(s), /healthz %s\n",
              state.source().c_str(), state.tls_context() != nullptr ? "on" : "off",
              state.auth_required("/metrics") ? "on" : "off", state.headers().size(),
              state.auth_required("/healthz") ? "authenticated" : "unauthenticated");
}

}  // namespace

int Agent::ConfigCheck() {
  std::printf("fabricwatch %s: configuration is valid (sysfs %s, listen %s%s%s)\n", kVersion,
              config_.roots.sysfs.c_str(), config_.listen_address.c_str(),
              config_.config_file.empty() ? "" : ", file ", config_.config_file.c_str());
  bool web_failed = false;
  if (!config_.web_config_file.empty()) {
    auto web = LoadWebSecurity(config_, nullptr);
    if (web) {
      PrintWebSecurity(*(*web)->Current());
    } else {
      web_failed = true;
      std::printf("web config FAILED: %s\n", web.error().message().c_str());
    }
  }
  std::printf("%-12s %-10s %8s %8s %10s  %s\n", "COLLECTOR", "STATUS", "SERIES", "ERRORS",
              "DURATION", "DETAIL");
  bool failed = false;
  for (ScheduledCollector& collector : collectors_) {
    CollectionOutcome outcome = CollectOnce(collector, clock_);
    const Status& status = outcome.run.status;
    const char* word = status.ok()        ? (outcome.run.partial_errors > 0 ? "partial" : "ok")
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
  // Every hook's executable, for the user it runs as (exporter/remediation/hook_config.h).
  auto credentials = ResolveHookCredentials(config_.hooks);  // resolved by Validate() already
  for (const HookSpec& hook : config_.hooks.hooks) {
    const Status status =
        credentials ? CheckHookExecutable(hook, *credentials) : credentials.error();
    failed |= !status.ok();
    std::printf("%-12s %-10s %s\n", ("hook " + hook.name).c_str(), status.ok() ? "ok" : "FAILED",
                status.ok() ? hook.command.front().c_str() : status.ToString().c_str());
  }
  std::printf("%s\n", web_failed ? "config check FAILED: the web config file is invalid"
                      : failed ? "config check FAILED: a collector cannot collect on this host or "
                                 "a hook cannot run"
                               : "config check passed");
  return failed || web_failed ? 1 : 0;
}

int Agent::PrintShape() {
  // The collectors the shape reads (detectors/link_degraded/port_shape.h), collected once.
  std::map<std::string, std::shared_ptr<Snapshot>> snapshots;
  for (ScheduledCollector& collector : collectors_) {
    const std::vector<std::string> inputs = detect::InputCollectors(detect::shape::ShapeInputs());
    if (std::find(inputs.begin(), inputs.end(), collector.name) == inputs.end()) continue;
    CollectionOutcome outcome = CollectOnce(collector, clock_);
    if (!outcome.run.status.ok() && !outcome.run.status.no_data()) {
      std::fprintf(stderr, "fabricwatch: collector %s: %s\n", collector.name.c_str(),
                   outcome.run.status.message().c_str());
    }
    if (outcome.snapshot) snapshots[collector.name] = std::move(outcome.snapshot);
  }
  if (!snapshots.contains(std::string(rdma::kCollector))) {
    std::fprintf(stderr, "fabricwatch: --shape.print needs the rdma collector\n");
    return 1;
  }
  detect::NodeModelBuilder node;
  for (const auto& [name, snapshot] : snapshots) node.Observe(name, snapshot->families);
  const detect::shape::NodeShape shape = detect::shape::BuildShape(node.model());
  char hostname[256] = {};
  if (gethostname(hostname, sizeof(hostname) - 1) != 0) std::snprintf(hostname, 8, "unknown");
  std::fputs(detect::shape::ShapeToYaml(shape, hostname).c_str(), stdout);
  if (shape.ports.empty()) {
    std::fprintf(stderr, "fabricwatch: no RDMA port found under %s/class/infiniband\n",
                 config_.roots.sysfs.c_str());
  }
  return 0;
}

Status Agent::Start() {
  if (web_security_ == nullptr) {
    if (Status web = LoadWebConfig(); !web.ok()) return web;
  }
  const RouteSources sources{.config = config_,
                             .store = *store_,
                             .self_metrics = *self_metrics_,
                             .engine = *engine_,
                             .hooks = *hooks_,
                             .privileges = privileges_.get(),
                             .link_events = events_.link_log(),
                             .rdma_events = events_.rdma_log(),
                             .http_server = &server_for_metrics_,
                             .transitions = &transition_history_,
                             .series_filter = &*series_budget_,
                             .web_security = web_security_.get(),
                             .clock = &clock_};
  metrics_cache_ = MakeMetricsCache(sources);
  status_cache_ = MakeStatusCache(sources);
  auto address = ParseListenAddress(config_.listen_address);  // validated already
  if (!address) return address.error();
  auto server =
      HttpServer::Start(*address, AgentRoutes(sources, *metrics_cache_, *status_cache_),
                        GetLogger("http"), config_.http, MakeSecuritySource(web_security_));
  if (!server) return server.error();
  server_ = std::move(*server);
  server_for_metrics_ = server_.get();
  std::string bound;
  for (int port : server_->ports()) bound += (bound.empty() ? "" : ",") + std::to_string(port);
  GetLogger("main")->info(
      "fabricwatch {} (revision {}) listening on {} (port {}), metrics at {}, sysfs {}", kVersion,
      kRevision, config_.listen_address, bound, config_.telemetry_path, config_.roots.sysfs);
  // Loaded here, not in Create(): on a SIGHUP reload the new agent is created while the old one
  // still runs, and must read the state the old one saves when it stops (exporter/main.cc).
  engine_->LoadState();
  engine_->Start();
  scheduler_->Start();
  if (prober_) prober_->Start();
  hooks_->Start();
  return Status::Ok();
}

std::vector<int> Agent::ports() const {
  return server_ != nullptr ? server_->ports() : std::vector<int>{};
}

Status Agent::LoadWebConfig(std::shared_ptr<const WebSecurityState> running) {
  auto web = LoadWebSecurity(config_, std::move(running));
  if (!web) return web.error();
  web_security_ = std::move(*web);
  return Status::Ok();
}

bool Agent::Stop() {
  // Stop everything at once; the listeners and collectors return within their poll timeouts
  // (≤ 200 ms). HTTP gets a bounded wait: a route still rendering may outlive it (see
  // http_server.h).
  const auto stop_start = std::chrono::steady_clock::now();
  std::jthread stop_listeners([this] { events_.Stop(); });
  bool collectors_stopped = true;
  std::jthread stop_pipeline([this, &collectors_stopped] {
    // Bounded: a collector stuck in a read is left behind (it is logged), and the state is
    // saved all the same. A snapshot it publishes later only lands in the stopped engine's queue.
    collectors_stopped = scheduler_->Stop(kCollectorStopBudget);
    engine_->Stop();               // after the collectors: no more snapshots; saves the state file
    hooks_->Stop();                // waits for a hook already running (bounded by its timeout)
    if (prober_) prober_->Stop();  // after the hooks; kills a probe process that runs
  });
  const bool http_stopped = server_ == nullptr || server_->Stop(kHttpStopBudget);
  stop_listeners.join();
  stop_pipeline.join();
  GetLogger("main")->debug("shutdown took {} ms",
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - stop_start)
                               .count());
  if (http_stopped) {
    server_for_metrics_ = nullptr;  // no route runs any more (Stop returned true)
    server_.reset();
  }
  return http_stopped && collectors_stopped;
}

}  // namespace fabricwatch::exporter
