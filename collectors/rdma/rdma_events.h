#pragma once
// The libibverbs port-event families of collector `rdma`: the asynchronous port events the
// listener (collectors/sys/verbs_events.h) counts as they happen, between samples, the time of
// each port's last event, and the listener's own state. Port state polled from sysfs is rdma.cc's.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <tuple>

#include "base/metric_sink.h"
#include "collectors/sys/verbs_events.h"

namespace fabricwatch::rdma {

// Event counts by (device, port, event), as RdmaPortEventLog::Counts() gives them.
using PortEventCounts = std::map<std::tuple<std::string, int, std::string>, uint64_t>;

// The families EmitPortEvents() fills, for the metric reference.
std::span<const MetricDesc> PortEventMetrics();

// Emits the listener's state from `log`, one event counter per entry of `counts` (the log's counts
// with the collector's own ports added at zero) and the last event time of each port in `log`.
void EmitPortEvents(const sys::RdmaPortEventLog& log, const PortEventCounts& counts,
                    MetricSink& sink);

}  // namespace fabricwatch::rdma
