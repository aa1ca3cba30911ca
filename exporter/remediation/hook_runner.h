#pragma once
// Node-drain hooks: what runs when the anomaly tracker reports a raise or a clear.
//
// DrainPolicy decides, as a pure function of the transitions, the time and the fleet-budget
// toggle, which hooks run and which are suppressed. HookRunner owns a policy thread that applies
// the policy and hands each planned run to the queue of its hook; every configured hook has its
// own thread that runs its queue in order through a ProcessLauncher. So a slow scheduler (a hung
// scontrol, an API server timing out) never delays sampling or detection (OnTransition() only
// queues), and one hanging hook never delays another (the notify hook still reports). Stop()
// kills running hooks (process group, SIGTERM then SIGKILL within kStopGrace) instead of waiting
// for their timeout.
//
// Safety model (README "Remediation: node-drain hooks"):
//   - dry run by default: hooks run with FABRICWATCH_DRY_RUN=1 and only print what they would do;
//     cooldown and rate limit apply in dry run too, so its log predicts the real behaviour;
//   - a drain hook runs on a raise only for a drain-eligible finding (node-local, never a PFC
//     storm victim, never maintenance), when the fleet-budget file is absent, when the last drain
//     request is older than `cooldown` and fewer than `max_drains_per_hour` were made in the
//     last hour;
//   - a resume (the drain hooks, event clear) runs only after every eligible finding that held
//     the node has cleared and stayed clear for `clear_hold_down`; a new eligible raise in that
//     window cancels it; only hooks that ran a drain are asked to resume;
//   - a drain-eligible finding on a port facing a switch listed in suspect_peers_file does not
//     drain (the fleet rules hold the switch suspect); with hold_drain_while_jobs, a
//     non-critical finding's drain waits while jobs hold its device open, then passes the same
//     gates when they end (or after max_drain_hold);
//   - with confirm_with_probe, a non-critical drain on an RDMA port waits for a probe of the port
//     (the ProbeRunner given), at most probe::ProbeAnswerWait from the probe's start (and a
//     bounded time in the runner's queue before it): failed or degraded drains; a
//     probe refused because jobs run holds the drain for them (max_drain_hold then drains it
//     unconfirmed); anything else suppresses it;
//   - notify hooks run on every matching transition, with none of the drain limits;
//   - every run has a timeout (SIGTERM to the process group, SIGKILL after the grace), its output
//     goes to the log, its result to fabricwatch_hook_runs_total{hook,result}.
// Ownership (resume only a node the hook itself drained) is the hook's job: it knows the
// scheduler's state (the Slurm reason prefix "fabricwatch:", the Kubernetes taint key).
//
// Thread-safety: DrainPolicy: none (the worker owns it). HookRunner: OnTransition(), Export(),
// Counts(), Wake() and WaitIdle() from any thread.

#include <spdlog/logger.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "collectors/core/collector.h"
#include "base/metric_sink.h"
#include "detectors/core/detector.h"
#include "exporter/probe/probe_runner.h"
#include "exporter/remediation/drain_policy.h"
#include "exporter/remediation/hook_config.h"
#include "exporter/remediation/hook_environment.h"
#include "exporter/remediation/process_launcher.h"

namespace fabricwatch::exporter {

class HookRunner {
 public:
  // `agent_env`: the agent's environment, for pass_env (main passes environ; tests a map).
  // `node_name`: empty resolves to config.node_name, then the short hostname.
  // `prober`: asked for the probes of hooks.confirm_with_probe (it must outlive the runner's
  // Stop()); null: every such probe is answered "disabled", so those drains are suppressed.
  HookRunner(HookConfig config, ProcessLauncher& launcher, const Clock& clock,
             std::shared_ptr<spdlog::logger> logger,
             std::map<std::string, std::string> agent_env = {}, CurrentJobs current_jobs = {},
             probe::ProbeRunner* prober = nullptr);
  ~HookRunner();  // Stop()
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  void Start();
  // Kills running hooks (SIGTERM to the process group, SIGKILL after at most kStopGrace; counted
  // as `cancelled`), drops queued events and runs, joins. Returns within about kStopGrace.
  void Stop();

  // Never blocks on a hook: queues the event for the worker. A full queue drops the event and
  // counts it in fabricwatch_hook_events_dropped_total.
  void OnTransition(const detect::AnomalyTransition& transition);
  // Re-checks timers now (tests that move an injected clock call it).
  void Wake();
  // Waits until the queue is empty and no hook runs; false on timeout. For tests and shutdown.
  bool WaitIdle(std::chrono::milliseconds timeout);

  // fabricwatch_hook_runs_total{hook,result}, fabricwatch_hook_dry_run,
  // fabricwatch_hook_drain_requested, fabricwatch_hook_drains_held,
  // fabricwatch_hook_drains_awaiting_probe, fabricwatch_hook_events_dropped_total; and the probe
  // runner's families when one was given.
  void Export(MetricSink& sink) const;
  // (hook, result) -> count, every configured hook and result present.
  std::map<std::pair<std::string, std::string>, uint64_t> Counts() const;

  const std::string& node_name() const { return node_name_; }
  static std::span<const MetricDesc> MetricDescs();

  static constexpr size_t kQueueCapacity = 1024;

 private:
  // One per configured hook: its queue of planned runs, run in order by its own thread.
  struct HookQueue {
    std::deque<PlannedRun> runs;
    std::condition_variable cv;
    bool running = false;
    std::thread thread;
  };

  void WorkerLoop();
  void HookLoop(size_t hook);
  void Execute(const HookPlan& plan);
  // Hands the plan's probe requests to the ProbeRunner; the answers come back through
  // probe_answers_ to the worker (DrainPolicy::OnProbeResult).
  void RequestProbes(const std::vector<ProbeRequest>& probes);
  void RunOne(const PlannedRun& run);
  bool IdleLocked() const;
  // The fleet-budget file and the suspect switches, read now (worker thread).
  DrainGates Gates();
  void Count(size_t hook, std::string_view result);

  const HookConfig config_;
  ProcessLauncher& launcher_;
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> log_;
  const std::map<std::string, std::string> agent_env_;
  std::string node_name_;
  DrainPolicy policy_;  // worker thread only
  probe::ProbeRunner* const prober_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<detect::AnomalyTransition> queue_;
  // Probe starts and answers for the worker, by FindingKey and request number;
  // `probes_outstanding_` counts the requests not yet answered and fed to the policy (WaitIdle
  // waits for them; the ProbeRunner answers every request, "stopped" when it stops first).
  struct ProbeAnswer {
    std::string key;
    uint64_t seq = 0;
    probe::ProbeReport report;
  };
  std::deque<std::pair<std::string, uint64_t>> probe_starts_;
  std::deque<ProbeAnswer> probe_answers_;
  size_t probes_outstanding_ = 0;
  bool stop_ = false;
  bool wake_ = false;
  bool busy_ = false;
  bool drain_requested_ = false;      // copy of policy_.drain_requested() for Export()
  size_t drains_held_ = 0;            // copy of policy_.drains_held() for Export()
  size_t drains_awaiting_probe_ = 0;  // copy of policy_.probes_pending() for Export()
  std::string suspect_peers_error_;   // the last one logged (worker thread)
  uint64_t dropped_ = 0;
  std::vector<std::map<std::string, uint64_t, std::less<>>> counts_;  // per hook
  std::vector<std::unique_ptr<HookQueue>> hook_queues_;               // per hook
  std::stop_source stop_hooks_;  // kills the running hooks on Stop()
  std::thread worker_;
};

}  // namespace fabricwatch::exporter
