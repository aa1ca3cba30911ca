#include "collectors/jobs/jobs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectors/core/collector_options.h"
#include "base/value_parse.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/jobs/kubelet_client.h"
#include "collectors/jobs/pod_names.h"
#include "collectors/jobs/proc_jobs.h"
#include "collectors/sys/command.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::jobs {
namespace {

constexpr CollectorOptionSpec kOptions[] = {
    {"max-processes", "Processes a scan visits at most; the rest wait for the next scan", "20000"},
    {"time-budget",
     "Wall time of one scan at most (10,000 processes take 0.25-0.4 s on a 2-core VM; README "
     "\"Jobs on each device\")",
     "500ms"},
    {"max-jobs-per-device", "Jobs exported per RDMA device at most (bounded cardinality)", "32"},
    {"slurm-listpids",
     "Where Slurm runs without job cgroups (proctrack/linuxproc), attribute the device holders "
     "that no cgroup names with `scontrol listpids` (auto: when there are such holders and "
     "scontrol is in PATH; off)",
     "auto"},
    {"uverbs-dir", "Where the uverbs device nodes are (a replay directory in tests)",
     "/dev/infiniband"},
    {"kubelet",
     "Name pods (namespace/name) through the kubelet's GET /pods: auto (https://127.0.0.1:10250 "
     "when the agent reads this host's /proc and kubelet-token-file exists), off, or the "
     "kubelet's https:// URL (also with a --path.procfs replay); needs `get` on nodes/pods "
     "(nodes/proxy before Kubernetes 1.33)",
     "auto"},
    {"kubelet-token-file", "Bearer token for the kubelet, read at each request",
     "/var/run/secrets/kubernetes.io/serviceaccount/token"},
    {"kubelet-ca-file",
     "CA bundle that signs the kubelet's serving certificate (empty: the system's CA store)",
     "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"},
    {"kubelet-insecure-skip-verify",
     "Accept any kubelet certificate (its default one is self-signed): true or false", "false"},
    {"kubelet-timeout", "Timeout of the connection and of the whole request to the kubelet", "2s"},
};

constexpr MetricDesc kHolders{
    "fabric_device_processes",
    "Processes holding the RDMA device open (/dev/infiniband/uverbsN), in a job or not.",
    MetricKind::kGauge,
    {"device"}};
constexpr MetricDesc kScanSeconds{
    "fabric_jobs_scan_duration_seconds",
    "Wall time of the last scan of the processes, with the `scontrol listpids` run and the second "
    "pass it asks for when holders were in no job cgroup; 0 when the scan was skipped.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kScanSkipped{
    "fabric_jobs_scan_skipped",
    "1 when the last collection did not scan the processes, by reason: no_verbs_device (no "
    "uverbsN in uverbs-dir nor in class/infiniband_verbs: no process can hold an RDMA device). "
    "Absent when it scanned.",
    MetricKind::kGauge,
    {"reason"}};
constexpr MetricDesc kScanProcesses{
    "fabric_jobs_scan_processes",
    "Processes of the last scan by outcome: read, skipped (exited mid-scan or unreadable), "
    "unattributed (holding a device, in no job).",
    MetricKind::kGauge,
    {"outcome"}};
constexpr MetricDesc kScanTruncated{
    "fabric_jobs_scan_truncated",
    "1 when the last scan stopped at a limit (max-processes, time-budget): the jobs are those "
    "found until then.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kKubeletRequests{
    "fabric_jobs_kubelet_requests_total",
    "Requests to the kubelet for the names of pods (GET /pods) by outcome: success, no_token, "
    "connect, timeout, tls, unauthorized (401), forbidden (403: no `get` on nodes/pods, or "
    "nodes/proxy before Kubernetes 1.33), "
    "http_error, too_large, malformed, error. Only while the kubelet option is on.",
    MetricKind::kCounter,
    {"outcome"}};
constexpr MetricDesc kKubeletSkipped{
    "fabric_jobs_kubelet_pods_skipped",
    "Items of the kubelet's last pod list skipped as malformed (no valid uid, name or namespace).",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kMetrics[] = {kDeviceJobInfo,   kHolders,       kScanSeconds,
                                   kScanSkipped,     kScanProcesses, kScanTruncated,
                                   kKubeletRequests, kKubeletSkipped};

class JobsCollector final : public Collector {
 public:
  JobsCollector(const CollectorContext& context, std::string procfs, jobs::ScanLimits limits,
                size_t max_jobs, bool listpids, std::unique_ptr<PodNames> pods,
                std::string pods_off_reason)
      : sysfs_(context.sysfs),
        clock_(context.clock),
        logger_(context.logger),
        procfs_(std::move(procfs)),
        limits_(std::move(limits)),
        max_jobs_(max_jobs),
        listpids_(listpids),
        pods_(std::move(pods)),
        pods_off_reason_(std::move(pods_off_reason)) {}

  Status Collect(MetricSink& sink) override {
    if (procfs_.empty()) {
      if (!reported_) {
        logger_->info(
            "no procfs: --path.sysfs is a replay root and --path.procfs is not set; "
            "jobs are not attributed");
        reported_ = true;
      }
      return Status(StatusCode::kNoData, "no procfs");
    }
    // No verbs device, no holder: /proc is not read (issue 40 item 3).
    if (!HasVerbsDevice()) {
      sink.Add(kScanSkipped, {{"reason", "no_verbs_device"}}, 1);
      ExportScan(jobs::ScanStats{}, std::chrono::nanoseconds(0), sink);
      return Status::Ok();
    }
    const auto started = Now();
    auto scan = jobs::ScanDeviceJobs(sysfs_.fs(), procfs_, sysfs_, limits_);
    if (!scan) return scan.error();
    // Holders no cgroup names: a Slurm without job cgroups knows them (scontrol listpids). Asked
    // only when there are such holders, then the scan is done again with the answer.
    if (listpids_ && scan->stats.unattributed > 0) {
      if (auto pids = ListPids()) {
        auto again = jobs::ScanDeviceJobs(sysfs_.fs(), procfs_, sysfs_, limits_, &*pids);
        if (again) scan = std::move(again);
      }
    }
    const auto elapsed = Now() - started;
    NamePods(*scan);
    for (const auto& [device, jobs] : scan->jobs) {
      size_t n = 0;
      for (const jobs::Job& job : jobs) {
        if (n++ == max_jobs_) break;
        const jobs::PodName* pod =
            job.scheduler == jobs::Scheduler::kKubernetes && pods_ ? pods_->Find(job.id) : nullptr;
        const std::string job_id = pod ? pod->pod_namespace + "/" + pod->name : job.id;
        sink.AddInfo(kDeviceJobInfo, {{"device", device},
                                      {"scheduler", jobs::SchedulerName(job.scheduler)},
                                      {"job_id", job_id},
                                      {"pod_namespace", pod ? pod->pod_namespace : ""},
                                      {"pod_name", pod ? pod->name : ""}});
      }
    }
    for (const auto& [device, count] : scan->processes) {
      sink.Add(kHolders, {{"device", device}}, static_cast<double>(count));
    }
    ExportScan(scan->stats, elapsed, sink);
    return Status::Ok();
  }

 private:
  // What the scan cost: its wall time, and the processes it visited.
  void ExportScan(const jobs::ScanStats& s, std::chrono::nanoseconds elapsed, MetricSink& sink) {
    sink.Add(kScanSeconds, {}, std::chrono::duration<double>(elapsed).count());
    sink.Add(kScanProcesses, {{"outcome", "read"}}, static_cast<double>(s.processes_read));
    sink.Add(kScanProcesses, {{"outcome", "skipped"}}, static_cast<double>(s.skipped()));
    sink.Add(kScanProcesses, {{"outcome", "unattributed"}}, static_cast<double>(s.unattributed));
    sink.Add(kScanTruncated, {}, s.truncated ? 1 : 0);
    if (pods_) {
      for (const jobs::KubeletOutcome outcome : jobs::kKubeletOutcomes) {
        sink.Add(kKubeletRequests, {{"outcome", jobs::KubeletOutcomeName(outcome)}},
                 static_cast<double>(pods_->Requests(outcome)));
      }
      sink.Add(kKubeletSkipped, {}, static_cast<double>(pods_->SkippedItems()));
    }
  }

  std::chrono::steady_clock::time_point Now() const {
    return limits_.clock ? limits_.clock() : std::chrono::steady_clock::now();
  }

  // Whether a process can hold an RDMA device file: a uverbsN node in uverbs-dir (what
  // ib_uverbs registers, drivers/infiniband/core/uverbs_main.c, and udev creates), or a uverbsN
  // in the sysfs root's class/infiniband_verbs (the same devices, where the agent's container
  // does not see /dev/infiniband, and a replay root's). Two directory listings per collection.
  bool HasVerbsDevice() {
    const auto has_uverbs = [this] {
      return std::any_of(names_.begin(), names_.end(),
                         [](const std::string& name) { return name.starts_with("uverbs"); });
    };
    if (sysfs_.fs().ListDirInto(limits_.uverbs_dir, names_).ok() && has_uverbs()) return true;
    return sysfs_.ListDirInto("class/infiniband_verbs", names_).ok() && has_uverbs();
  }
  // The names of the pods the scan found, from the kubelet (PodNames asks it only for new pods).
  void NamePods(const jobs::DeviceJobs& scan) {
    std::set<std::string, std::less<>> uids;
    for (const auto& [device, jobs] : scan.jobs) {
      for (const jobs::Job& job : jobs) {
        if (job.scheduler == jobs::Scheduler::kKubernetes) uids.insert(job.id);
      }
    }
    if (uids.empty()) return;
    if (!pods_) {
      // Said once, when it first matters: pods are on the devices and stay UIDs.
      if (!std::exchange(said_pods_off_, true)) {
        logger_->info("pods are exported by UID: {}", pods_off_reason_);
      }
      return;
    }
    pods_->Update(uids, clock_.Now());
  }

  std::optional<jobs::PidJobMap> ListPids() {
    auto out = sys::RunCommand({"scontrol", "listpids"}, std::chrono::seconds(2));
    if (!out) {
      // No Slurm here, or slurmd not answering: said once; the holders stay unattributed.
      if (!std::exchange(said_listpids_, true)) {
        logger_->info("device holders in no job cgroup stay unattributed: {}",
                      out.error().ToString());
      }
      return std::nullopt;
    }
    auto pids = jobs::ParseScontrolListpids(*out);
    if (!pids) {
      logger_->debug("scontrol listpids: {}", pids.error().ToString());
      return std::nullopt;
    }
    return std::move(*pids);
  }

  const sys::SysFs& sysfs_;
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  std::string procfs_;
  jobs::ScanLimits limits_;
  size_t max_jobs_;
  bool listpids_;
  std::unique_ptr<PodNames> pods_;  // null: the kubelet is not asked
  std::string pods_off_reason_;
  std::vector<std::string> names_;  // a directory listing, its strings reused
  bool reported_ = false;
  bool said_listpids_ = false;
  bool said_pods_off_ = false;
};

// The kubelet client's configuration from the kubelet options, or nullopt with the reason why
// pods are not named (`off`, or `auto` where it does not apply). `host_proc`: the scan reads this
// host's /proc, so the pods are this node's kubelet's.
Result<std::optional<jobs::KubeletConfig>> KubeletConfigOf(const CollectorOptionReader& options,
                                                           bool host_proc,
                                                           std::string& off_reason) {
  jobs::KubeletConfig config;
  config.token_file = options.Value("kubelet-token-file");
  config.ca_file = options.Value("kubelet-ca-file");
  const std::string insecure = options.Value("kubelet-insecure-skip-verify");
  if (insecure != "true" && insecure != "false") {
    return Error(StatusCode::kInvalidArgument, options.Flag("kubelet-insecure-skip-verify") +
                                                   ": want true or false, got '" + insecure + "'");
  }
  config.insecure_skip_verify = insecure == "true";
  auto timeout = options.Duration("kubelet-timeout");
  if (!timeout) return Error(timeout.error());
  if (*timeout <= std::chrono::milliseconds(0) || *timeout > std::chrono::seconds(30)) {
    return Error(
        StatusCode::kInvalidArgument,
        options.Flag("kubelet-timeout") + ": want between 1ms and 30s (the scan interval)");
  }
  config.timeout = *timeout;
  if (config.token_file.empty()) {
    return Error(StatusCode::kInvalidArgument, options.Flag("kubelet-token-file") + " is empty");
  }
  std::string url = options.Value("kubelet");
  if (url == "off") {
    off_reason = options.Flag("kubelet") + "=off";
    return std::optional<jobs::KubeletConfig>();
  }
  if (url == "auto") {
    std::error_code ec;
    if (!host_proc) {
      off_reason = options.Flag("kubelet") + "=auto asks only for this host's /proc";
      return std::optional<jobs::KubeletConfig>();
    }
    if (!std::filesystem::exists(config.token_file, ec)) {
      off_reason = "no kubelet token at " + config.token_file + " (" + options.Flag("kubelet") +
                   "=auto; the agent does not run in a pod with a ServiceAccount token)";
      return std::optional<jobs::KubeletConfig>();
    }
    return std::optional<jobs::KubeletConfig>(std::move(config));  // the default URL
  }
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  if (Status valid = jobs::ValidateKubeletUrl(url); !valid.ok()) {
    return Error(
        StatusCode::kInvalidArgument,
        options.Flag("kubelet") + ": want auto, off or an https:// URL; " + valid.message());
  }
  config.url = std::move(url);
  return std::optional<jobs::KubeletConfig>(std::move(config));
}

}  // namespace

std::span<const CollectorOptionSpec> JobsOptions() { return kOptions; }

std::span<const SourceSpec> JobsSources() {
  static constexpr SourceSpec kSources[] = {kProcfs};
  return kSources;
}
std::span<const MetricDesc> JobsMetrics() { return kMetrics; }

namespace {

// The agent's own pid as `procfs` numbers it, to leave it out of the scan (jobs::ScanLimits
// exclude_pid): <procfs>/self links to the reader's pid in that procfs's pid namespace (proc(5)),
// so the host's /proc mounted at /host/proc in a container gives the agent's host pid. A replay
// tree has no such link: 0, nothing left out.
int64_t OwnPidIn(const std::string& procfs) {
  if (procfs.empty()) return 0;
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink(procfs + "/self", ec).string();
  if (ec) return 0;
  int64_t pid = 0;
  const auto [end, parse] = std::from_chars(self.data(), self.data() + self.size(), pid);
  return parse == std::errc() && end == self.data() + self.size() && pid > 0 ? pid : 0;
}

}  // namespace

Result<std::unique_ptr<Collector>> NewJobsCollector(const CollectorContext& context) {
  const CollectorOptionReader options("jobs", context.options, kOptions);
  jobs::ScanLimits limits;
  auto max_processes = ParseUint64(options.Value("max-processes"), options.Flag("max-processes"));
  if (!max_processes) return Error(max_processes.error());
  auto budget = options.Duration("time-budget");
  if (!budget) return Error(budget.error());
  auto max_jobs =
      ParseUint64(options.Value("max-jobs-per-device"), options.Flag("max-jobs-per-device"));
  if (!max_jobs) return Error(max_jobs.error());
  if (*max_processes == 0 || *max_jobs == 0) {
    return Error(StatusCode::kInvalidArgument, options.Flag("max-processes") + " and " +
                                                   options.Flag("max-jobs-per-device") +
                                                   " must be at least 1");
  }
  const std::string listpids = options.Value("slurm-listpids");
  if (listpids != "auto" && listpids != "off") {
    return Error(StatusCode::kInvalidArgument,
                 options.Flag("slurm-listpids") + ": want auto or off, got '" + listpids + "'");
  }
  limits.uverbs_dir = options.Value("uverbs-dir");
  while (limits.uverbs_dir.size() > 1 && limits.uverbs_dir.back() == '/') {
    limits.uverbs_dir.pop_back();
  }
  limits.max_processes = *max_processes;
  limits.time_budget = *budget;
  // The scan's budget and its reported duration run on the collector's clock (tests and goldens
  // inject it).
  limits.clock = [clock = &context.clock] {
    return std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            clock->Now().time_since_epoch()));
  };
  // /proc of this host only when the sysfs root is this host's (kProcfs).
  const std::string procfs = context.roots.PathOf(kProcfs);
  // scontrol's pids are this host's: asked only when the scan reads this host's /proc.
  std::error_code ec;
  const bool host_proc = !procfs.empty() && std::filesystem::equivalent(procfs, "/proc", ec);
  limits.exclude_pid = OwnPidIn(procfs);
  std::string pods_off_reason;
  auto kubelet = KubeletConfigOf(options, host_proc, pods_off_reason);
  if (!kubelet) return Error(kubelet.error());
  std::unique_ptr<PodNames> pods;
  if (*kubelet) {
    auto client = std::make_shared<const jobs::KubeletClient>(std::move(**kubelet));
    pods = std::make_unique<PodNames>([client] { return client->GetPods(); }, context.logger);
  }
  return std::unique_ptr<Collector>(new JobsCollector(context, std::move(procfs), std::move(limits),
                                                      *max_jobs, listpids == "auto" && host_proc,
                                                      std::move(pods), std::move(pods_off_reason)));
}

}  // namespace fabricwatch::jobs
