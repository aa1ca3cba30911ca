#pragma once
// The jobs collector's family (issue 24, docs/design.md §5.10): the scheduler jobs whose
// processes hold an RDMA device open, read by the detector engine's attribution and the status
// page.

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::jobs {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.jobs and in Snapshot::collector.
inline constexpr std::string_view kCollector = "jobs";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr Family kDeviceJobInfo{
    "fabric_device_job_info",
    "A job with a process that holds the RDMA device open (/dev/infiniband/uverbsN): scheduler "
    "slurm (job id) or kubernetes (namespace/name when the kubelet named the pod, else the pod "
    "UID) in job_id (not `job`, which is Prometheus's own target label); a named pod's namespace "
    "and name also in pod_namespace and pod_name (not `namespace` and `pod`, the target labels "
    "of a scrape through Kubernetes service discovery), empty otherwise. Constant 1.",
    MetricKind::kInfo,
    {"device", "scheduler", "job_id", "pod_namespace", "pod_name"}};

}  // namespace fabricwatch::jobs
