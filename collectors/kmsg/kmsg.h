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

std::span<const CollectorOptionSpec> KmsgOptions();
std::span<const MetricDesc> KmsgMetrics();
Result<std::unique_ptr<Collector>> NewKmsgCollector(const CollectorContext& context);

}  // namespace fabricwatch::kmsg
