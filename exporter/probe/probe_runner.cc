#include "exporter/probe/probe_runner.h"

#include <fmt/format.h>

#include <algorithm>

#include "collectors/sys/thread_name.h"

namespace fabricwatch::probe {
namespace {

using std::chrono::milliseconds;

constexpr MetricDesc kBandwidth{
    "fabricwatch_probe_bandwidth_bytes_per_second",
    "RDMA WRITE bandwidth of the port's last probe that moved data (probe.enabled; docs/probe.md "
    "says which path: loopback through the HCA, or pair through the fabric).",
    MetricKind::kGauge,
    {"device", "port"}};
constexpr MetricDesc kLatency{
    "fabricwatch_probe_latency_seconds",
    "Median round trip of one signalled 64-byte RDMA WRITE in the port's last probe that moved "
    "data.",
    MetricKind::kGauge,
    {"device", "port"}};
constexpr MetricDesc kLatencyMax{
    "fabricwatch_probe_latency_max_seconds",
    "Longest round trip of one signalled 64-byte RDMA WRITE in the port's last probe that moved "
    "data.",
    MetricKind::kGauge,
    {"device", "port"}};
constexpr MetricDesc kLastTimestamp{
    "fabricwatch_probe_last_timestamp_seconds",
    "When the port's last probe finished (Unix time), whatever its outcome.",
    MetricKind::kGauge,
    {"device", "port"}};
constexpr MetricDesc kVerdict{
    "fabricwatch_probe_verdict",
    "The verdict of the port's last probe: 1 for the current one of healthy, degraded (below "
    "probe.degraded-fraction of the expected rate), failed (port down, a failed work "
    "completion, a timeout in a data phase) and unavailable (the probe could not run: no "
    "device, no memory-lock allowance, a set-up error, another probe running), 0 for the "
    "others.",
    MetricKind::kGauge,
    {"device", "port", "verdict"}};
constexpr MetricDesc kRunsTotal{
    "fabricwatch_probe_runs_total",
    "Probe requests answered, by result: the outcome of a measurement (ok, port_down, error, "
    "timeout, unsupported, setup_error), or cached (answered from the port's last result inside "
    "probe.min-interval).",
    MetricKind::kCounter,
    {"result"}};
constexpr MetricDesc kRefusedTotal{
    "fabricwatch_probe_refused_total",
    "Probe requests refused, by reason: disabled, jobs_running (a running job holds the port's "
    "device open, or on the pair path the partner's, and probe.allow-with-jobs is false), "
    "queue_full, stopped (the agent stopped before or while the probe ran).",
    MetricKind::kCounter,
    {"reason"}};
constexpr MetricDesc kAllDescs[] = {kBandwidth, kLatency,   kLatencyMax,  kLastTimestamp,
                                    kVerdict,   kRunsTotal, kRefusedTotal};

constexpr ProbeVerdict kVerdicts[] = {ProbeVerdict::kHealthy, ProbeVerdict::kDegraded,
                                      ProbeVerdict::kFailed, ProbeVerdict::kUnavailable};

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

ProbeRunner::ProbeRunner(ProbeConfig config, std::unique_ptr<PortProber> prober, const Clock& clock,
                         std::shared_ptr<spdlog::logger> logger, JobsOnDevice jobs_on_device,
                         ExpectedRate expected_rate)
    : config_(std::move(config)),
      prober_(std::move(prober)),
      clock_(clock),
      log_(std::move(logger)),
      jobs_on_device_(std::move(jobs_on_device)),
      expected_rate_(std::move(expected_rate)),
      stoppable_(dynamic_cast<StoppablePortProber*>(prober_.get())) {
  // Every result and reason exists from the start, so a rate() never meets an absent series.
  for (std::string_view result : kProbeRunResults) runs_[std::string(result)] = 0;
  for (std::string_view reason : kProbeRefusedReasons) refused_[std::string(reason)] = 0;
}

ProbeRunner::~ProbeRunner() { Stop(); }

std::span<const MetricDesc> ProbeRunner::MetricDescs() { return kAllDescs; }

void ProbeRunner::Start() {
  std::lock_guard lock(mutex_);
  if (worker_.joinable()) return;
  stop_ = false;
  stop_probe_ = std::stop_source();
  worker_ = std::thread([this] {
    sys::SetCurrentThreadName("fw-probe");
    WorkerLoop();
  });
}

ProbeReport ProbeRunner::Refusal(const PortRef& port, std::string reason, std::string_view refused,
                                 std::string detail) {
  ProbeReport report;
  report.port = port;
  report.reason = std::move(reason);
  report.refused = std::string(refused);
  report.detail = std::move(detail);
  return report;
}

void ProbeRunner::Stop() {
  std::deque<Pending> dropped;
  {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) return;
    stop_ = true;
    dropped.swap(queue_);
    size_t waiters = 0;
    for (const Pending& p : dropped) waiters += p.waiters.size();
    if (!dropped.empty()) {
      log_->warn(
          "stopping with {} probe request(s) for {} port(s) not yet run; they are "
          "answered \"stopped\"",
          waiters, dropped.size());
    }
    refused_["stopped"] += waiters;  // per request, as every other refusal of Request()
  }
  stop_probe_.request_stop();  // a probe process that runs is killed now
  cv_.notify_all();
  worker_.join();
  // Every request is answered, so whoever counts what it awaits is not left waiting; after the
  // join, so no answer of the worker's comes after these.
  for (const Pending& p : dropped) {
    const ProbeReport report = Refusal(
        p.port, p.reason, "stopped", PortText(p.port) + ": the agent stopped before the probe ran");
    for (const Waiter& w : p.waiters) {
      if (w.answer) w.answer(report);
    }
  }
  std::lock_guard lock(mutex_);
  idle_cv_.notify_all();
}

void ProbeRunner::Request(const PortRef& port, std::string reason, ProbeCallback callback,
                          ProbeStarted started) {
  std::unique_lock lock(mutex_);
  // A port already waiting is probed once for everyone who asked.
  for (Pending& p : queue_) {
    if (p.port == port) {
      p.waiters.push_back({std::move(callback), std::move(started)});
      return;
    }
  }
  std::string_view refused;
  if (stop_ || !worker_.joinable()) {
    refused = "stopped";
  } else if (queue_.size() >= kQueueCapacity) {
    refused = "queue_full";
  }
  if (refused.empty()) {
    queue_.push_back({port, std::move(reason), {}});
    queue_.back().waiters.push_back({std::move(callback), std::move(started)});
    lock.unlock();
    cv_.notify_one();
    return;
  }
  ++refused_[std::string(refused)];
  lock.unlock();
  const ProbeReport report =
      Refusal(port, std::move(reason), refused,
              fmt::format("{}: {}", PortText(port),
                          refused == "stopped" ? "the probe runner is not running"
                                               : "too many ports wait for a probe"));
  log_->warn("probe {} refused ({}): {}", PortText(port), refused, report.detail);
  if (callback) callback(report);  // the caller's thread: it holds none of our locks
}

bool ProbeRunner::WaitIdle(milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return idle_cv_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; });
}

std::optional<ProbeReport> ProbeRunner::Last(const PortRef& port) const {
  std::lock_guard lock(mutex_);
  if (auto it = last_.find(port); it != last_.end()) return it->second;
  return std::nullopt;
}

void ProbeRunner::CountRefused(std::string_view reason, size_t count) {
  std::lock_guard lock(mutex_);
  refused_[std::string(reason)] += count;
}

std::optional<std::vector<std::string>> ProbeRunner::JobsOnPath(const ProbeTarget& target) const {
  if (!jobs_on_device_) return std::nullopt;
  std::optional<std::vector<std::string>> jobs = jobs_on_device_(target.port.device);
  // The pair path's traffic crosses the partner's device too: a job there is hurt as much.
  if (target.partner && target.partner->device != target.port.device) {
    if (auto far = jobs_on_device_(target.partner->device)) {
      if (!jobs) jobs.emplace();
      for (std::string& job : *far) {
        if (std::find(jobs->begin(), jobs->end(), job) == jobs->end()) {
          jobs->push_back(std::move(job));
        }
      }
    }
  }
  return jobs;
}

ProbeReport ProbeRunner::Handle(const Pending& request, std::stop_token stop) {
  ProbeReport report;
  report.port = request.port;
  report.reason = request.reason;
  std::optional<ProbeReport> last;
  {
    std::lock_guard lock(mutex_);
    if (auto it = reusable_.find(request.port); it != reusable_.end()) last = it->second;
  }
  ProbeTarget target{request.port, std::nullopt};
  if (auto it = config_.partners.find(request.port); it != config_.partners.end()) {
    target.partner = it->second;
  }
  const ProbeDecision decision =
      DecideProbe(config_, request.port, clock_.Now(), last ? &*last : nullptr, JobsOnPath(target),
                  target.partner);
  if (decision.action == ProbeAction::kRefuse) {
    report.refused = std::string(decision.refused);
    report.detail = decision.detail;
    CountRefused(decision.refused);
    log_->info("probe {} ({}) refused: {}", PortText(request.port), request.reason,
               decision.detail);
    return report;
  }
  if (decision.action == ProbeAction::kCached) {
    report = *last;
    report.reason = request.reason;
    report.cached = true;
    std::lock_guard lock(mutex_);
    ++runs_["cached"];
    return report;
  }
  report.expected_bits_per_second = expected_rate_ ? expected_rate_(request.port) : 0;
  log_->info("probing {} ({}, {}, expected {:.1f} Gb/s)", PortText(request.port), request.reason,
             target.partner ? "pair with " + PortText(*target.partner) : "loopback",
             report.expected_bits_per_second / 1e9);
  report.measurement = stoppable_ != nullptr ? stoppable_->Measure(target, config_.options, stop)
                                             : prober_->Measure(target, config_.options);
  if (stop.stop_requested()) {
    // Cut short by Stop(): no result of the port, and nothing a drain could act on.
    report.measurement = {};
    report.refused = "stopped";
    report.detail = PortText(request.port) + ": the agent stopped while the probe ran";
    CountRefused("stopped", request.waiters.size());  // per request, as Stop() counts
    log_->warn("probe {} ({}): stopped while it ran", PortText(request.port), request.reason);
    return report;
  }
  report.verdict =
      ClassifyProbe(report.measurement, report.expected_bits_per_second, config_.degraded_fraction);
  report.time = clock_.Now();
  const ProbeMeasurement& m = report.measurement;
  const auto level =
      report.verdict == ProbeVerdict::kHealthy ? spdlog::level::info : spdlog::level::warn;
  log_->log(level,
            "probe {}: {} ({}, {} path): {:.2f} Gb/s, latency median {:.1f} us max {:.1f} "
            "us{}{}",
            PortText(request.port), ProbeVerdictName(report.verdict), ProbeOutcomeName(m.outcome),
            m.path.empty() ? "no" : m.path, m.bandwidth_bytes_per_second * 8 / 1e9,
            Seconds(m.latency_median) * 1e6, Seconds(m.latency_max) * 1e6,
            m.error.empty() ? "" : ": ", m.error);
  std::lock_guard lock(mutex_);
  ++runs_[std::string(ProbeOutcomeName(m.outcome))];
  last_[request.port] = report;
  // Only a verdict a drain can act on is reused: an unavailable probe (another probe held the
  // lock, a set-up or spawn error, no result) says nothing of the port, and caching it would
  // suppress the port's drains for probe.min_interval without ever asking again.
  if (report.verdict != ProbeVerdict::kUnavailable) {
    reusable_[request.port] = report;
  } else {
    reusable_.erase(request.port);
  }
  return report;
}

void ProbeRunner::WorkerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    Pending request = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    const std::stop_token stop = stop_probe_.get_token();
    lock.unlock();
    for (const Waiter& w : request.waiters) {
      if (w.started) w.started();
    }
    const ProbeReport report = Handle(request, stop);
    for (const Waiter& w : request.waiters) {
      if (w.answer) w.answer(report);
    }
    lock.lock();
    busy_ = false;
    idle_cv_.notify_all();
  }
  busy_ = false;
  idle_cv_.notify_all();
}

void ProbeRunner::Export(MetricSink& sink) const {
  std::lock_guard lock(mutex_);
  const auto wall = clock_.WallOffset();
  for (const auto& [port, report] : last_) {
    const std::string number = std::to_string(port.port);
    const ProbeMeasurement& m = report.measurement;
    if (m.outcome == ProbeOutcome::kOk) {
      sink.Add(kBandwidth, {{"device", port.device}, {"port", number}},
               m.bandwidth_bytes_per_second);
      sink.Add(kLatency, {{"device", port.device}, {"port", number}}, Seconds(m.latency_median));
      sink.Add(kLatencyMax, {{"device", port.device}, {"port", number}}, Seconds(m.latency_max));
    }
    sink.Add(kLastTimestamp, {{"device", port.device}, {"port", number}},
             std::chrono::duration<double>((report.time + wall).time_since_epoch()).count());
    for (ProbeVerdict v : kVerdicts) {
      sink.Add(kVerdict,
               {{"device", port.device}, {"port", number}, {"verdict", ProbeVerdictName(v)}},
               v == report.verdict ? 1 : 0);
    }
  }
  for (const auto& [result, count] : runs_) {
    sink.Add(kRunsTotal, {{"result", result}}, static_cast<double>(count));
  }
  for (const auto& [reason, count] : refused_) {
    sink.Add(kRefusedTotal, {{"reason", reason}}, static_cast<double>(count));
  }
}

}  // namespace fabricwatch::probe
