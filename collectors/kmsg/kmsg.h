#pragma once
// Collector `kmsg`: fabric faults that only the driver's log shows (issue 23; docs/design.md
// §5.2, docs/reference.md §9). It reads the kernel log (/dev/kmsg, or a --path.kmsg replay file),
// matches each record against the pattern table (kmsg_patterns.h), maps it to the RDMA device and
// netdev it is about (kmsg_entity.h), and exports the counts (kmsg_metrics.h). The detectors get
// the matching lines themselves as log events (base/log_events.h).
//
// No kernel log (a replay root without --path.kmsg; /dev/kmsg that cannot be opened without
// CAP_SYSLOG, or in a container): one log line, then no data; everything else keeps working.

#include <memory>
#include <span>

#include "collectors/core/collector.h"
#include "collectors/core/collector_info.h"

namespace fabricwatch::kmsg {

// The kernel log: /dev/kmsg on the host's own /sys, or a replay file in its record format
// (--path.kmsg), read as it grows; a replay root without one has no kernel log.
inline constexpr SourceSpec kKernelLog{
    .name = "kmsg",
    .help =
        "Kernel log replay file in the /dev/kmsg record format, read as it grows (tests, the "
        "simulator, offline analysis)",
    .kind = SourceSpec::Kind::kFile,
    .host_path = "/dev/kmsg"};

std::span<const CollectorOptionSpec> KmsgOptions();
std::span<const SourceSpec> KmsgSources();
// CAP_SYSLOG for /dev/kmsg under kernel.dmesg_restrict=1.
std::span<const PrivilegeNeed> KmsgPrivileges();
std::span<const MetricDesc> KmsgMetrics();
Result<std::unique_ptr<Collector>> NewKmsgCollector(const CollectorContext& context);

}  // namespace fabricwatch::kmsg
