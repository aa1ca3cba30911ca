#pragma once
// ProbeRunner: the agent's one probe thread (issue 37 part 3). It owns a PortProber and runs at
// most one probe at a time on the node (a probe moves real traffic and pins memory; two at once
// would measure each other). Requests queue; a request for a port already waiting joins it.
// The agent's prober is a ProcessPortProber (process_prober.h): each probe is a child process
// with a hard deadline (probe.timeout + kProbeProcessMargin), so a verbs call stuck in the
// driver blocks neither the next probe nor Stop(). A StoppablePortProber is cut short by Stop().
// The policy (probe_policy.h) decides each request: refused, answered from the port's last
// result, or measured; ClassifyProbe turns a measurement into the verdict a drain acts on.
//
//   ProbeRunner runner(config.probe, std::make_unique<ProcessPortProber>(launcher), clock,
//                      logger, jobs_on_device, expected_rate);
//   runner.Start();
//   runner.Request({"mlx5_0", 1}, "drain confirmation", [](const ProbeReport& r) { ... });
//
// Every request is answered exactly once, on the runner's thread (or the caller's, for a refusal
// decided at once); those still queued when Stop() runs are answered refused "stopped" on the
// thread that calls Stop(), after the runner's thread has ended, and logged. A request's
// `started` callback (optional) is called once, on the runner's thread, when the runner takes
// the port's probe from the queue (whoever waits for the answer times it from then).
//
// Only results a drain can act on (healthy, degraded, failed) are reused inside
// probe.min_interval; an unavailable one (set-up error, another probe holding the lock, no
// result) is reported and exported but never answers a later request.
//
// Exported (Export): fabricwatch_probe_bandwidth_bytes_per_second{device,port},
// fabricwatch_probe_latency_seconds{device,port} (median), fabricwatch_probe_latency_max_seconds
// {device,port}, fabricwatch_probe_last_timestamp_seconds{device,port},
// fabricwatch_probe_verdict{device,port,verdict},
// fabricwatch_probe_runs_total{result}, fabricwatch_probe_refused_total{reason}.
//
// Thread-safety: Request(), Export(), Last() and WaitIdle() from any thread.

#include <spdlog/logger.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "collectors/core/collector.h"
#include "base/metric_sink.h"
#include "exporter/probe/probe.h"
#include "exporter/probe/probe_config.h"
#include "exporter/probe/probe_policy.h"
#include "exporter/probe/process_prober.h"

namespace fabricwatch::probe {

// The jobs that hold `device` open now ("slurm:1234"); nullopt when unknown.
using JobsOnDevice = std::function<std::optional<std::vector<std::string>>(const std::string&)>;
// The port's expected rate in bits per second (ExpectedProbeRate); 0 when unknown.
using ExpectedRate = std::function<double(const PortRef&)>;
using ProbeCallback = std::function<void(const ProbeReport&)>;
using ProbeStarted = std::function<void()>;

class ProbeRunner {
 public:
  ProbeRunner(ProbeConfig config, std::unique_ptr<PortProber> prober, const Clock& clock,
              std::shared_ptr<spdlog::logger> logger, JobsOnDevice jobs_on_device = {},
              ExpectedRate expected_rate = {});
  ~ProbeRunner();  // Stop()
  ProbeRunner(const ProbeRunner&) = delete;
  ProbeRunner& operator=(const ProbeRunner&) = delete;

  void Start();
  // Answers the queued requests refused "stopped" (logged, counted once per request); a probe
  // that runs is cut short when the prober is a StoppablePortProber (the process prober kills
  // its child at once) and answered "stopped", else waited for (bounded by probe.timeout);
  // joins.
  void Stop();

  // Never blocks on a probe. `reason` goes to the log and the report.
  void Request(const PortRef& port, std::string reason, ProbeCallback callback,
               ProbeStarted started = {});
  // Waits until no request is queued or running; false on timeout. For tests.
  bool WaitIdle(std::chrono::milliseconds timeout);

  // The port's last measured report (the status page, the hook environment).
  std::optional<ProbeReport> Last(const PortRef& port) const;
  void Export(MetricSink& sink) const;
  static std::span<const MetricDesc> MetricDescs();

  const ProbeConfig& config() const { return config_; }

  static constexpr size_t kQueueCapacity = 64;

 private:
  struct Waiter {
    ProbeCallback answer;
    ProbeStarted started;
  };
  struct Pending {
    PortRef port;
    std::string reason;
    std::vector<Waiter> waiters;  // everyone who asked for the port while it was queued
  };

  void WorkerLoop();
  // Decides and, when the policy says so, measures one request (worker thread, unlocked).
  ProbeReport Handle(const Pending& request, std::stop_token stop);
  // The jobs on the devices the probe's traffic crosses: the port's, and the partner's on the
  // pair path; nullopt when the jobs collector has not said.
  std::optional<std::vector<std::string>> JobsOnPath(const ProbeTarget& target) const;
  void CountRefused(std::string_view reason, size_t count = 1);
  // A refusal's report for `port`.
  static ProbeReport Refusal(const PortRef& port, std::string reason, std::string_view refused,
                             std::string detail);

  const ProbeConfig config_;
  std::unique_ptr<PortProber> prober_;  // worker thread only
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  JobsOnDevice jobs_on_device_;
  ExpectedRate expected_rate_;
  StoppablePortProber* const stoppable_;  // prober_ when it can be cut short, else null

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  bool busy_ = false;
  std::stop_source stop_probe_;          // a new one each Start(); Stop() requests it
  std::map<PortRef, ProbeReport> last_;  // measured reports only (Last, Export)
  // The cache of probe.min_interval: the last measured report whose verdict a drain can act on
  // (healthy, degraded, failed), never an unavailable one.
  std::map<PortRef, ProbeReport> reusable_;
  std::map<std::string, uint64_t, std::less<>> runs_;
  std::map<std::string, uint64_t, std::less<>> refused_;
  std::thread worker_;
};

}  // namespace fabricwatch::probe
