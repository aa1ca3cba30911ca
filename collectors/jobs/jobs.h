#pragma once
// Collector `jobs`: the scheduler jobs whose processes hold an RDMA device open (issue 24,
// docs/design.md §5.10), exported as fabric_device_job_info (collectors/jobs/jobs_metrics.h) for
// the detector engine's attribution. The scan (collectors/jobs/proc_jobs.h) reads <procfs>/*/fd
// for /dev/infiniband/uverbsN links and the holders' cgroups (Slurm job_<id>, kubepods pod UID),
// bounded in processes and time; it runs every `interval` (30 s) and at once when a finding is
// raised (the agent wakes it). Without a procfs (a replay sysfs root and no --path.procfs) it
// reports no data; without a verbs device (no uverbsN in uverbs-dir nor class/infiniband_verbs)
// it reads no /proc and says so (fabric_jobs_scan_skipped). `scontrol listpids` runs only when a
// scan found holders that no job cgroup names.

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::jobs {

// /proc: this host's on its own /sys, or a replay root shaped like it (--path.procfs). A replay
// sysfs root's devices are not the ones this host's processes hold, so it never reads /proc.
inline constexpr SourceSpec kProcfs{
    .name = "procfs",
    .help = "procfs mount point, or a replay root shaped like /proc (<pid>/cgroup, <pid>/fd/*)",
    .host_path = "/proc"};

std::span<const CollectorOptionSpec> JobsOptions();
std::span<const SourceSpec> JobsSources();
std::span<const MetricDesc> JobsMetrics();
Result<std::unique_ptr<Collector>> NewJobsCollector(const CollectorContext& context);

}  // namespace fabricwatch::jobs
