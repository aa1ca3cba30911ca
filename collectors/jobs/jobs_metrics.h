#pragma once
// The jobs collector's family (issue 24, docs/design.md §5.10): the scheduler jobs whose
// processes hold an RDMA device open, read by the detector engine's attribution and the status
// page.

#include "collectors/core/metric_sink.h"

namespace fabricwatch::jobs {

inline constexpr MetricDesc kDeviceJobInfo{
    "fabric_device_job_info",
    "A job with a process that holds the RDMA device open (/dev/infiniband/uverbsN): scheduler "
    "slurm (job id) or kubernetes (namespace/pod, or the pod UID) in job_id (not `job`, which is "
    "Prometheus's own target label). Constant 1.",
    MetricKind::kInfo,
    {"device", "scheduler", "job_id"}};

}  // namespace fabricwatch::jobs
