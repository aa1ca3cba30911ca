#pragma once
// The probe runner's policy (issue 37 part 3), as pure functions of the request, the port's last
// result, the jobs on its device and the configuration, so that every rule is tested without a
// thread or a device (exporter/probe/probe_runner.h applies them):
//   - probe.enabled false: refused ("disabled");
//   - a healthy, degraded or failed result of the port younger than probe.min_interval:
//     answered from it (cached), so a flapping finding cannot turn into a stream of probes that
//     move real traffic; an unavailable result is never reused (the probe could not run: it
//     says nothing of the port, and reusing it would suppress drains for the interval);
//   - a running job holds the port's RDMA device open, or on the pair path the partner's (the
//     traffic crosses both; the jobs collector's fabric_device_job_info, as attribution reads
//     it: detectors/core/attribution.h) and not probe.allow_with_jobs: refused
//     ("jobs_running"); the probe would steal the job's bandwidth and its result would be the
//     job's traffic as much as the port's;
//   - otherwise measured.
// The verdict's expected rate: the port's expected shape (link_degraded's manifest or learned
// expectation) first, else the rate the port reports (fabric_rdma_port_rate_bytes_per_second).
//
// Thread-safety: values only.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporter/probe/probe.h"
#include "exporter/probe/probe_config.h"

namespace fabricwatch::probe {

using ProbeTime = std::chrono::system_clock::time_point;  // the agent's Clock

// The values of the `reason` label of fabricwatch_probe_refused_total.
inline constexpr std::string_view kProbeRefusedReasons[] = {
    "disabled",      // probe.enabled is false
    "jobs_running",  // a running job holds the port's device open (probe.allow_with_jobs false)
    "queue_full",    // more ports waiting than the runner keeps (ProbeRunner::kQueueCapacity)
    "stopped",       // the agent stopped before the probe ran
};
// The values of the `result` label of fabricwatch_probe_runs_total: every ProbeOutcome name
// ("ok", "port_down", "error", "timeout", "unsupported") and "cached" (answered from the last
// result inside probe.min_interval).
inline constexpr std::string_view kProbeRunResults[] = {
    "ok", "port_down", "error", "timeout", "unsupported", "setup_error", "cached"};

// The agent measures in a child process (process_prober.h), killed at options.timeout plus this
// margin: the probe's own clean-up after its timeout (waiting for flushed work requests, the
// driver destroying QPs, CQs and MRs) must not be mistaken for a hang.
inline constexpr std::chrono::milliseconds kProbeProcessMargin{3000};

// How long a drain waits for the answer to its probe (DrainPolicy, hooks.confirm_with_probe),
// counted from the probe's start (ProbeRunner's `started` callback): the probe's own bound
// (timeout + kProbeProcessMargin) twice, plus 5 s for the answer's way back. Before its start a
// request waits in the queue at most this for every request awaited and not yet started when it
// was asked, its own included. Past either the drain is suppressed_probe_unconfirmed.
std::chrono::milliseconds ProbeAnswerWait(const ProbeOptions& options);

// What a request is answered with.
struct ProbeReport {
  PortRef port;
  std::string reason;  // why it was asked for ("drain confirmation: link_flap warning ...")
  // "" when measured or cached; else one of kProbeRefusedReasons, and `detail` says why.
  std::string refused;
  std::string detail;
  bool cached = false;  // the last result of the port, inside probe.min_interval
  ProbeMeasurement measurement;
  ProbeVerdict verdict = ProbeVerdict::kUnavailable;
  double expected_bits_per_second = 0;  // 0: unknown
  ProbeTime time{};                     // when the measurement finished

  bool measured() const { return refused.empty(); }
};

enum class ProbeAction { kMeasure, kCached, kRefuse };

struct ProbeDecision {
  ProbeAction action = ProbeAction::kMeasure;
  std::string_view refused;  // kRefuse: one of kProbeRefusedReasons
  std::string detail;        // kRefuse: one line, names the port and why
};

// `last`: the port's last measured report, if any (one with an unavailable verdict is ignored);
// `jobs`: the jobs holding open the devices the probe's traffic crosses (the port's, and the
// partner's on the pair path), nullopt when unknown (jobs collector off or not yet reported: no job
// is known to be hurt, so the probe runs); `partner`: the pair path's far end, named in the
// refusal.
ProbeDecision DecideProbe(const ProbeConfig& config, const PortRef& port, ProbeTime now,
                          const ProbeReport* last,
                          const std::optional<std::vector<std::string>>& jobs,
                          const std::optional<PortRef>& partner = std::nullopt);

// The expected rate ClassifyProbe compares with, in bits per second: the expected shape's rate
// (Gb/s) when known and > 0, else the port's reported rate (bytes per second), else 0 (unknown:
// any kOk is healthy).
double ExpectedProbeRate(std::optional<double> shape_rate_gbps,
                         std::optional<double> reported_bytes_per_second);

// "mlx5_0/1".
std::string PortText(const PortRef& port);
// "mlx5_0/1" -> {mlx5_0, 1}: a device name without '/' or blanks and a port 1..255.
std::optional<PortRef> ParsePortText(std::string_view text);

// The probe's values as a finding's evidence (detectors/core/detector.h Evidence):
// probe_bandwidth_bytes_per_second, probe_latency_seconds (median) and probe_verdict (the code
// of ProbeVerdictCode); bandwidth and latency only when data moved.
struct ProbeEvidenceValue {
  std::string_view name;
  double value;
};
std::vector<ProbeEvidenceValue> ProbeEvidence(const ProbeReport& report);
// 0 healthy, 1 degraded, 2 failed, 3 unavailable: the value of the probe_verdict evidence.
int ProbeVerdictCode(ProbeVerdict verdict);

}  // namespace fabricwatch::probe
