#include "exporter/remediation/hook_runner.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "collectors/sys/filesystem.h"
#include "collectors/sys/thread_name.h"
#include "detectors/core/anomaly_tracker.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;

constexpr MetricDesc kRunsTotal{
    "fabricwatch_hook_runs_total",
    "Hook runs and suppressed runs by result: success, failure, timeout, cancelled (killed "
    "because the agent stopped), spawn_error, dry_run, suppressed_not_eligible, "
    "suppressed_cooldown, suppressed_rate_limit, "
    "suppressed_fleet_budget, suppressed_peer_suspect, held_for_jobs (counted when the hold "
    "starts, once however often its probe is refused for jobs; the drain is counted again when "
    "it runs), suppressed_probe_healthy and suppressed_probe_unconfirmed "
    "(hooks.confirm_with_probe: the port's probe was healthy, or could not run or answer).",
    MetricKind::kCounter,
    {"hook", "result"}};
constexpr MetricDesc kDryRun{
    "fabricwatch_hook_dry_run",
    "1 if hooks run in dry-run mode (they are told so and only report what they would do).",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kDrainRequested{
    "fabricwatch_hook_drain_requested",
    "1 while this node has a drain request (or, in dry run, would have one) that was not yet "
    "followed by a resume; the fleet rules sum it per partition.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kDropped{
    "fabricwatch_hook_events_dropped_total",
    "Anomaly transitions dropped because the hook queue was full (hooks far slower than "
    "anomalies arrive).",
    MetricKind::kCounter,
    {}};
constexpr MetricDesc kDrainsHeld{
    "fabricwatch_hook_drains_held",
    "Drains waiting because jobs hold the finding's device open and the finding is not "
    "critical (hooks.hold_drain_while_jobs), or because the probe that would confirm them was "
    "refused while jobs run (hooks.confirm_with_probe).",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kDrainsAwaitingProbe{
    "fabricwatch_hook_drains_awaiting_probe",
    "Drains waiting for the answer of a probe of the finding's port (hooks.confirm_with_probe); "
    "each waits at most twice probe.timeout plus margins from its probe's start (and a bounded "
    "time in the runner's queue before it), then is suppressed_probe_unconfirmed.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kAllDescs[] = {kRunsTotal,           kDryRun, kDrainRequested, kDrainsHeld,
                                    kDrainsAwaitingProbe, kDropped};

// hooks.suspect_peers_file: one switch name a line, as the receiver writes the peer_name label
// of FabricwatchDrainPeerSuspect; '#' starts a comment. Bounded: a runaway file cannot stall
// the policy thread. An absent file is no suspect.
constexpr size_t kSuspectPeersMaxBytes = 64 * 1024;

std::set<std::string, std::less<>> ReadSuspectPeers(const std::string& path, spdlog::logger& log,
                                                    std::string& last_error) {
  std::set<std::string, std::less<>> peers;
  if (path.empty()) return peers;
  // Non-blocking, regular files only (sys::RealFileSystem::Open): a FIFO put in its place must
  // not stall the policy thread.
  const sys::RealFileSystem fs;
  std::string error;
  if (auto fd = fs.Open(path); fd) {
    std::string text(kSuspectPeersMaxBytes, '\0');
    if (auto n = fs.ReadAt0(*fd, text, path); n) {
      text.resize(*n);
      if (*n == kSuspectPeersMaxBytes) {
        error =
            fmt::format("{}: longer than {} bytes, read up to there", path, kSuspectPeersMaxBytes);
      }
      peers = ParseSuspectPeers(text);
    } else {
      error = n.error().ToString();
    }
  } else if (fd.error().code() != StatusCode::kNotFound) {
    error = fd.error().ToString();  // an absent file is no suspect, not an error
  }
  if (error != last_error && !error.empty()) log.warn("hooks.suspect_peers_file: {}", error);
  last_error = std::move(error);
  return peers;
}

std::string ShortHostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string name(buf);
  if (size_t dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  return name;
}

}  // namespace

HookRunner::HookRunner(HookConfig config, ProcessLauncher& launcher, const Clock& clock,
                       std::shared_ptr<spdlog::logger> logger,
                       std::map<std::string, std::string> agent_env, CurrentJobs current_jobs,
                       probe::ProbeRunner* prober)
    : config_(std::move(config)),
      launcher_(launcher),
      clock_(clock),
      log_(std::move(logger)),
      agent_env_(std::move(agent_env)),
      node_name_(config_.node_name.empty() ? ShortHostname() : config_.node_name),
      policy_(config_, std::move(current_jobs),
              probe::ProbeAnswerWait(prober != nullptr ? prober->config().options
                                                       : probe::ProbeOptions{})),
      prober_(prober),
      counts_(config_.hooks.size()) {
  for (size_t i = 0; i < config_.hooks.size(); ++i) {
    hook_queues_.push_back(std::make_unique<HookQueue>());
  }
  // Every (hook, result) series exists from the start, so alerts never meet an absent series.
  for (auto& per_hook : counts_) {
    for (std::string_view result : kHookResults) per_hook[std::string(result)] = 0;
  }
}

HookRunner::~HookRunner() { Stop(); }

std::span<const MetricDesc> HookRunner::MetricDescs() { return kAllDescs; }

void HookRunner::Start() {
  std::lock_guard lock(mutex_);
  if (worker_.joinable() || config_.hooks.empty()) return;
  stop_ = false;
  worker_ = std::thread([this] {
    sys::SetCurrentThreadName("fw-hooks");
    WorkerLoop();
  });
  for (size_t i = 0; i < hook_queues_.size(); ++i) {
    hook_queues_[i]->thread = std::thread([this, i] {
      sys::SetCurrentThreadName("fw-hook" + std::to_string(i));
      HookLoop(i);
    });
  }
  log_->info("{} hook(s) configured for node \"{}\"{}", config_.hooks.size(), node_name_,
             config_.dry_run ? " in dry-run mode (set hooks.dry_run: false to act)" : "");
  if (auto credentials = ResolveHookCredentials(config_); !credentials) {
    log_->error("{}; every hook run fails until it resolves", credentials.error().ToString());
  } else if (*credentials) {
    log_->info("hooks run as uid {} gid {} (hooks.user \"{}\", hooks.group \"{}\")",
               (*credentials)->uid, (*credentials)->gid, config_.user, config_.group);
  } else if (::geteuid() == 0) {
    log_->warn("hooks run as root: set hooks.user (and hooks.group) to run them unprivileged");
  } else if (!config_.user.empty()) {
    log_->warn("hooks.user \"{}\" ignored: the agent is not root, hooks run as uid {}",
               config_.user, ::geteuid());
  }
}

void HookRunner::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) return;
    stop_ = true;
    size_t runs = 0;
    for (const auto& q : hook_queues_) runs += q->runs.size();
    if (!queue_.empty() || runs > 0) {
      log_->warn("stopping with {} anomaly transition(s) and {} hook run(s) not yet started",
                 queue_.size(), runs);
    }
  }
  stop_hooks_.request_stop();  // running hooks are killed now, not at their timeout
  cv_.notify_all();
  for (const auto& q : hook_queues_) q->cv.notify_all();
  worker_.join();
  for (const auto& q : hook_queues_) {
    if (q->thread.joinable()) q->thread.join();
  }
}

void HookRunner::OnTransition(const detect::AnomalyTransition& transition) {
  if (config_.hooks.empty()) return;
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= kQueueCapacity) {
      ++dropped_;
      return;
    }
    queue_.push_back(transition);
  }
  cv_.notify_one();
}

void HookRunner::Wake() {
  {
    std::lock_guard lock(mutex_);
    wake_ = true;
  }
  cv_.notify_one();
}

bool HookRunner::WaitIdle(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return idle_cv_.wait_for(lock, timeout, [this] { return IdleLocked(); });
}

bool HookRunner::IdleLocked() const {
  if (!queue_.empty() || busy_ || wake_ || probes_outstanding_ > 0) return false;
  for (const auto& q : hook_queues_) {
    if (!q->runs.empty() || q->running) return false;
  }
  return true;
}

DrainGates HookRunner::Gates() {
  DrainGates gates;
  struct stat st {};
  gates.fleet_budget_exhausted =
      !config_.fleet_budget_file.empty() && ::stat(config_.fleet_budget_file.c_str(), &st) == 0;
  gates.suspect_peers = ReadSuspectPeers(config_.suspect_peers_file, *log_, suspect_peers_error_);
  return gates;
}

void HookRunner::WorkerLoop() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    // The next resume is due at a time of the injected clock; waking at least once a second
    // keeps a real clock honest without a timer per finding.
    milliseconds wait{1000};
    if (auto deadline = policy_.next_deadline()) {
      auto until = std::chrono::duration_cast<milliseconds>(*deadline - clock_.Now());
      wait = std::clamp(until, milliseconds(0), wait);
    }
    cv_.wait_for(lock, wait, [this] {
      return stop_ || wake_ || !queue_.empty() || !probe_answers_.empty() || !probe_starts_.empty();
    });
    if (stop_) break;
    std::deque<detect::AnomalyTransition> events;
    events.swap(queue_);
    std::deque<std::pair<std::string, uint64_t>> starts;
    starts.swap(probe_starts_);
    std::deque<ProbeAnswer> answers;
    answers.swap(probe_answers_);
    wake_ = false;
    busy_ = true;
    lock.unlock();

    // The gates (a stat and a small read) only when a raise or a held drain may need them: a
    // resume does not, and an idle runner reads nothing.
    const DrainGates gates =
        !events.empty() || !answers.empty() || policy_.drains_held() > 0 ? Gates() : DrainGates{};
    for (const detect::AnomalyTransition& t : events) {
      Execute(policy_.OnTransition(t, clock_.Now(), gates));
    }
    // Starts before answers: a probe that started and answered since the last pass is timed
    // from its start.
    for (const auto& [key, seq] : starts) policy_.OnProbeStarted(key, seq, clock_.Now());
    for (const ProbeAnswer& a : answers) {
      Execute(policy_.OnProbeResult(a.key, a.seq, a.report, clock_.Now(), gates));
    }
    Execute(policy_.OnTimer(clock_.Now(), gates));

    lock.lock();
    probes_outstanding_ -= std::min(probes_outstanding_, answers.size());
    drain_requested_ = policy_.drain_requested();
    drains_held_ = policy_.drains_held();
    drains_awaiting_probe_ = policy_.probes_pending();
    busy_ = false;
    idle_cv_.notify_all();
  }
  busy_ = false;
  idle_cv_.notify_all();
}

void HookRunner::Count(size_t hook, std::string_view result) {
  std::lock_guard lock(mutex_);
  ++counts_[hook][std::string(result)];
}

void HookRunner::RequestProbes(const std::vector<ProbeRequest>& probes) {
  for (const ProbeRequest& request : probes) {
    {
      std::lock_guard lock(mutex_);
      ++probes_outstanding_;
    }
    auto answer = [this, key = request.key, seq = request.seq](const probe::ProbeReport& report) {
      {
        std::lock_guard lock(mutex_);
        probe_answers_.push_back({key, seq, report});
      }
      cv_.notify_one();
    };
    auto started = [this, key = request.key, seq = request.seq] {
      {
        std::lock_guard lock(mutex_);
        probe_starts_.emplace_back(key, seq);
      }
      cv_.notify_one();
    };
    if (prober_ == nullptr) {
      probe::ProbeReport report;
      report.port = request.port;
      report.reason = request.reason;
      report.refused = "disabled";
      report.detail = probe::PortText(request.port) + ": the agent runs no probe (probe.enabled)";
      answer(report);
      continue;
    }
    // Not under mutex_: the runner may answer at once on this thread.
    prober_->Request(request.port, request.reason, std::move(answer), std::move(started));
  }
}

void HookRunner::Execute(const HookPlan& plan) {
  for (const std::string& note : plan.notes) log_->info("node \"{}\": {}", node_name_, note);
  RequestProbes(plan.probes);
  for (const Suppression& s : plan.suppressed) {
    const HookSpec& hook = config_.hooks[s.hook];
    log_->warn("hook {}: no drain of node \"{}\" ({}): {}", hook.name, node_name_, s.result, s.why);
    Count(s.hook, s.result);
  }
  if (plan.runs.empty()) return;
  {
    std::lock_guard lock(mutex_);
    for (const PlannedRun& run : plan.runs) {
      HookQueue& q = *hook_queues_[run.hook];
      if (q.runs.size() >= kQueueCapacity) {
        ++dropped_;
        continue;
      }
      q.runs.push_back(run);
      q.cv.notify_one();
    }
  }
}

void HookRunner::HookLoop(size_t hook) {
  HookQueue& q = *hook_queues_[hook];
  std::unique_lock lock(mutex_);
  while (true) {
    q.cv.wait(lock, [&] { return stop_ || !q.runs.empty(); });
    if (stop_) break;
    PlannedRun run = std::move(q.runs.front());
    q.runs.pop_front();
    q.running = true;
    lock.unlock();
    RunOne(run);
    lock.lock();
    q.running = false;
    idle_cv_.notify_all();
  }
  q.running = false;
  idle_cv_.notify_all();
}

void HookRunner::RunOne(const PlannedRun& run) {
  const HookSpec& hook = config_.hooks[run.hook];
  const detect::AnomalyTransition& t = run.transition;
  LaunchSpec spec;
  spec.argv = hook.command;
  // FABRICWATCH_STARTED and _TIME in wall time: the transition carries the agent's clock's.
  PlannedRun shown = run;
  shown.transition = detect::ToWall(run.transition, clock_.WallOffset());
  spec.env = BuildHookEnvironment(config_, hook, shown, node_name_, agent_env_);
  spec.timeout = hook.timeout.count() > 0 ? hook.timeout : config_.timeout;
  spec.kill_grace = config_.kill_grace;
  spec.max_output_bytes = config_.max_output_bytes;
  const std::string what =
      fmt::format("{} {} {} {} ({})", HookPurposeName(run.purpose), t.detector,
                  detect::SeverityName(t.finding.severity), detect::EntityText(t.finding.entity),
                  t.raised ? "raise" : "clear");
  log_->info("hook {}: running {} for node \"{}\"{}", hook.name, what, node_name_,
             config_.dry_run ? " (dry run)" : "");

  LaunchResult result;
  if (auto credentials = ResolveHookCredentials(config_); credentials) {
    spec.credentials = *credentials;
    result = launcher_.Run(spec, stop_hooks_.get_token());
  } else {
    result.error = credentials.error();  // a spawn error: never run as root by mistake
  }
  std::string_view outcome;
  std::string detail;
  switch (result.outcome) {
    case LaunchResult::Outcome::kExited:
      outcome = result.exit_code != 0 ? "failure" : config_.dry_run ? "dry_run" : "success";
      detail = fmt::format("exit status {}", result.exit_code);
      break;
    case LaunchResult::Outcome::kSignaled:
      outcome = "failure";
      detail = fmt::format("killed by signal {}", result.term_signal);
      break;
    case LaunchResult::Outcome::kTimedOut:
      outcome = "timeout";
      detail = fmt::format("timed out after {}ms, process group killed", spec.timeout.count());
      break;
    case LaunchResult::Outcome::kCancelled:
      outcome = "cancelled";
      detail = "the agent stopped, process group killed";
      break;
    case LaunchResult::Outcome::kSpawnError:
      outcome = "spawn_error";
      detail = result.error.ToString();
      break;
  }
  Count(run.hook, outcome);
  const bool bad = outcome != "success" && outcome != "dry_run";
  const auto level = bad ? spdlog::level::warn : spdlog::level::info;
  log_->log(level, "hook {}: {} {}: {} in {}ms", hook.name, what, outcome, detail,
            result.duration.count());
  // The hook's own words go to the log line by line, so a grep for the hook name finds them.
  size_t pos = 0;
  while (pos < result.output.size()) {
    size_t end = result.output.find('\n', pos);
    if (end == std::string::npos) end = result.output.size();
    if (end > pos) {
      log_->log(level, "hook {} output: {}", hook.name,
                std::string_view(result.output).substr(pos, end - pos));
    }
    pos = end + 1;
  }
  if (result.output_truncated) {
    log_->log(level, "hook {} output: [truncated at {} bytes]", hook.name,
              config_.max_output_bytes);
  }
}

void HookRunner::Export(MetricSink& sink) const {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < config_.hooks.size(); ++i) {
    for (const auto& [result, count] : counts_[i]) {
      sink.Add(kRunsTotal, {{"hook", config_.hooks[i].name}, {"result", result}},
               static_cast<double>(count));
    }
  }
  sink.Add(kDryRun, {}, config_.dry_run ? 1 : 0);
  sink.Add(kDrainRequested, {}, drain_requested_ ? 1 : 0);
  sink.Add(kDrainsHeld, {}, static_cast<double>(drains_held_));
  sink.Add(kDrainsAwaitingProbe, {}, static_cast<double>(drains_awaiting_probe_));
  sink.Add(kDropped, {}, static_cast<double>(dropped_));
  if (prober_ != nullptr) prober_->Export(sink);
}

std::map<std::pair<std::string, std::string>, uint64_t> HookRunner::Counts() const {
  std::lock_guard lock(mutex_);
  std::map<std::pair<std::string, std::string>, uint64_t> out;
  for (size_t i = 0; i < config_.hooks.size(); ++i) {
    for (const auto& [result, count] : counts_[i]) out[{config_.hooks[i].name, result}] = count;
  }
  return out;
}

}  // namespace fabricwatch::exporter
