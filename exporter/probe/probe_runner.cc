#include "exporter/probe/probe_runner.h"

#include <fmt/format.h>

#include <algorithm>

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
    "Round trip of one signalled 64-byte RDMA WRITE in the port's last probe that moved data: "
    "quantile 0.5 (median) and max.",
    MetricKind::kGauge,
    {"device", "port", "quantile"}};
constexpr MetricDesc kLastTimestamp{
    "fabricwatch_probe_last_timestamp_seconds",
    "When the port's last probe finished (Unix time), whatever its outcome.",
    MetricKind::kGauge,
    {"device", "port"}};
constexpr MetricDesc kVerdict{
    "fabricwatch_probe_verdict",
    "The verdict of the port's last probe: 1 for the current one of healthy, degraded (below "
    "probe.degraded-fraction of the expected rate), failed (port down, verbs error, timeout) and "
    "unavailable (the probe could not run: no device, no memory-lock allowance), 0 for the "
    "others.",
    MetricKind::kGauge,
    {"device", "port", "verdict"}};
constexpr MetricDesc kRunsTotal{
    "fabricwatch_probe_runs_total",
    "Probe requests answered, by result: the outcome of a measurement (ok, port_down, error, "
    "timeout, unsupported), or cached (answered from the port's last result inside "
    "probe.min-interval).",
    MetricKind::kCounter,
    {"result"}};
constexpr MetricDesc kRefusedTotal{
    "fabricwatch_probe_refused_total",
    "Probe requests refused, by reason: disabled, jobs_running (a running job holds the port's "
    "device open and probe.allow-with-jobs is false), queue_full, stopped.",
    MetricKind::kCounter,
    {"reason"}};
constexpr MetricDesc kAllDescs[] = {kBandwidth, kLatency,   kLastTimestamp,
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
      expected_rate_(std::move(expected_rate)) {
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
  worker_ = std::thread([this] { WorkerLoop(); });
}

void ProbeRunner::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) return;
    stop_ = true;
    if (!queue_.empty()) {
      log_->warn("stopping with {} probe request(s) not yet run; they are dropped", queue_.size());
    }
    refused_["stopped"] += queue_.size();
    queue_.clear();
  }
  cv_.notify_all();
  worker_.join();
  std::lock_guard lock(mutex_);
  idle_cv_.notify_all();
}

void ProbeRunner::Request(const PortRef& port, std::string reason, ProbeCallback callback) {
  std::unique_lock lock(mutex_);
  // A port already waiting is probed once for everyone who asked.
  for (Pending& p : queue_) {
    if (p.port == port) {
      p.callbacks.push_back(std::move(callback));
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
    queue_.back().callbacks.push_back(std::move(callback));
    lock.unlock();
    cv_.notify_one();
    return;
  }
  ++refused_[std::string(refused)];
  lock.unlock();
  ProbeReport report;
  report.port = port;
  report.reason = std::move(reason);
  report.refused = std::string(refused);
  report.detail = fmt::format(
      "{}: {}", PortText(port),
      refused == "stopped" ? "the probe runner is not running" : "too many ports wait for a probe");
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

void ProbeRunner::CountRefused(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++refused_[std::string(reason)];
}

ProbeReport ProbeRunner::Handle(const Pending& request) {
  ProbeReport report;
  report.port = request.port;
  report.reason = request.reason;
  std::optional<ProbeReport> last = Last(request.port);
  const std::optional<std::vector<std::string>> jobs =
      jobs_on_device_ ? jobs_on_device_(request.port.device) : std::nullopt;
  const ProbeDecision decision =
      DecideProbe(config_, request.port, clock_.Now(), last ? &*last : nullptr, jobs);
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
  ProbeTarget target{request.port, std::nullopt};
  if (auto it = config_.partners.find(request.port); it != config_.partners.end()) {
    target.partner = it->second;
  }
  report.expected_bits_per_second = expected_rate_ ? expected_rate_(request.port) : 0;
  log_->info("probing {} ({}, {}, expected {:.1f} Gb/s)", PortText(request.port), request.reason,
             target.partner ? "pair with " + PortText(*target.partner) : "loopback",
             report.expected_bits_per_second / 1e9);
  report.measurement = prober_->Measure(target, config_.options);
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
    lock.unlock();
    const ProbeReport report = Handle(request);
    for (const ProbeCallback& callback : request.callbacks) {
      if (callback) callback(report);
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
      sink.Add(kLatency, {{"device", port.device}, {"port", number}, {"quantile", "0.5"}},
               Seconds(m.latency_median));
      sink.Add(kLatency, {{"device", port.device}, {"port", number}, {"quantile", "max"}},
               Seconds(m.latency_max));
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
