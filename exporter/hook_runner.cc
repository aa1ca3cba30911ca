#include "exporter/hook_runner.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <nlohmann/json.hpp>

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;

constexpr MetricDesc kRunsTotal{
    "fabricwatch_hook_runs_total",
    "Hook runs and suppressed runs by result: success, failure, timeout, spawn_error, dry_run, "
    "suppressed_not_eligible, suppressed_cooldown, suppressed_rate_limit, "
    "suppressed_fleet_budget.",
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
constexpr MetricDesc kAllDescs[] = {kRunsTotal, kDryRun, kDrainRequested, kDropped};

std::string FormatTime(detect::TimePoint t) {
  const auto ms = std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms % 1000));
}

std::string EnvName(std::string_view label) {
  std::string out = "FABRICWATCH_LABEL_";
  for (char c : label) {
    out += std::isalnum(static_cast<unsigned char>(c))
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  return out;
}

std::string ShortHostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string name(buf);
  if (size_t dot = name.find('.'); dot != std::string::npos) name.resize(dot);
  return name;
}

}  // namespace

std::string_view HookPurposeName(HookPurpose purpose) {
  switch (purpose) {
    case HookPurpose::kDrain:
      return "drain";
    case HookPurpose::kResume:
      return "resume";
    case HookPurpose::kNotify:
      return "notify";
  }
  return "notify";
}

// detect::SeverityName() lives in the detector library; the runner keeps its own spelling so
// the exporter does not link the detectors for three words.
std::string_view SeverityText(detect::Severity severity) {
  switch (severity) {
    case detect::Severity::kInfo:
      return "info";
    case detect::Severity::kWarning:
      return "warning";
    case detect::Severity::kCritical:
      return "critical";
  }
  return "warning";
}

std::string EntityText(const detect::EntityLabels& entity) {
  std::string out;
  for (const auto& [name, value] : entity) {
    if (!out.empty()) out += ' ';
    out += name + "=" + value;
  }
  return out;
}

std::string FindingKey(const std::string& detector, const detect::Finding& finding) {
  std::string key = detector + "/" + std::string(SeverityText(finding.severity)) + "/";
  for (const auto& [name, value] : finding.entity) key += name + "=" + value + ",";
  return key;
}

// ---------------------------------------------------------------------------------------------
// DrainPolicy

bool DrainPolicy::Matches(const HookSpec& hook, const detect::AnomalyTransition& t) const {
  if (!hook.detectors.empty() &&
      std::find(hook.detectors.begin(), hook.detectors.end(), t.detector) == hook.detectors.end()) {
    return false;
  }
  if (!hook.severities.empty() && std::find(hook.severities.begin(), hook.severities.end(),
                                            t.finding.severity) == hook.severities.end()) {
    return false;
  }
  return true;
}

HookPlan DrainPolicy::OnTransition(const detect::AnomalyTransition& t, detect::TimePoint now,
                                   bool fleet_budget_exhausted) {
  HookPlan plan;
  std::vector<size_t> drain_hooks;
  for (size_t i = 0; i < config_.hooks.size(); ++i) {
    const HookSpec& hook = config_.hooks[i];
    if (!Matches(hook, t)) continue;
    if (hook.action == HookAction::kNotify) {
      if (t.raised ? hook.on_raise : hook.on_clear) {
        plan.runs.push_back({i, HookPurpose::kNotify, t});
      }
    } else if (hook.on_raise) {
      drain_hooks.push_back(i);
    }
  }
  const std::string key = FindingKey(t.detector, t.finding);

  if (!t.raised) {
    // Only the findings that hold the node can lead to a resume; any other clear is not ours.
    if (holding_.erase(key) == 0 || !holding_.empty() || drained_hooks_.empty()) return plan;
    pending_resume_ = PendingResume{t, now + config_.clear_hold_down};
    HookPlan due = OnTimer(now);  // a zero hold-down resumes at once
    plan.runs.insert(plan.runs.end(), due.runs.begin(), due.runs.end());
    return plan;
  }

  if (drain_hooks.empty()) return plan;
  auto suppress_all = [&](std::string_view result, const std::string& why) {
    for (size_t i : drain_hooks) {
      plan.suppressed.push_back(
          {i, result, fmt::format("{} {}: {}", t.detector, EntityText(t.finding.entity), why)});
    }
  };
  if (!t.finding.drain_eligible) {
    suppress_all("suppressed_not_eligible",
                 "the finding is not drain-eligible (not node-local, a storm victim or "
                 "maintenance)");
    return plan;
  }
  // From here on the finding holds the node, even when this raise is suppressed: the node must
  // not be resumed while it is active, whoever drained it.
  holding_.insert(key);
  pending_resume_.reset();
  if (fleet_budget_exhausted) {
    suppress_all("suppressed_fleet_budget", "the fleet drain budget is exhausted");
    return plan;
  }
  while (!drains_.empty() && now - drains_.front() >= std::chrono::hours(1)) drains_.pop_front();
  if (last_drain_ && now - *last_drain_ < config_.cooldown) {
    suppress_all(
        "suppressed_cooldown",
        fmt::format("last drain request {}s ago, cooldown {}s",
                    std::chrono::duration_cast<std::chrono::seconds>(now - *last_drain_).count(),
                    std::chrono::duration_cast<std::chrono::seconds>(config_.cooldown).count()));
    return plan;
  }
  if (drains_.size() >= static_cast<size_t>(config_.max_drains_per_hour)) {
    suppress_all("suppressed_rate_limit",
                 fmt::format("{} drain requests in the last hour (max_drains_per_hour {})",
                             drains_.size(), config_.max_drains_per_hour));
    return plan;
  }
  drains_.push_back(now);
  last_drain_ = now;
  for (size_t i : drain_hooks) {
    plan.runs.push_back({i, HookPurpose::kDrain, t});
    drained_hooks_.insert(i);
  }
  // Hooks run in the order the operator listed them.
  std::stable_sort(plan.runs.begin(), plan.runs.end(),
                   [](const PlannedRun& a, const PlannedRun& b) { return a.hook < b.hook; });
  return plan;
}

HookPlan DrainPolicy::OnTimer(detect::TimePoint now) {
  HookPlan plan;
  if (!pending_resume_ || now < pending_resume_->due) return plan;
  for (size_t i : drained_hooks_) {
    // A drain hook without `clear` in `on` leaves the resume to a human.
    if (config_.hooks[i].on_clear) {
      plan.runs.push_back({i, HookPurpose::kResume, pending_resume_->clear});
    }
  }
  drained_hooks_.clear();
  pending_resume_.reset();
  return plan;
}

std::optional<detect::TimePoint> DrainPolicy::next_deadline() const {
  if (!pending_resume_) return std::nullopt;
  return pending_resume_->due;
}

// ---------------------------------------------------------------------------------------------
// Environment

std::vector<std::string> BuildHookEnvironment(const HookConfig& config, const HookSpec& hook,
                                              const PlannedRun& run, const std::string& node_name,
                                              const std::map<std::string, std::string>& agent_env) {
  // A map so that later layers replace earlier ones; FABRICWATCH_* cannot be set by env or
  // pass_env (the config parser refuses those names).
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"LC_ALL", "C.UTF-8"},
  };
  for (const std::string& name : hook.pass_env) {
    if (auto it = agent_env.find(name); it != agent_env.end()) env[name] = it->second;
  }
  for (const auto& [name, value] : hook.env) env[name] = value;

  const detect::AnomalyTransition& t = run.transition;
  const detect::Finding& f = t.finding;
  nlohmann::json evidence = nlohmann::json::object();
  std::string evidence_text;
  for (const detect::Evidence& e : f.evidence) {
    evidence[e.name] = e.value;
    if (!evidence_text.empty()) evidence_text += ' ';
    evidence_text += fmt::format("{}={:.6g}", e.name, e.value);
  }
  env["FABRICWATCH_HOOK"] = hook.name;
  env["FABRICWATCH_ACTION"] = std::string(HookPurposeName(run.purpose));
  env["FABRICWATCH_EVENT"] = t.raised ? "raise" : "clear";
  env["FABRICWATCH_DETECTOR"] = t.detector;
  env["FABRICWATCH_SEVERITY"] = std::string(SeverityText(f.severity));
  env["FABRICWATCH_ENTITY"] = EntityText(f.entity);
  for (const auto& [name, value] : f.entity) env[EnvName(name)] = value;
  env["FABRICWATCH_REASON"] = f.reason;
  env["FABRICWATCH_VALUE"] = fmt::format("{}", f.value);
  env["FABRICWATCH_EVIDENCE"] =
      evidence.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  env["FABRICWATCH_EVIDENCE_TEXT"] = evidence_text;
  env["FABRICWATCH_NODE"] = node_name;
  env["FABRICWATCH_DRY_RUN"] = config.dry_run ? "1" : "0";
  env["FABRICWATCH_DRAIN_ELIGIBLE"] = f.drain_eligible ? "1" : "0";
  env["FABRICWATCH_STARTED"] = FormatTime(t.started);
  env["FABRICWATCH_TIME"] = FormatTime(t.time);
  env["FABRICWATCH_FLEET_BUDGET_FILE"] = config.fleet_budget_file;

  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

// ---------------------------------------------------------------------------------------------
// HookRunner

HookRunner::HookRunner(HookConfig config, ProcessLauncher& launcher, const Clock& clock,
                       std::shared_ptr<spdlog::logger> logger,
                       std::map<std::string, std::string> agent_env)
    : config_(std::move(config)),
      launcher_(launcher),
      clock_(clock),
      log_(std::move(logger)),
      agent_env_(std::move(agent_env)),
      node_name_(config_.node_name.empty() ? ShortHostname() : config_.node_name),
      policy_(config_),
      counts_(config_.hooks.size()) {
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
  worker_ = std::thread([this] { WorkerLoop(); });
  log_->info("{} hook(s) configured for node \"{}\"{}", config_.hooks.size(), node_name_,
             config_.dry_run ? " in dry-run mode (set hooks.dry_run: false to act)" : "");
}

void HookRunner::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) return;
    stop_ = true;
    if (!queue_.empty()) {
      log_->warn("stopping with {} anomaly transition(s) not yet handed to hooks", queue_.size());
    }
  }
  cv_.notify_all();
  worker_.join();
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
  return idle_cv_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_ && !wake_; });
}

bool HookRunner::FleetBudgetExhausted() const {
  if (config_.fleet_budget_file.empty()) return false;
  struct stat st {};
  return ::stat(config_.fleet_budget_file.c_str(), &st) == 0;
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
    cv_.wait_for(lock, wait, [this] { return stop_ || wake_ || !queue_.empty(); });
    if (stop_) break;
    std::deque<detect::AnomalyTransition> events;
    events.swap(queue_);
    wake_ = false;
    busy_ = true;
    lock.unlock();

    for (const detect::AnomalyTransition& t : events) {
      Execute(policy_.OnTransition(t, clock_.Now(), FleetBudgetExhausted()));
    }
    Execute(policy_.OnTimer(clock_.Now()));

    lock.lock();
    drain_requested_ = policy_.drain_requested();
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

void HookRunner::Execute(const HookPlan& plan) {
  for (const Suppression& s : plan.suppressed) {
    const HookSpec& hook = config_.hooks[s.hook];
    log_->warn("hook {}: no drain of node \"{}\" ({}): {}", hook.name, node_name_, s.result, s.why);
    Count(s.hook, s.result);
  }
  for (const PlannedRun& run : plan.runs) RunOne(run);
}

void HookRunner::RunOne(const PlannedRun& run) {
  const HookSpec& hook = config_.hooks[run.hook];
  const detect::AnomalyTransition& t = run.transition;
  LaunchSpec spec;
  spec.argv = hook.command;
  spec.env = BuildHookEnvironment(config_, hook, run, node_name_, agent_env_);
  spec.timeout = hook.timeout.count() > 0 ? hook.timeout : config_.timeout;
  spec.kill_grace = config_.kill_grace;
  spec.max_output_bytes = config_.max_output_bytes;
  const std::string what = fmt::format("{} {} {} {} ({})", HookPurposeName(run.purpose), t.detector,
                                       SeverityText(t.finding.severity),
                                       EntityText(t.finding.entity), t.raised ? "raise" : "clear");
  log_->info("hook {}: running {} for node \"{}\"{}", hook.name, what, node_name_,
             config_.dry_run ? " (dry run)" : "");

  LaunchResult result = launcher_.Run(spec);
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
  sink.Add(kDropped, {}, static_cast<double>(dropped_));
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
