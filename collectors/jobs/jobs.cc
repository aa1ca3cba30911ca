#include "collectors/jobs/jobs.h"

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "collectors/core/collector_options.h"
#include "collectors/core/value_parse.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/sys/command.h"
#include "collectors/sys/proc_jobs.h"
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
};

constexpr MetricDesc kHolders{
    "fabric_device_processes",
    "Processes holding the RDMA device open (/dev/infiniband/uverbsN), in a job or not.",
    MetricKind::kGauge,
    {"device"}};
constexpr MetricDesc kScanSeconds{"fabric_jobs_scan_duration_seconds",
                                  "Wall time of the last scan of the processes.",
                                  MetricKind::kGauge,
                                  {}};
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
constexpr MetricDesc kMetrics[] = {kDeviceJobInfo, kHolders, kScanSeconds, kScanProcesses,
                                   kScanTruncated};

class JobsCollector final : public Collector {
 public:
  JobsCollector(const CollectorContext& context, std::string procfs, sys::ScanLimits limits,
                size_t max_jobs, bool listpids)
      : sysfs_(context.sysfs),
        logger_(context.logger),
        procfs_(std::move(procfs)),
        limits_(std::move(limits)),
        max_jobs_(max_jobs),
        listpids_(listpids) {}

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
    auto scan = sys::ScanDeviceJobs(sysfs_.fs(), procfs_, sysfs_, limits_);
    if (!scan) return scan.error();
    // Holders no cgroup names: a Slurm without job cgroups knows them (scontrol listpids). Asked
    // only when there are such holders, then the scan is done again with the answer.
    if (listpids_ && scan->stats.unattributed > 0) {
      if (auto pids = ListPids()) {
        auto again = sys::ScanDeviceJobs(sysfs_.fs(), procfs_, sysfs_, limits_, &*pids);
        if (again) scan = std::move(again);
      }
    }
    for (const auto& [device, jobs] : scan->jobs) {
      size_t n = 0;
      for (const sys::Job& job : jobs) {
        if (n++ == max_jobs_) break;
        sink.AddInfo(kDeviceJobInfo, {{"device", device},
                                      {"scheduler", sys::SchedulerName(job.scheduler)},
                                      {"job_id", job.id}});
      }
    }
    for (const auto& [device, count] : scan->processes) {
      sink.Add(kHolders, {{"device", device}}, static_cast<double>(count));
    }
    const sys::ScanStats& s = scan->stats;
    sink.Add(kScanSeconds, {}, std::chrono::duration<double>(s.elapsed).count());
    sink.Add(kScanProcesses, {{"outcome", "read"}}, static_cast<double>(s.processes_read));
    sink.Add(kScanProcesses, {{"outcome", "skipped"}}, static_cast<double>(s.skipped()));
    sink.Add(kScanProcesses, {{"outcome", "unattributed"}}, static_cast<double>(s.unattributed));
    sink.Add(kScanTruncated, {}, s.truncated ? 1 : 0);
    return Status::Ok();
  }

 private:
  std::optional<sys::PidJobMap> ListPids() {
    auto out = sys::RunCommand({"scontrol", "listpids"}, std::chrono::seconds(2));
    if (!out) {
      // No Slurm here, or slurmd not answering: said once; the holders stay unattributed.
      if (!std::exchange(said_listpids_, true)) {
        logger_->info("device holders in no job cgroup stay unattributed: {}",
                      out.error().ToString());
      }
      return std::nullopt;
    }
    auto pids = sys::ParseScontrolListpids(*out);
    if (!pids) {
      logger_->debug("scontrol listpids: {}", pids.error().ToString());
      return std::nullopt;
    }
    return std::move(*pids);
  }

  const sys::SysFs& sysfs_;
  std::shared_ptr<spdlog::logger> logger_;
  std::string procfs_;
  sys::ScanLimits limits_;
  size_t max_jobs_;
  bool listpids_;
  bool reported_ = false;
  bool said_listpids_ = false;
};

}  // namespace

std::span<const CollectorOptionSpec> JobsOptions() { return kOptions; }
std::span<const MetricDesc> JobsMetrics() { return kMetrics; }

Result<std::unique_ptr<Collector>> NewJobsCollector(const CollectorContext& context) {
  const CollectorOptionReader options("jobs", context.options, kOptions);
  sys::ScanLimits limits;
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
  // /proc of this host only when the sysfs root is this host's: a replay root's devices are not
  // the ones this host's processes hold.
  std::string procfs = !context.procfs_path.empty() ? context.procfs_path
                       : context.host               ? std::string("/proc")
                                                    : std::string();
  // scontrol's pids are this host's: asked only when the scan reads this host's /proc.
  std::error_code ec;
  const bool host_proc = !procfs.empty() && std::filesystem::equivalent(procfs, "/proc", ec);
  return std::unique_ptr<Collector>(new JobsCollector(context, std::move(procfs), std::move(limits),
                                                      *max_jobs, listpids == "auto" && host_proc));
}

}  // namespace fabricwatch::jobs
